"""`agentjudge grade`: load → plan → checks → judges and custom metrics → gate → results.

Every configuration problem (bad dataset, traces, config, unknown metric, no threshold,
no usable judge) is raised before the first judge call, and nothing is written then.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentjudge.cases.judging import (
    Judged,
    JudgingOptions,
    RenderedCase,
    fill_prompt,
    judge_notes,
    judge_request,
    lacking,
    render_case,
    resolve_identity,
    run_metrics,
)
from agentjudge.cases.loading import (
    DEFAULT_JUDGE_CALL_TIMEOUT,
    DEFAULT_JUDGE_TIMEOUT,
    RESULTS_DIR,
    Case,
    EvalConfig,
    find_root,
    identity,
    load_traces,
    output_path,
    planned_cases,
    run_config,
    settings,
    trace_files,
)
from agentjudge.cases.outcome import gate, run_warnings
from agentjudge.files import check_writable, write_atomic
from agentjudge.judge.request import JudgeRequest

if TYPE_CHECKING:
    from agentjudge.judge.client import ClientStats


@dataclass(frozen=True, slots=True)
class GradeOptions:
    """What `agentjudge grade` was asked to do (the flags graph-agents-cli passes, and ours)."""

    traces: str | None = None
    dataset: str | None = None
    config: str | None = None
    output: str | None = None
    judge_provider: str | None = None
    judge_model: str | None = None
    judge_timeout: float = DEFAULT_JUDGE_TIMEOUT  # the whole judging phase
    judge_call_timeout: float = DEFAULT_JUDGE_CALL_TIMEOUT  # one attempt of one call
    judge_ca_bundle: str | None = None  # CA certificates (PEM) of an HTTPS judge
    concurrency: int = 16
    cache: bool = True
    cache_path: str | None = None
    root: Path | None = None  # the project folder; found from the working directory if None


@dataclass(slots=True)
class GradeRun:
    """The written results document, where it went, and the judge's counters."""

    document: dict[str, Any]
    output: Path
    exit_code: int
    stats: ClientStats | None = None  # None when no judge was called


# The judge's counters in `judge_usage`, in its order (see `ClientStats.as_dict`).
USAGE = (
    "calls",
    "cache_hits",
    "store_rejected",
    "retries",
    "errors",
    "protocol_errors",
    "input_tokens",
    "output_tokens",
)
# Called with a note for the console (warnings that are not part of the results).
Note = Callable[[str], None]
# Called with the number of judge/custom items once they are planned; returns the
# callable advanced once per finished item.
Progress = Callable[[int], Callable[[], None]]


def grade(options: GradeOptions, note: Note, progress: Progress | None = None) -> GradeRun:
    """Grade the traces; write the results file; return the run (exit code 0, 1 or 2)."""
    # Loading builds millions of small acyclic objects (parsed JSON, grades): the cycle
    # collector would rescan them again and again (half the time of a 100,000-case run). It
    # is paused, except while judges run (asyncio makes cycles), with the loaded data frozen
    # out of its sight.
    gc.disable()
    try:
        return _grade(options, note, progress)
    finally:
        gc.enable()
        gc.unfreeze()


