"""What a person reviews: every judged step of a score results file, or every judge metric
of every case of a grade results file, each with what the judge said and the context a
person needs to agree or not (the task, the trajectory up to the step), as plain text."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentjudge.atif import Node, load_trees
from agentjudge.errors import AgentJudgeError, UsageError
from agentjudge.files import MAX_JSON_BYTES, read_capped, read_json
from agentjudge.results.grade import GRADE, GradeResults, JudgeScore
from agentjudge.results.score import SCORE, ScoreResults, StepRecord, TrajectoryRecord
from agentjudge.scoring.steps import FileCache, cut_text, node_steps

# What of a step's texts the page shows: as much as a judge is shown (STEP_CHARS), so the
# person sees what the judge saw; longer texts keep their start and end around a marker.
TEXT_CHARS = 8_000
# A score results file's scale (the judge scores steps in [0, 1]).
STEP_SCALE = (0.0, 1.0)
# A grade judge metric's scale: 1..5 unless a score or threshold says it is wider (the
# results do not record the scale); a custom metric's 0..1 likewise.
JUDGE_SCALE = (1.0, 5.0)
CUSTOM_SCALE = (0.0, 1.0)


@dataclass(frozen=True, slots=True)
class ContextStep:
    """One step shown for context, as text (never HTML)."""

    step_id: int
    source: str  # "user" | "agent" | "system"
    text: str  # message text, cut to TEXT_CHARS with a visible marker
    tool_calls: tuple[str, ...]  # "name(args json)" each
    observations: tuple[str, ...]  # tool results as text


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One thing a person checks: a step of a score results file, or a judge metric of a
    grade results file's case, with the judge's answer."""

    key: str  # "<root>#<node or ''>#<step_id>" (score) or "<case id>#<metric>" (grade)
    kind: Literal["step", "case_metric"]
    root: str  # the trajectory as the results name it, or the case id
    node: str | None  # the node's id in the results; None: the root
    step_id: int | None  # None for case metrics
    metric: str | None  # grade: the judge metric's name
    task: str
    context: tuple[ContextStep, ...]  # the trajectory up to and including the step
    score: float | None  # None: the judge gave no score
    threshold: float
    scale: tuple[float, float]
    samples: tuple[float, ...]
    rationale: str | None
    category: str | None
    # the category each sample gave (score results with samples > 1; empty otherwise)
    sample_categories: tuple[str, ...]
    decisive: bool  # the decisive step of a failed root
    agent: str | None = None  # who took the step (a multi-agent speaker, else the node's agent)


def step_key(root: str, node: str | None, step_id: int) -> str:
    """A step's item key."""
    return f"{root}#{node or ''}#{step_id}"


def metric_key(case_id: str, metric: str) -> str:
    """A case metric's item key."""
    return f"{case_id}#{metric}"


def load_items(results_path: Path) -> tuple[list[ReviewItem], str]:
    """Every reviewable item of a score or grade results file (in the file's order), and the
    file's sha256 hex. The trajectories a score results file names are read for the task
    and context; one that cannot be read is said in the item's context, not an error. Bad
    input: UsageError (one line: file, field, fix)."""
    data = read_capped(results_path, "results file", MAX_JSON_BYTES)
    digest = hashlib.sha256(data).hexdigest()
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"{results_path}: not valid JSON ({exc}); pass a results file written by "
            "`agentjudge score` or `agentjudge grade`"
        ) from None
    if SCORE.claims(document):
        return score_items(SCORE.check(document, str(results_path)), results_path.parent), digest
    if GRADE.claims(document):
        return grade_items(GRADE.check(document, str(results_path))), digest
    raise UsageError(
        f"{results_path}: schema: not a score or grade results file; pass a results file "
        "written by `agentjudge score` or `agentjudge grade`"
    )


def score_items(document: ScoreResults, folder: Path) -> list[ReviewItem]:
    """A score results document's steps, tree by tree, node by node, step by step. A root
    named by a relative path is read from the working directory, else from `folder` (the
    results file's: score names roots as they were given, relative to where it ran)."""
    threshold = document["run_parameters"]["failure_threshold"]
    items: list[ReviewItem] = []
    for tree in document["trajectories"]:
        items.extend(_tree_items(tree, threshold, folder))
    return items


def _tree_items(tree: TrajectoryRecord, threshold: float, folder: Path) -> Iterable[ReviewItem]:
    root = tree["root"]
    decisive = tree["decisive_failure"]
    loaded = _load_tree(root, folder)
    for record in tree["nodes"]:
        node = None if record["parent_id"] is None else record["id"]
        task, context, speakers = _context(loaded, record["id"])
        agent_of_node = record["agent"]["name"]
        for step in record["steps"]:
            shown = _upto(context, step["step_id"])
            yield ReviewItem(
                key=step_key(root, node, step["step_id"]),
                kind="step",
                root=root,
                node=node,
                step_id=step["step_id"],
                metric=None,
                task=task,
                context=shown,
                score=step["score"],
                threshold=threshold,
                scale=STEP_SCALE,
                samples=_samples(step),
                rationale=step["rationale"] or None,
                category=step["category"],
                sample_categories=tuple(step.get("sample_categories", ())),
                decisive=bool(
                    decisive
                    and decisive["node_id"] == record["id"]
                    and decisive["step_id"] == step["step_id"]
                ),
                agent=speakers.get(step["step_id"]) or agent_of_node,
            )


# a node's task, its steps as context, and who spoke at each step (multi-agent transcripts)
_NodeText = tuple[str, tuple[ContextStep, ...], dict[int, str]]


@dataclass(frozen=True, slots=True)
class _Loaded:
    """A root's tree as read again from its files (node id to its text), or why not."""

    nodes: dict[str, _NodeText]
    problem: str | None


