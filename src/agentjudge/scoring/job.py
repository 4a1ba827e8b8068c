"""The scoring job: trees -> step requests -> judge -> categorization -> aggregation.

Steps of every node of every tree are judged concurrently; the judge client bounds how
many calls are in flight, `trajectory_concurrency_limit` how many root trees. Under
`fail_fast` the first node that cannot be scored cancels the rest and fails the job; under
`skip_failed_trajectory` it is kept as `failed`. Past the job's `deadline` (the judging
phase's bound, `--judge-timeout`) no call is made and the calls in flight are cut: the nodes
left unjudged are `failed` (reason `judge_timeout`) whatever the policy, the rest is kept,
and the job is incomplete.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from agentjudge.atif import Node
from agentjudge.errors import InputError
from agentjudge.judge import JudgeClient, JudgeOutcome, JudgeRequest
from agentjudge.judge.price import COST_CAP, SPENDING, Spending
from agentjudge.judge.samples import sampled_score
from agentjudge.judge.taxonomy import UNCATEGORIZED
from agentjudge.scoring.aggregate import (
    NodeOutcome,
    aggregate_tree,
    collection_metrics,
)
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import Criteria, Rubric, derived_rubric
from agentjudge.scoring.decisive import DecisiveFailure, NoDecisive
from agentjudge.scoring.decisive_pick import decisive_failure
from agentjudge.scoring.estimate import judge_budget
from agentjudge.scoring.invalid import input_problems, invalid_input_message
from agentjudge.scoring.plan import (
    CONTEXT_OVERFLOW,
    NodePlan,
    PromptBudget,
    derive_request,
    plan_node,
    step_chars,
    step_system,
    trajectory_cache_group,
)
from agentjudge.scoring.sampled import (
    chunks,
    majority_category,
    mean_scores,
    per_step,
    sample_score,
)
from agentjudge.scoring.scored import (
    Accounting,
    CategorizationStatus,
    JobResult,
    StepDetail,
    TreeResult,
    first_error,
)
from agentjudge.scoring.second_round import SecondRound, worth_another_try
from agentjudge.scoring.step_budget import Grant, StepBudget
from agentjudge.scoring.steps import FileCache, NodeSteps, StepView, node_steps
from agentjudge.traces.staging import load_runs

# Steps of trees being judged at once, per call the judge client takes at once: enough
# queued requests that calls never wait for a tree to be planned (see step_budget.py).
QUEUED_STEPS_PER_CALL = 8
# the error of a call the judging phase's deadline cut or never made, and the reason of a
# node it left unjudged
JUDGE_TIMEOUT = "judge_timeout"
# the ends of judging that keep what was judged: the deadline, and --max-cost reached
KEEP_JUDGED = (JUDGE_TIMEOUT, COST_CAP)


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a `fail_fast` job failed: a fixed error type, and the judge's explanation."""

    reason: str
    message: str | None = None


class _FailFast(Exception):
    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.message = message


def load_roots(config: ScoreConfig) -> list[Node]:
    """Every root tree of a job (validated and linked), before any judge call."""
    trees, _ = load_runs(config.trajectory_path, config.limits(), config.trace_format)
    return list(trees)