def _grade(options: GradeOptions, note: Note, progress: Progress | None) -> GradeRun:
    graded_at = datetime.now(UTC).isoformat(timespec="seconds")
    root = options.root or find_root()
    env = settings(root)
    files = trace_files(root, options.traces)
    traces = load_traces(files)
    config = run_config(root, options.config)
    planned = planned_cases(root, options.dataset, traces, note)
    for case in planned.cases:
        gate.check_case_metrics(config, case)
    base = root or Path.cwd()
    output = output_path(base, options.output, RESULTS_DIR, "results")
    check_writable(output)

    grades: list[gate.CaseGrade] = []
    judge_items: list[tuple[str, JudgeRequest]] = []
    custom_items: list[dict[str, Any]] = []
    targets: dict[str, tuple[gate.CaseGrade, str]] = {}
    used: set[str] = set()  # traces' own ids (a case may find one by an ATIF alias)
    for case in planned.cases:
        trace = traces.find(case.id)
        grade_ = gate.grade_checks(case, trace)
        grades.append(grade_)
        if trace is None:
            continue
        used.add(str(trace["case_id"]))
        if grade_.judgeable:
            _plan_metrics(config, case, trace, grade_, judge_items, custom_items, targets)
    extra = [cid for cid in traces.traces if cid not in used]
    if extra and planned.cases:
        note(f"{len(extra)} trace(s) not in the dataset are ignored: {run_warnings.some(extra)}")

    judge = resolve_identity(
        options.judge_provider,
        options.judge_model,
        config.judge_provider,
        config.judge_model,
        env,
    )
    judged = Judged({}, judge)
    if judge_items or custom_items:
        advance = progress(len(judge_items)) if progress and judge_items else None
        judged = run_metrics(
            judge, env, judge_items, custom_items, base, _judging(options), advance, note
        )
    judge, stats, judge_notice = judged.judge, judged.stats, judged.notice
    for item_id, (grade_, metric) in targets.items():
        gate.apply_result(grade_, metric, judged.results.get(item_id))

    summary = gate.summarize(grades)
    quality = gate.quality(config, grades)
    code = gate.exit_code(summary, quality)
    summary_doc: dict[str, Any] = {**summary, "exit_code": code}
    fake_model = run_warnings.fake_sides(traces.meta, judge.provider, bool(judge_items))
    who = identity(root, env)
    meta = traces.meta
    document: dict[str, Any] = {
        "dataset_hash": planned.hash or traces.dataset_hash,
        "traces_dataset_hash": traces.dataset_hash,
        "graded_at": graded_at,
        "generated_at": meta.get("generated_at"),
        "judge": {"provider": judge.provider, "model": judge.model},
        "capture": who.capture,
        "agent_version": meta.get("agent_version") or who.agent_version,
        # an agent reached by URL may run any model: never assume the project's
        "model": meta.get("model")
        if meta.get("target") == "url"
        else meta.get("model") or who.model,
        "traces_files": traces.files,
        "dataset_paths": [str(p) for p in planned.sources] or meta.get("dataset_paths") or [],
        "config": str(config.source) if config.source else None,
        "planned": len(grades),
        "summary": summary_doc,
        "quality": quality,
        "fake_model": fake_model,
        "warnings": run_warnings.warnings(config, grades, fake_model, meta, judge_notice),
        "cases": [g.as_dict() for g in grades],
        "judge_usage": _usage(stats),
    }
    write_atomic(output, document, indent=2)
    return GradeRun(document, output, code, stats)


def _usage(stats: ClientStats | None) -> dict[str, int | float | None]:
    """`judge_usage`: the judge's counters this format reports, all 0 when none was called."""
    if stats is None:
        return dict.fromkeys(USAGE, 0)
    counters = stats.as_dict()
    return {name: counters[name] for name in USAGE}


def _plan_metrics(
    config: EvalConfig,
    case: Case,
    trace: dict[str, Any],
    grade_: gate.CaseGrade,
    judge_items: list[tuple[str, JudgeRequest]],
    custom_items: list[dict[str, Any]],
    targets: dict[str, tuple[gate.CaseGrade, str]],
) -> None:
    rendered: RenderedCase | None = None
    for metric, kind in gate.open_scores(config, case, grade_):
        item_id = f"{case.id}/{metric}"
        targets[item_id] = (grade_, metric)
        if kind == "custom":
            target = config.custom_metrics[metric].callable
            custom_items.append(
                {"id": item_id, "callable": target, "case": case.raw, "trace": trace}
            )
            continue
        if rendered is None:  # once per case, shared by its judges
            rendered = render_case(case.raw, trace, config.max_tool_result_chars)
            grade_.judge_notes = judge_notes(rendered)
            grade_.truncated_results = len(rendered.truncated)
            grade_.unrecorded_turns = rendered.unrecorded_turns
        spec = config.judges[metric]
        grade_.lacking += lacking(metric, rendered, trace)
        prompt = fill_prompt(spec, rendered)
        judge_items.append((item_id, judge_request(prompt.text, spec.scale)))


def _judging(options: GradeOptions) -> JudgingOptions:
    """The judge flags, as the judging phase takes them."""
    return JudgingOptions(
        options.judge_timeout,
        options.judge_call_timeout,
        options.judge_ca_bundle,
        options.concurrency,
        options.cache,
        options.cache_path,
    )
