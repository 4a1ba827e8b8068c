"""The results of a scoring job: one JSON document (written atomically) and a summary table.

Nothing here holds a raw judge response or exception text: steps carry fixed error kinds,
rationales are cut to 2,000 characters, and the judge is named by provider/model only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentjudge import __version__
from agentjudge.atif import Node
from agentjudge.judge import ClientStats
from agentjudge.judge.taxonomy import UNCATEGORIZED
from agentjudge.printable import printable
from agentjudge.results.score import (
    SCORE_SCHEMA,
    IncompleteNode,
    JudgeCost,
    JudgeRecord,
    JudgeSetup,
    MetricsInterval,
    NodeRecord,
    RubricRecord,
    RunParameters,
    ScoreResults,
    StepRecord,
    TrajectoryRecord,
)
from agentjudge.scoring.aggregate import NodeAggregate
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import Criteria, Rubric
from agentjudge.scoring.plan import step_prompt_version
from agentjudge.scoring.score_interval import overall_score_interval
from agentjudge.scoring.scored import JobResult, StepDetail, TreeResult
from agentjudge.trust.intervals import Bootstrap, interval_record, with_interval


def results_document(
    result: JobResult,
    config: ScoreConfig,
    criteria: Criteria,
    judge: str,
    judge_note: str | None,
    stats: ClientStats,
    started: datetime,
    judge_details: JudgeSetup,
    cost: JudgeCost,
) -> ScoreResults:
    """The results document (`results/score.py`): metrics, run parameters and metadata,
    provenance, and details. `judge_details`: the judge's endpoint (no credentials), how
    its requests were built after adapting to the server, and the notes it said; `cost`:
    what its calls cost (`JudgeClient.pricer`)."""
    metrics = result.metrics
    acc = result.accounting
    overall = metrics.overall_score if metrics else None
    return {
        "schema": SCORE_SCHEMA,
        "status": "failed" if result.failed else "succeeded",
        "error": (
            {"type": result.failed, "message": result.failed_message} if result.failed else None
        ),
        "overall_score": overall,
        "num_examples_evaluated": metrics.trajectory_count if metrics else 0,
        "metrics": {
            "atif_overall_score": overall,
            "atif_trajectory_count": metrics.trajectory_count if metrics else 0,
            "atif_failure_categorization_rate": metrics.categorization_rate if metrics else None,
        },
        "metrics_interval": score_interval(result, config),
        "run_parameters": run_parameters(config, judge, criteria),
        "run_metadata": {
            "atif_complete": result.complete,
            "unstable_steps": unstable_steps(result.trees),
            "judge_notice": judge_note,
            "tool": "agentjudge",
            "tool_version": __version__,
            "started_at": started.isoformat(),
            "finished_at": datetime.now(UTC).isoformat(),
        },
        "judge": {
            **judge_details,
            # the counters in `JudgeCounters`' keys (grade's `judge_usage` picks some by name)
            **stats.as_dict(),
            "steps_judged": acc.step_requests,
            "decisive_picks": acc.decisive_picks,
            "second_round": {
                "steps": acc.second_round_steps,
                "recovered": acc.second_round_recovered,
            },
            "input_tokens_per_step": (
                round(acc.step_input_tokens / acc.step_requests, 1) if acc.step_requests else None
            ),
            "shared_prefix_fraction": (
                round(acc.prefix_chars / acc.prompt_chars, 4) if acc.prompt_chars else None
            ),
            "cost": cost,
        },
        "criteria": {
            "mode": criteria.mode,
            "answer": criteria.answer_shape,
            "benchmark_name": config.benchmark_name,
            "registry_version": criteria.registry_version,
            "rubric": _rubric(criteria.rubric),
            "references": sorted(criteria.references),
            "auto_derived": acc.auto_derived,
            "auto_fallbacks": acc.auto_fallbacks,
        },
        "failure_categories": failure_categories(result.trees),
        "step_errors": step_errors(result.trees),
        "steps_not_evaluated": steps_not_evaluated(result.trees),
        "incomplete": incomplete_nodes(result.trees),
        "training_threshold": config.training_threshold,
        "trajectories": [
            _tree(tree, config.training_threshold, cost["usd"] is not None) for tree in result.trees
        ],
    }


def _cache(judge: JudgeRecord) -> str:
    return f"{judge.get('cache_read_tokens', '-')} / {judge.get('cache_write_tokens', '-')}"


def _cost(cost: JudgeCost) -> str:
    if cost["usd"] is None:
        return f"- ({cost['reason']})"
    return f"${cost['usd']:.6f} ({cost['model']}, {cost['source']})"


def run_parameters(config: ScoreConfig, judge: str, criteria: Criteria) -> RunParameters:
    """The parameters that decide the numbers (MLflow params, eval-hub, the results)."""
    return {
        "atif_judge": judge,
        "atif_prompt_version": step_prompt_version(config.judge, criteria.answer_shape),
        "atif_scored_frames": config.scored_frames,
        "scoring_mode": config.scoring_mode,
        "subagent_aggregation": config.subagent_aggregation,
        "failure_threshold": config.failure_threshold,
        "completion_threshold": config.completion_threshold,
        "max_subagent_depth": config.max_subagent_depth,
        "partial_result_policy": config.partial_result_policy,
        "context_steps": config.context_steps,
        "samples": config.samples,
        "judge_temperature": config.judge_temperature,
        "decisive_rule": config.decisive_rule,
        "bootstrap_seed": config.bootstrap_seed,
        "bootstrap_resamples": config.bootstrap_resamples,
    }


def score_interval(result: JobResult, config: ScoreConfig) -> MetricsInterval:
    """The results' `metrics_interval`: the bootstrap interval of `atif_overall_score` over
    root trees (null when the run has no overall score)."""
    bootstrap = Bootstrap(config.bootstrap_seed, config.bootstrap_resamples)
    bounds = None
    if result.metrics is not None:
        trees = [tree.aggregates for tree in result.trees]
        bounds = overall_score_interval(trees, config.subagent_aggregation, bootstrap)
    # the record grade's rates share: its keys are the ones asked for and the bootstrap's
    return cast(MetricsInterval, interval_record({"atif_overall_score": bounds}, bootstrap))


def failure_categories(trees: list[TreeResult]) -> dict[str, int]:
    """Steps below the failure threshold, by category (`uncategorized` when the judge gave
    none), across the collection."""
    counts: dict[str, int] = {}
    for tree in trees:
        for details in tree.steps.values():
            for step in details:
                if step.categorization_status is not None:
                    category = step.category or UNCATEGORIZED
                    counts[category] = counts.get(category, 0) + 1
    return dict(sorted(counts.items()))


def unstable_steps(trees: list[TreeResult]) -> int:
    """Steps whose samples fell on both sides of the failure threshold (0 with one sample)."""
    return sum(
        1
        for tree in trees
        for details in tree.steps.values()
        for step in details
        if step.sampled is not None and step.sampled.unstable
    )


def step_errors(trees: list[TreeResult]) -> dict[str, int]:
    """Steps the judge gave no verdict for, by error kind (`http_401`, `timeout`, ...)."""
    counts: dict[str, int] = {}
    for tree in trees:
        for details in tree.steps.values():
            for step in details:
                if step.error is not None:
                    counts[step.error] = counts.get(step.error, 0) + 1
    return dict(sorted(counts.items()))


def steps_not_evaluated(trees: list[TreeResult]) -> dict[str, int]:
    """Steps to score that were not sent to the judge, by why (`context_overflow`)."""
    counts: dict[str, int] = {}
    for tree in trees:
        for details in tree.steps.values():
            for step in details:
                if step.not_evaluated is not None:
                    counts[step.not_evaluated] = counts.get(step.not_evaluated, 0) + 1
    return dict(sorted(counts.items()))


def incomplete_nodes(trees: list[TreeResult]) -> list[IncompleteNode]:
    """Every node that makes its run incomplete, and why: failed or unscored itself, a
    subagent omitted, or below it a node that is."""
    out: list[IncompleteNode] = []
    for tree in trees:
        nodes = {node.id: node for node in tree.root.walk()}
        for agg in tree.aggregates:
            if agg.complete and agg.status == "scored":
                continue
            node = nodes[agg.id]
            if agg.status != "scored":
                reason = f"{agg.status}: {agg.reason}" if agg.reason else agg.status
                why = _why_failed(node, tree.steps.get(agg.id, []))
                if why is not None:
                    reason += f" ({why})"
            elif unjudged := [s for s in tree.steps.get(agg.id, []) if s.not_evaluated]:
                reason = (
                    f"{len(unjudged)} steps not evaluated ({unjudged[0].not_evaluated}: their "
                    "prompt does not fit the judge's context)"
                )
            elif node.omitted:
                reason = "omitted subagent: " + "; ".join(
                    f"{o.target or o.ref_path} ({o.reason})" for o in node.omitted
                )
            else:
                reason = "a subagent below it is incomplete"
            out.append({"node": agg.id, "file": node.file, "depth": agg.depth, "reason": reason})
    return out


def _why_failed(node: Node, steps: list[StepDetail]) -> str | None:
    """What made a node fail, as the job's error would say it: its first problem (invalid
    input), or its first step error with the server's words (`http_401: ...`)."""
    if node.problems:
        more = f"; and {len(node.problems) - 1} more" if len(node.problems) > 1 else ""
        return f"{node.problems[0]}{more}"
    for step in steps:
        if step.error is not None:
            return f"{step.error}: {step.error_message}" if step.error_message else step.error
    return None