@dataclass
class ScoringJob:
    """One run of `agentjudge score` (or the eval-hub adapter) over a collection."""

    config: ScoreConfig
    criteria: Criteria
    client: JudgeClient
    on_step: Callable[[int], None] = field(default=lambda _: None)
    # where a tree's files are read (a job on Ray reads the bytes the driver sent)
    files: Callable[[], FileCache] = FileCache
    accounting: Accounting = field(default_factory=Accounting)
    # the judging phase's end, as `time.time()` (a Ray worker's clock reads the driver's
    # deadline so): past it no call is made, those in flight are cut. None: no bound
    deadline: float | None = None
    second_round: SecondRound = field(init=False)
    _loop_deadline: float | None = field(default=None, init=False)
    _systems: dict[Rubric, str] = field(default_factory=dict)
    _derived: dict[str, asyncio.Future[Rubric]] = field(default_factory=dict)
    # what a step's prompt may take of the judge's context (None: no context window known)
    budget: PromptBudget | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.second_round = SecondRound(self.config.judge_retry_round_pause_seconds)
        client = self.client
        self.budget = judge_budget(self.config, client.provider, client.pricer.context_window)

    def _system(self, rubric: Rubric) -> str:
        system = self._systems.get(rubric)
        if system is None:
            shape = self.criteria.answer_shape
            system = self._systems[rubric] = step_system(rubric, self.config.judge, shape)
        return system

    def steps_to_judge(self, roots: Sequence[Node]) -> int:
        """How many steps the job will go through (the progress bar's total; with
        `scored_frames=agent` some of them are skipped rather than judged)."""
        return sum(self.tree_steps(root) for root in roots)

    def tree_steps(self, root: Node) -> int:
        """The steps of `root`'s tree the job goes through (see `steps_to_judge`)."""
        return sum(
            node.steps
            for node in root.walk()
            if not node.problems and node.depth <= self.config.max_subagent_depth
        )

    def step_budget(self) -> StepBudget:
        """Steps planned ahead: a few per call the judge client takes at once; in batch
        mode, a whole batch's worth (the provider's limit of requests in one)."""
        if self.client.batcher is not None:
            return StepBudget(self.client.batcher.api.max_requests)
        return StepBudget(QUEUED_STEPS_PER_CALL * self.client.concurrency)

    async def run(self, roots: Sequence[Node]) -> JobResult:
        trees, failure = await self.judge_trees(roots)
        return self.result(trees, failure)

    async def judge_trees(self, roots: Sequence[Node]) -> tuple[list[TreeResult], Failure | None]:
        """Every root's tree judged and aggregated (in `roots`' order), or, under
        `fail_fast`, no trees and why the job failed. A job on Ray runs this on its workers,
        one unit of roots each (see distributed/)."""
        if self.config.partial_result_policy == "fail_fast":
            # known before any call: fail now, naming every bad file, not at the first
            # invalid node met while other trees are being judged
            invalid = invalid_input_message(input_problems(roots))
            if invalid is not None:
                return [], Failure("invalid_input", invalid)
        if self.deadline is not None:  # the event loop's clock is the one timeouts read
            loop = asyncio.get_running_loop()
            self._loop_deadline = loop.time() + (self.deadline - time.time())
        budget = self.step_budget()
        limit = self.config.trajectory_concurrency_limit
        # roots in flight: the job's bound, else as many as the step budget lets in
        trees_at_once = asyncio.Semaphore(limit if limit is not None else len(roots) or 1)

        async def one(root: Node) -> TreeResult:
            async with trees_at_once:
                grant = await budget.grant(self.tree_steps(root))
                try:
                    return await self._score_tree(root, grant)
                finally:
                    grant.close()

        failure: Failure | None = None
        trees: list[TreeResult] = []
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(root)) for root in roots]
            trees = [task.result() for task in tasks]
        except* _FailFast as caught:
            first = caught.exceptions[0]
            assert isinstance(first, _FailFast)
            failure = Failure(first.reason, first.message)
        self.accounting.second_round_steps = self.second_round.steps
        self.accounting.second_round_recovered = self.second_round.recovered
        return trees, failure

    def result(self, trees: list[TreeResult], failure: Failure | None) -> JobResult:
        """The job's result from its judged trees: the collection's metrics, or why it
        failed (pure: a job on Ray aggregates its workers' trees here, as a local one)."""
        failed = failure.reason if failure is not None else None
        message = failure.message if failure is not None else None
        metrics = None
        if failed is None:
            if not trees:
                failed = "no_trajectories"
            elif all(t.aggregates[0].status != "scored" for t in trees):
                failed = "all_roots_failed"
            else:
                metrics = collection_metrics(
                    [t.aggregates for t in trees], self.config.subagent_aggregation
                )
                if metrics.overall_score is None:
                    failed = "nothing_scored"
        complete = failed is None and all(
            a.status == "scored" and a.complete for t in trees for a in t.aggregates
        )
        if message is None and failed is not None:
            message = first_error(trees) or invalid_input_message(
                input_problems(t.root for t in trees)
            )
        return JobResult(
            trees, metrics if failed is None else None, failed, complete, self.accounting, message
        )

    async def _score_tree(self, root: Node, grant: Grant) -> TreeResult:
        files = self.files()
        nodes = list(root.walk())
        # this task's context (each root is judged in a task of its own): every call made
        # for the tree, in the tasks spawned below, adds its price to `spending`
        spending = Spending()
        SPENDING.set(spending)
        results = await asyncio.gather(*(self._score_node(node, files, grant) for node in nodes))
        outcomes = {node.id: r[0] for node, r in zip(nodes, results, strict=True)}
        steps = {node.id: r[1] for node, r in zip(nodes, results, strict=True)}
        rubrics = {node.id: r[2] for node, r in zip(nodes, results, strict=True) if r[2]}
        criteria = {key: tuple(c.name for c in r.criteria) for key, r in rubrics.items()}
        aggregates = aggregate_tree(root, outcomes, self.config.completion_threshold)
        tree = TreeResult(root, aggregates, steps, criteria, rubrics=rubrics)
        found = await self._decisive(tree, files)
        if isinstance(found, DecisiveFailure):
            tree.decisive = found
        else:
            tree.decisive_absent = found
        tree.cost_usd = spending.usd
        return tree

    async def _decisive(
        self, tree: TreeResult, files: FileCache
    ) -> DecisiveFailure | NoDecisive | None:
        """Where the tree's root went wrong, once its steps and categories are judged."""
        config = self.config
        return await decisive_failure(
            tree,
            files,
            config.decisive_rule,
            config.failure_threshold,
            self._pick,
            config.judge_temperature,
            every_root=config.decisive_roots == "all",
        )

    async def _pick(self, requests: list[JudgeRequest]) -> list[JudgeOutcome]:
        self.accounting.decisive_picks += len(requests)
        self.second_round.started()
        try:
            return await self._judge_all(requests)
        finally:
            self.second_round.finished()

    async def _score_node(
        self, node: Node, files: FileCache, grant: Grant
    ) -> tuple[NodeOutcome, list[StepDetail], Rubric | None]:
        if node.problems:
            return self._fail(node, "invalid_input"), [], None
        if node.depth > self.config.max_subagent_depth:
            return NodeOutcome("unscored", reason="depth_limit"), [], None
        try:
            found = node_steps(node, files, step_chars(self.config.judge))
        except (InputError, OSError):
            # the file changed or vanished since it was validated
            return self._fail(node, "input_changed"), [], None
        rubric = self.criteria.rubric
        if self.criteria.mode == "auto":
            rubric = await self._derive(found.task)
        shown = 0  # the node's steps the progress bar has counted so far

        def judged() -> None:  # a step's first answer is in: the bar moves now, not per node
            nonlocal shown
            shown += 1
            self.on_step(1)

        outcome, details = await self._judge_steps(node, found, rubric, grant, judged)
        # the rest: steps that needed no call, and what scored_frames skips (steps_to_judge
        # counts every step of the node)
        if node.steps > shown:
            self.on_step(node.steps - shown)
        return outcome, details, rubric

    async def _derive(self, task: str) -> Rubric:
        """The criteria for `task` (auto mode): asked once per distinct task in a run."""
        pending = self._derived.get(task)
        if pending is None:
            pending = self._derived[task] = asyncio.ensure_future(self._ask_rubric(task))
        return await asyncio.shield(pending)

    async def _ask_rubric(self, task: str) -> Rubric:
        outcome = await self._call(derive_request(task, self.config.judge_temperature))
        rubric = derived_rubric(outcome.verdict.fields["criteria"]) if outcome.verdict else None
        if rubric is None:
            self.accounting.auto_fallbacks += 1
            return self.criteria.rubric
        self.accounting.auto_derived += 1
        return rubric

    async def _judge_steps(
        self, node: Node, found: NodeSteps, rubric: Rubric, grant: Grant, judged: Callable[[], None]
    ) -> tuple[NodeOutcome, list[StepDetail]]:
        plan = plan_node(
            found,
            node.trajectory_id,
            rubric,
            self.criteria,
            self.config,
            self._system(rubric),
            trajectory_cache_group(node.id),
            self.budget,
        )
        acc = self.accounting
        acc.step_requests += len(plan.steps)
        acc.prefix_chars += plan.shared_chars
        acc.prompt_chars += plan.prompt_chars
        grant.settle(node.steps - len(plan.steps))  # steps that need no call
        outcome, details = NodeOutcome("scored"), list[StepDetail]()
        if plan.steps:
            self.second_round.started()
            try:
                outcome, details = await self._judge_planned(node, rubric, plan, grant, judged)
            finally:
                self.second_round.finished()
        if not plan.overflow:
            return outcome, details
        # steps whose prompt does not fit the judge's context even cut: not scored (never
        # 0), in their places among the others, and the node is not complete
        places = [p.index for p in plan.steps] + [i for i, _ in plan.overflow]
        unjudged = [self._not_evaluated(view) for _, view in plan.overflow]
        merged = [d for _, d in sorted(zip(places, details + unjudged, strict=True))]
        return replace(outcome, not_evaluated=len(unjudged)), merged

    async def _judge_planned(
        self, node: Node, rubric: Rubric, plan: NodePlan, grant: Grant, judged: Callable[[], None]
    ) -> tuple[NodeOutcome, list[StepDetail]]:
        shape = self.criteria.answer_shape
        k = self.config.samples
        requests = [r for p in plan.steps for r in p.samples]
        # a judge that caches prompts gets the node's first call alone, then the others:
        # they find the prefix they share with it (the task, at least) already cached. Not
        # in batch mode: a batch is answered in no set order, and waiting for one to end
        # before sending the next would double the wait for a cache hit it cannot promise
        lead = self.client.provider.prompt_cache and self.client.batcher is None

        def step_answered() -> None:
            grant.settle()
            judged()

        outcomes = await self._judge_all(requests, per_step(step_answered, k), lead=lead)
        details: list[StepDetail] = []
        scores: list[float] = []
        failure: JudgeOutcome | None = None
        for planned, sampled in zip(plan.steps, chunks(outcomes, k), strict=True):
            view = planned.view
            self.accounting.step_input_tokens += sum(o.input_tokens for o in sampled)
            answered = [o for o in sampled if o.verdict is not None]
            if not answered:  # a step is lost only when none of its samples answered
                failure = failure or sampled[0]
                details.append(self._detail(view, None, sampled[0]))
                continue
            step_scores = [sample_score(o, rubric, shape) for o in sampled]
            summary = sampled_score(step_scores, self.config.failure_threshold)
            score = summary.mean if k > 1 else step_scores[0]
            assert score is not None
            scores.append(score)
            detail = replace(self._detail(view, score, answered[0]), left_out=planned.left_out)
            if k > 1:
                detail = replace(detail, scores=mean_scores(answered), sampled=summary)
            details.append(detail)
        if failure is not None:
            error = "protocol_error" if failure.protocol else "judge_error"
            if failure.error in KEEP_JUDGED:
                error = failure.error
            # which error (http_401, timeout...), with the server's words when it gave some
            return self._fail(node, error, failure.explained), details
        details = await self._categorize(plan, details)
        categories = tuple(d.category or UNCATEGORIZED for d in details if d.categorization_status)
        return NodeOutcome("scored", tuple(scores), candidate_categories=categories), details

    def _fail(self, node: Node, reason: str, message: str | None = None) -> NodeOutcome:
        # the deadline and --max-cost fail no job: what was judged before them is kept
        if self.config.partial_result_policy == "fail_fast" and reason not in KEEP_JUDGED:
            raise _FailFast(reason, message)
        return NodeOutcome("failed", reason=reason)

    async def _judge_all(
        self,
        requests: list[JudgeRequest],
        answered: Callable[[], None] | None = None,
        lead: bool = False,
    ) -> list[JudgeOutcome]:
        """The outcomes of `requests` (`answered` after each one's first try); those whose
        calls ran out of retries are not lost yet: they are asked once more when the rest
        of the run lets them (see second_round.py). With `lead`, the first request is
        answered before the others are sent."""

        async def first_try(request: JudgeRequest) -> JudgeOutcome:
            try:
                return await self._call(request)
            finally:
                if answered is not None:
                    answered()

        ahead = [await first_try(requests[0])] if lead and len(requests) > 1 else []
        rest = requests[len(ahead) :]
        outcomes = ahead + list(await asyncio.gather(*(first_try(r) for r in rest)))
        again = [i for i, outcome in enumerate(outcomes) if worth_another_try(outcome)]
        if again:
            await self.second_round.turn()
            retried = await asyncio.gather(*(self._call(requests[i]) for i in again))
            self.second_round.count(list(retried))
            for i, outcome in zip(again, retried, strict=True):
                outcomes[i] = outcome
        return outcomes

    async def _call(self, request: JudgeRequest) -> JudgeOutcome:
        """`request`'s outcome, or `JUDGE_TIMEOUT` when the deadline cut its call or came
        before it. Every call of a job has the same deadline, so calls sharing one answer
        (identical requests) are all cut at once (see `JudgeClient.judge`)."""
        if self._loop_deadline is None:
            return await self.client.judge(request)
        try:
            async with asyncio.timeout_at(self._loop_deadline):
                return await self.client.judge(request)
        except TimeoutError:
            return JudgeOutcome(
                None, JUDGE_TIMEOUT, message="the judging phase's --judge-timeout passed"
            )

    async def _categorize(self, plan: NodePlan, details: list[StepDetail]) -> list[StepDetail]:
        threshold = self.config.failure_threshold
        wanted = [
            (i, d.score)
            for i, d in enumerate(details)
            if d.score is not None and d.score < threshold
        ]
        if not wanted:
            return details
        requests = [r for i, score in wanted for r in plan.category_requests(i, score)]
        outcomes = await self._judge_all(requests)
        out = list(details)
        for (i, _), sampled in zip(wanted, chunks(outcomes, plan.samples), strict=True):
            out[i] = _with_category(out[i], sampled)
        return out

    @staticmethod
    def _not_evaluated(view: StepView) -> StepDetail:
        return StepDetail(
            segment=view.segment,
            step_id=view.step_id,
            source=view.source,
            tool_names=view.tool_names,
            score=None,
            scores={},
            rationale="",
            agent_name=view.agent_name,
            cut=view.cut,
            origin=view.origin,
            excerpt=view.excerpt,
            not_evaluated=CONTEXT_OVERFLOW,
        )

    @staticmethod
    def _detail(view: StepView, score: float | None, outcome: JudgeOutcome) -> StepDetail:
        verdict = outcome.verdict
        return StepDetail(
            segment=view.segment,
            step_id=view.step_id,
            source=view.source,
            tool_names=view.tool_names,
            score=score,
            scores=dict(verdict.scores) if verdict else {},
            rationale=verdict.reasoning if verdict else "",
            error=outcome.error,
            error_message=outcome.message,
            agent_name=view.agent_name,
            cut=view.cut,
            origin=view.origin,
            excerpt=view.excerpt,
        )


def _with_category(detail: StepDetail, outcomes: Sequence[JudgeOutcome]) -> StepDetail:
    """`detail` with the category its samples' majority gave (see sampled.py)."""
    majority = majority_category(outcomes)
    if majority is not None:
        return replace(
            detail,
            category=majority.category,
            confidence=majority.confidence,
            categorization_status="categorized",
            category_rationale=majority.rationale,
            sample_categories=majority.votes if len(outcomes) > 1 else (),
        )
    status: CategorizationStatus = "invalid_response" if outcomes[0].protocol else "judge_error"
    return replace(detail, category=UNCATEGORIZED, categorization_status=status)