def _load_tree(root: str, folder: Path) -> _Loaded:
    """Each node's task, context steps and speakers, read from the root's files."""
    path = Path(root)
    if not path.is_absolute() and not path.exists() and (folder / path).exists():
        path = folder / path
    try:
        trees = list(load_trees([path]))
        out: dict[str, _NodeText] = {}
        files = FileCache()
        for tree in trees:
            for node in tree.walk():
                if not node.problems:
                    # read from `folder`, the ids start with that path, not the root's name
                    name = node.id.replace(str(path), root, 1)
                    out[name] = _node_context(node, files)
        return _Loaded(out, None if out else f"{root} is not a readable trajectory")
    except (OSError, ValueError, AgentJudgeError) as exc:
        # the kind of error only: its message may quote the file, and the page shows only
        # what the results and the trajectories they name hold
        return _Loaded({}, f"{root} could not be read ({type(exc).__name__})")


def _node_context(node: Node, files: FileCache) -> _NodeText:
    read = node_steps(node, files, TEXT_CHARS)
    steps = []
    speakers = {}
    for view in read.steps:
        data = view.data
        calls = tuple(
            f"{call['name']}({_args(call['arguments'])})" for call in data.get("tool_calls", ())
        )
        text = data.get("message", "")
        if data.get("reasoning"):
            text = f"{text}\n[reasoning] {data['reasoning']}" if text else data["reasoning"]
        steps.append(
            ContextStep(
                step_id=view.step_id,
                source=view.source,
                text=text,
                tool_calls=calls,
                observations=tuple(data.get("observation", ())),
            )
        )
        if view.agent_name:
            speakers[view.step_id] = view.agent_name
    return read.task, tuple(steps), speakers


def _args(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _context(loaded: _Loaded, node_id: str) -> _NodeText:
    """A node's task, context steps and speakers; a node not read says why in its context."""
    found = loaded.nodes.get(node_id)
    if found is None:
        why = loaded.problem or f"{node_id} is not in its trajectory file any more"
        return "", (ContextStep(0, "system", f"[context not shown: {why}]", (), ()),), {}
    return found


def _upto(context: tuple[ContextStep, ...], step_id: int) -> tuple[ContextStep, ...]:
    """The context steps up to and including `step_id` (all of them if it is not there)."""
    for index, step in enumerate(context):
        if step.step_id == step_id:
            return context[: index + 1]
    return context


def _samples(step: StepRecord) -> tuple[float, ...]:
    return tuple(s for s in step.get("samples", ()) if s is not None)


def grade_items(document: GradeResults) -> list[ReviewItem]:
    """A grade results document's judge metrics (custom metrics too), case by case. The
    task and the reply are read from the traces files the results name, when they are
    still there."""
    traces = _traces(document["traces_files"])
    items = []
    for case in document["cases"]:
        task, context = traces.get(case["id"], ("", ()))
        for metric, entry in case["judge_scores"].items():
            items.append(
                ReviewItem(
                    key=metric_key(case["id"], metric),
                    kind="case_metric",
                    root=case["id"],
                    node=None,
                    step_id=None,
                    metric=metric,
                    task=task,
                    context=context,
                    score=None if entry["score"] is None else float(entry["score"]),
                    threshold=float(entry["threshold"]),
                    scale=_metric_scale(entry),
                    samples=tuple(float(s) for s in entry.get("samples", ()) if s is not None),
                    rationale=entry["reasoning"] or entry["error"] or None,
                    category=None,
                    sample_categories=(),
                    decisive=False,
                    agent=None,
                )
            )
    return items


def _metric_scale(entry: JudgeScore) -> tuple[float, float]:
    low, high = JUDGE_SCALE if entry["kind"] == "judge" else CUSTOM_SCALE
    seen = [float(v) for v in (entry["score"], entry["threshold"]) if v is not None]
    return low, max([high, *seen])


def _traces(files: list[str]) -> dict[str, tuple[str, tuple[ContextStep, ...]]]:
    """Per case id: its task (the case's messages) and the reply as context, from the
    graph-agents-cli traces files that still exist; a file that does not is skipped."""
    found: dict[str, tuple[str, tuple[ContextStep, ...]]] = {}
    for name in files:
        try:
            data = read_json(Path(name), "traces file")
        except AgentJudgeError:  # moved or gone since grading: the items show no context
            continue
        for trace in data.get("traces", []) if isinstance(data, dict) else []:
            if isinstance(trace, dict) and isinstance(trace.get("case_id"), str):
                found[trace["case_id"]] = _case_context(trace)
    return found


def _case_context(trace: dict[str, Any]) -> tuple[str, tuple[ContextStep, ...]]:
    case = trace.get("case")
    messages = case.get("messages") if isinstance(case, dict) else None
    if not isinstance(messages, list):
        messages = []
    steps = []
    for index, message in enumerate(messages, start=1):
        if isinstance(message, dict):
            role = message.get("role")
            steps.append(
                ContextStep(
                    index,
                    "user" if role == "user" else "system" if role == "system" else "agent",
                    cut_text(_text(message.get("content")), TEXT_CHARS),
                    (),
                    (),
                )
            )
    task = next((s.text for s in steps if s.source == "user"), "")
    calls = [c for c in trace.get("tool_calls") or [] if isinstance(c, dict)]
    steps.append(
        ContextStep(
            len(steps) + 1,
            "agent",
            cut_text(_text(trace.get("response")), TEXT_CHARS),
            tuple(f"{c.get('name')}({_args(c.get('args', {}))})" for c in calls),
            tuple(cut_text(_text(c.get("result")), TEXT_CHARS) for c in calls),
        )
    )
    return task, tuple(steps)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