def training_eligible(tree: TreeResult, threshold: float) -> bool:
    """A root whose every node was scored completely (none failed, unscored, say beyond
    the depth limit, or omitted) and whose aggregate is at or above `threshold`."""
    root = tree.aggregates[0]
    whole = all(a.status == "scored" and a.complete for a in tree.aggregates)
    return whole and root.aggregate is not None and root.aggregate >= threshold


def _tree(tree: TreeResult, training_threshold: float | None, priced: bool) -> TrajectoryRecord:
    nodes = {node.id: node for node in tree.root.walk()}
    eligible = None if training_threshold is None else training_eligible(tree, training_threshold)
    return {
        "root": tree.root.id,
        "training_eligible": eligible,
        "decisive_failure": tree.decisive.as_dict() if tree.decisive else None,
        "decisive_absent": tree.decisive_absent,
        "cost_usd": round(tree.cost_usd, 6) if priced else None,
        "nodes": [_node(nodes[a.id], a, tree) for a in tree.aggregates],
    }


def _node(node: Node, agg: NodeAggregate, tree: TreeResult) -> NodeRecord:
    rubric = tree.rubrics.get(node.id)
    return {
        "id": node.id,
        "kind": node.kind,
        "file": node.file,
        "input_sha256": node.sha256 or None,
        "trajectory_id": node.trajectory_id,
        "session_id": node.session_id,
        "agent": {"name": node.agent_name, "version": node.agent_version, "model": node.model_name},
        "schema_version": node.schema_version,
        "depth": node.depth,
        "parent_id": node.parent_id,
        "parent_step_id": node.parent_step_id,
        "status": agg.status,
        "reason": agg.reason,
        "complete": agg.complete,
        "own_score": agg.own_score,
        "aggregate": agg.aggregate,
        "passed": agg.passed,
        "step_count": agg.own_steps,
        "subtree_step_count": agg.subtree_steps,
        "failure_candidates": agg.failure_candidates,
        "criteria": list(tree.criteria.get(node.id, ())),
        "omitted": [
            {
                "ref_path": o.ref_path,
                "parent_step_id": o.parent_step_id,
                "target": o.target,
                "reason": o.reason,
            }
            for o in node.omitted
        ],
        "problems": [
            {"file": p.file, "path": p.path, "rule": p.rule, "message": p.message}
            for p in node.problems
        ],
        "steps": [step_record(s) for s in tree.steps.get(node.id, [])],
        "rubric": None if rubric is None else _rubric(rubric),
    }


def _rubric(rubric: Rubric) -> RubricRecord:
    # in full (descriptions, weights, how they combine): `compare` checks runs agree on it
    return {
        "name": rubric.name,
        "aggregation": rubric.aggregation,
        "criteria": [
            {"name": c.name, "description": c.description, "weight": c.weight}
            for c in rubric.criteria
        ],
    }


def step_record(step: StepDetail) -> StepRecord:
    """A step's record in the results document (`results/score.py`'s `StepRecord`)."""
    record: StepRecord = {
        "segment": step.segment,
        "step_id": step.step_id,
        "source": step.source,
        "tool_names": list(step.tool_names),
        "score": step.score,
        "scores": step.scores,
        "rationale": step.rationale,
        "error": step.error,
        "error_message": step.error_message,
        "category": step.category,
        "confidence": step.confidence,
        "categorization_status": step.categorization_status,
        "category_rationale": step.category_rationale,
        "truncated": step.cut is not None,
    }
    if step.cut is not None:  # a cut step only: how much of its texts the judge saw
        record["shown_chars"] = step.cut.shown
        record["hidden_chars"] = step.cut.hidden
    if step.sampled is not None:  # with samples > 1 only: a one-sample step reads as ever
        record["samples"] = list(step.sampled.scores)
        record["spread"] = step.sampled.spread
        record["stdev"] = step.sampled.stdev
        record["unstable"] = step.sampled.unstable
    if step.sample_categories:  # with samples > 1, a categorized step only
        record["sample_categories"] = list(step.sample_categories)
    if step.origin is not None:  # a step read from a trace file: where it was recorded
        record["origin"] = step.origin
    if step.not_evaluated == "context_overflow":  # its prompt does not fit the judge's context
        record["not_evaluated"] = "context_overflow"
    if step.left_out:  # its context was windowed to fit the judge's context
        record["context_left_out"] = step.left_out
    return record


def summary_line(document: ScoreResults, path: Path) -> str:
    """One line for logs: status, the three metrics (the score with its interval),
    completeness, the judge's cost (`-` with no price: the results say why), where the
    results are (the path printable: a user's name)."""
    metrics = document["metrics"]
    usd = document["judge"].get("cost", {}).get("usd")
    score = metrics["atif_overall_score"]
    bounds = document["metrics_interval"]["atif_overall_score"]
    rate = metrics["atif_failure_categorization_rate"]  # None when nothing was scored
    return (
        f"agentjudge score: {_status(document)}; atif_overall_score="
        f"{'-' if score is None else with_interval(score, bounds)} atif_trajectory_count="
        f"{metrics['atif_trajectory_count']} atif_failure_categorization_rate="
        f"{'-' if rate is None else round(rate, 4)} atif_complete="
        f"{str(document['run_metadata']['atif_complete']).lower()}{_not_evaluated(document)}"
        f" judge_cost_usd={'-' if usd is None else f'{usd:.6f}'}; results in "
        f"{printable(str(path))}"
    )


def _not_evaluated(document: ScoreResults) -> str:
    """The summary's steps not sent to the judge, by why, when there are any."""
    counts = document.get("steps_not_evaluated") or {}
    return "".join(f" steps_not_evaluated={n} ({why})" for why, n in counts.items())


def _status(document: ScoreResults) -> str:
    error = document["error"]
    return document["status"] + (f" ({error['type']})" if error else "")


def unstable_line(count: int, parameters: RunParameters) -> str:
    """The console's line on steps whose samples disagree across the failure threshold."""
    return (
        f"unstable steps: {count} (their {parameters['samples']} samples fall on both sides "
        f"of failure_threshold {parameters['failure_threshold']:g}; see each step's samples)"
    )


def summary_table(document: ScoreResults, console: Console) -> None:
    """The end-of-run table: metrics, completeness and the judge's work."""
    table = Table(title="agentjudge score", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    metrics = document["metrics"]
    score = metrics["atif_overall_score"]
    rate = metrics["atif_failure_categorization_rate"]
    table.add_row("status", _status(document))
    bounds = document["metrics_interval"]["atif_overall_score"]
    table.add_row("atif_overall_score", "-" if score is None else with_interval(score, bounds))
    table.add_row("atif_trajectory_count", str(metrics["atif_trajectory_count"]))
    table.add_row("atif_failure_categorization_rate", "-" if rate is None else f"{rate:.4f}")
    table.add_row("atif_complete", str(document["run_metadata"]["atif_complete"]).lower())
    for why, count in (document.get("steps_not_evaluated") or {}).items():
        table.add_row(f"steps not evaluated ({why})", str(count))
    judge = document["judge"]
    table.add_row("judge", Text(printable(document["run_parameters"]["atif_judge"])))
    table.add_row("judge calls (cached)", f"{judge['calls']} ({judge['cache_hits']})")
    table.add_row("tokens in / out", f"{judge['input_tokens']} / {judge['output_tokens']}")
    table.add_row("tokens cache read / write", _cache(judge))
    if "cost" in judge:  # a file written before runs were priced has none
        table.add_row("cost", Text(printable(_cost(judge["cost"]))))
    console.print(table)
    if notice := document["run_metadata"]["judge_notice"]:
        console.print(Text.assemble(("note:", "yellow"), f" {printable(notice)}"))
