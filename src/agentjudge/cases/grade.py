"""`agentjudge grade`: load → plan → checks → judges and custom metrics → gate → results.

Every configuration problem (bad dataset, traces, config, unknown metric, no threshold,
no usable judge) is raised before the first judge call, and nothing is written then.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from agentjudge.cases import judging  # its judge calls and runner: imported when needed
from agentjudge.cases.judging.identity import Judged, JudgingOptions, resolve_identity
from agentjudge.cases.judging.samples import fold_samples, sample_items
from agentjudge.cases.judging.transcript import (
    RenderedCase,
    fill_prompt,
    judge_notes,
    lacking,
    render_case,
)
from agentjudge.cases.loading import (
    DEFAULT_JUDGE_CALL_TIMEOUT,
    DEFAULT_JUDGE_TIMEOUT,
    RESULTS_DIR,
    Case,
    EvalConfig,
    PlannedCases,
    TraceSet,
    find_root,
    identity,
    load_traces,
    output_path,
    planned_cases,
    run_config,
    settings,
    trace_files,
)
from agentjudge.cases.loading.project import MANIFEST
from agentjudge.cases.loading.traces import traces_path
from agentjudge.cases.outcome import gate, run_warnings
from agentjudge.cases.outcome.intervals import rate_intervals
from agentjudge.cases.outcome.results_file import ResultsSpool, write_results
from agentjudge.collisions import InputFolder, Named, check_no_collision
from agentjudge.errors import UsageError
from agentjudge.files import check_writable, read_json
from agentjudge.judge.price import given_rates
from agentjudge.judge.request import JudgeRequest
from agentjudge.judge.samples import MAX_SAMPLES, temperature_note
from agentjudge.judge.store_path import default_store_path
from agentjudge.results.grade import (
    ERROR,
    FAILED,
    GRADE_SCHEMA,
    MISSING,
    PASSED,
    QUALITY_BELOW_THRESHOLD,
    CaseResult,
    GradeJudge,
    GradeResults,
    GradeSummary,
)
from agentjudge.trust.intervals import Bootstrap

if TYPE_CHECKING:
    from agentjudge.judge.stats import ClientStats


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
    use_store: bool = True  # --no-cache turns it off
    store_path: str | None = None  # else the default path
    # --batch: the judge's requests through its batch API (docs/judge.md, "Batch mode")
    batch: bool = False
    batch_poll_seconds: float = 30.0
    batch_fallback: str = "batch"  # or "online"
    quiet: bool = False  # --quiet: only the result (no line on rate-limit waits)
    samples: int | None = None  # judge answers per metric per case [judge.samples, else 1]
    temperature: float | None = None  # the judge's [judge.temperature, else 0]
    fail_on_unstable: bool = False  # an unstable case fails the gate (exit 1)
    root: Path | None = None  # the project folder; found from the working directory if None
    bootstrap_seed: int = 0  # the rates' bootstrap intervals (reproducible)
    bootstrap_resamples: int = 1000
    reports: tuple[Named, ...] = ()  # --junit, --html: written after the results
    # USD per million tokens (--price-in, --price-cache-read, --price-cache-write,
    # --price-out): the user's prices, over the price database's
    prices: tuple[float | None, float | None, float | None, float | None] = (None,) * 4


@dataclass(slots=True)
class GradeRun:
    """The written results document but its `cases` (see `read_document`), where it went,
    the first cases needing attention, and the judge's counters."""

    document: GradeResults  # `cases` empty: they are on disk only
    output: Path
    exit_code: int
    stats: ClientStats | None = None  # None when no judge was called
    flagged: list[CaseResult] = field(default_factory=list)  # first FLAGGED_KEPT

    def read_document(self) -> GradeResults:
        """The whole results document, every case's record included, read from its file
        (this run wrote it: not checked again)."""
        document: GradeResults = read_json(self.output, "results file")
        return document


# The judge's counters in `judge_usage`, in its order (see `ClientStats.as_dict`).
Usage = Literal[
    "calls",
    "cache_hits",
    "store_rejected",
    "retries",
    "errors",
    "protocol_errors",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
]
USAGE: tuple[Usage, ...] = get_args(Usage)
# The first cases not passed that a run keeps for its console summary (which shows as many,
# `report/grade_console.py`); the others are only in the results file.
FLAGGED_KEPT = 20
# Called with a note for the console, printed as `warning:` (not one of the results' warnings).
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


@dataclass(frozen=True, slots=True)
class _Inputs:
    """What a run grades, read and checked before anything is judged or written."""

    root: Path | None  # the project folder, if one was found
    base: Path  # the project folder, else the working directory
    env: dict[str, str]  # the project's settings, the environment over its `.env`
    traces: TraceSet
    config: EvalConfig
    planned: PlannedCases  # read once, by `_check`
    output: Path  # the results file, known to be writable


@dataclass(slots=True)
class _Checked:
    """Every planned case after its checks: the final ones' tallies (their records are in
    the spool), the cases still waiting for metrics, and those metrics: judge requests and
    custom metric items, each with the grade and metric its result goes to."""

    spool: ResultsSpool
    tallies: list[gate.CaseTally | None] = field(default_factory=list)  # None: waiting
    waiting: dict[int, gate.CaseGrade] = field(default_factory=dict)  # by planned position
    # the first final cases not passed, by position (the console shows a few)
    flagged: dict[int, CaseResult] = field(default_factory=dict)
    judge_items: list[tuple[str, JudgeRequest]] = field(default_factory=list)
    custom_items: list[dict[str, Any]] = field(default_factory=list)
    targets: dict[str, tuple[gate.CaseGrade, str]] = field(default_factory=dict)
    samples: int = 1  # judge items per judge metric (see judging/samples.py)
    temperature: float = 0.0

    def plan_metrics(
        self, config: EvalConfig, case: Case, trace: dict[str, Any], grade_: gate.CaseGrade
    ) -> None:
        """Open the scores of a judgeable case; queue its judge and custom metrics."""
        rendered: RenderedCase | None = None
        for metric, kind in gate.open_scores(config, case, grade_):
            item_id = f"{case.id}/{metric}"
            self.targets[item_id] = (grade_, metric)
            if kind == "custom":
                target = config.custom_metrics[metric].callable
                self.custom_items.append(
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
            request = judging.judge_request(prompt.text, spec.scale, self.temperature)
            self.judge_items += sample_items(item_id, request, self.samples)


def _grade(options: GradeOptions, note: Note, progress: Progress | None) -> GradeRun:
    graded_at = datetime.now(UTC).isoformat(timespec="seconds")
    inputs = _load(options, note)
    with ResultsSpool(inputs.output) as spool:
        checked = _Checked(
            spool,
            samples=_samples(options, inputs.config),
            temperature=_temperature(options, inputs.config),
        )
        _check(inputs, checked, note)
        sampling = temperature_note(checked.samples, checked.temperature)
        if sampling is not None and checked.judge_items:
            note(sampling)
        judged = _judge(options, inputs, checked, progress, note)
        tallies = [t for t in checked.tallies if t is not None]
        document = _document(inputs, checked, tallies, judged, graded_at, options)
        write_results(inputs.output, document, spool.records())
    flagged = [checked.flagged[p] for p in sorted(checked.flagged)][:FLAGGED_KEPT]
    code = document["summary"]["exit_code"]
    return GradeRun(document, inputs.output, code, judged.stats, flagged)


def _load(options: GradeOptions, note: Note) -> _Inputs:
    """Read the traces and config and open the cases (read as `_check` reaches them); the
    results file must be writable before anything else is done."""
    root = options.root or find_root()
    env = settings(root)
    files = trace_files(root, options.traces)
    traces = load_traces(files)
    config = run_config(root, options.config)
    planned = planned_cases(root, options.dataset, traces, note)
    base = root or Path.cwd()
    output = output_path(base, options.output, RESULTS_DIR, "results")
    check_writable(output)
    _check_paths(options, root, files, config, planned, output)
    return _Inputs(root, base, env, traces, config, planned, output)


def _check_paths(
    options: GradeOptions,
    root: Path | None,
    traces: list[Path],
    config: EvalConfig,
    planned: PlannedCases,
    output: Path,
) -> None:
    """Refuse (exit 3) an output that would overwrite a file the run reads (the traces,
    the dataset, the config, the project's manifest), the verdict store or another output."""
    outputs = [Named("--output", output), *options.reports]
    if options.use_store:
        # first: a collision is then said of the other file, whose flag is the fix
        outputs.insert(0, Named("the verdict store", options.store_path or default_store_path()))
    inputs = [Named("the traces file", path) for path in traces]
    inputs += [Named("the dataset", path) for path in planned.sources]
    if config.source is not None:
        inputs.append(Named("the eval config", config.source))
    if root is not None:
        inputs.append(Named("the project manifest", root / MANIFEST))
    folders = []
    if options.traces and (named := traces_path(root, options.traces)).is_dir():
        folders.append(InputFolder("the traces folder", named))
    check_no_collision(outputs, inputs, folders)


def _samples(options: GradeOptions, config: EvalConfig) -> int:
    """`--samples`, else `judge.samples` in eval_config.yaml, else 1."""
    samples = options.samples if options.samples is not None else config.judge_samples or 1
    if not 1 <= samples <= MAX_SAMPLES:
        raise UsageError(
            f"--samples {samples}: must be a whole number from 1 to {MAX_SAMPLES} "
            "(1: one judge call)"
        )
    return samples


def _temperature(options: GradeOptions, config: EvalConfig) -> float:
    """`--temperature`, else `judge.temperature` in eval_config.yaml, else 0."""
    if options.temperature is None:
        return config.judge_temperature or 0.0
    if not 0.0 <= options.temperature <= 2.0:
        raise UsageError(f"--temperature {options.temperature:g}: must be between 0 and 2")
    return options.temperature


def _check(inputs: _Inputs, checked: _Checked, note: Note) -> None:
    """Each planned case as the dataset yields it: its metrics must be known and have a
    threshold (before any judge is called), then accounting, then its checks. A case with
    nothing left to run is final and its record goes to the spool; the metrics of a case
    still judgeable are queued. Traces no case asked for are named and left."""
    traces, config = inputs.traces, inputs.config
    used: set[str] = set()  # traces' own ids (a case may find one by an ATIF alias)
    for case in inputs.planned:
        gate.check_case_metrics(config, case)
        trace = traces.find(case.id)
        grade_ = gate.grade_checks(case, trace)
        if trace is not None:
            used.add(str(trace["case_id"]))
            if grade_.judgeable and (case.judge or config.custom_metrics):
                checked.plan_metrics(config, case, trace, grade_)
        if grade_.judge_scores:  # metrics opened: final once they have run
            checked.waiting[len(checked.tallies)] = grade_
            checked.tallies.append(None)
            checked.spool.hold(grade_)
        else:
            tally = grade_.tally()
            if tally.status != PASSED and len(checked.flagged) < FLAGGED_KEPT:
                checked.flagged[len(checked.tallies)] = grade_.as_dict()
            checked.tallies.append(tally)
            checked.spool.add(grade_)
    extra = [cid for cid in traces.traces if cid not in used]
    if extra and checked.tallies:
        note(f"{len(extra)} trace(s) not in the dataset are ignored: {run_warnings.some(extra)}")


def _judge(
    options: GradeOptions, inputs: _Inputs, checked: _Checked, progress: Progress | None, note: Note
) -> Judged:
    """Run the queued metrics, if any, and fold every result into its case's grade."""
    judge = resolve_identity(
        options.judge_provider,
        options.judge_model,
        inputs.config.judge_provider,
        inputs.config.judge_model,
        inputs.env,
    )
    judged = Judged({}, judge)
    judge_items, custom_items = checked.judge_items, checked.custom_items
    if judge_items or custom_items:
        advance = progress(len(judge_items)) if progress and judge_items else None
        judged = judging.run_metrics(
            judge,
            inputs.env,
            judge_items,
            custom_items,
            inputs.base,
            _judging(options),
            advance,
            note,
        )
    for item_id, (grade_, metric) in checked.targets.items():
        judge_metric = grade_.judge_scores[metric]["kind"] == "judge"
        samples = checked.samples if judge_metric else 1
        gate.apply_result(grade_, metric, fold_samples(judged.results, item_id, samples))
    for position, grade_ in checked.waiting.items():
        checked.tallies[position] = grade_.tally()
        if grade_.status != PASSED:
            checked.flagged[position] = grade_.as_dict()
    return judged


def _document(
    inputs: _Inputs,
    checked: _Checked,
    grades: list[gate.CaseTally],
    judged: Judged,
    graded_at: str,
    options: GradeOptions,
) -> GradeResults:
    """The results document: graph-agents-cli's keys in its order, then ours; `cases` is
    left empty here (`write_results` writes it from the spool; `GradeRun.read_document`
    reads it back)."""
    config, traces, planned = inputs.config, inputs.traces, inputs.planned
    judge = judged.judge
    counts = gate.summarize(grades)
    quality = gate.quality(config, grades)
    unstable = sum(1 for g in grades if g.unstable)
    code = gate.exit_code(counts, quality, unstable if options.fail_on_unstable else 0)
    summary: GradeSummary = {
        "passed": counts[PASSED],
        "failed": counts[FAILED],
        "quality_below_threshold": counts[QUALITY_BELOW_THRESHOLD],
        "error": counts[ERROR],
        "missing": counts[MISSING],
        "exit_code": code,
    }
    if checked.samples > 1:  # one-sample results read as graph-agents-cli's
        summary["unstable"] = unstable
        summary["samples"] = checked.samples
    fake_model = run_warnings.fake_sides(traces.meta, judge.provider, bool(checked.judge_items))
    who = identity(inputs.root, inputs.env)
    meta = traces.meta
    return {
        "dataset_hash": planned.hash or traces.dataset_hash,
        "traces_dataset_hash": traces.dataset_hash,
        "graded_at": graded_at,
        "generated_at": meta.get("generated_at"),
        "judge": _judge_identity(judge.provider, judge.model, checked),
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
        "summary": summary,
        "quality": quality,
        "fake_model": fake_model,
        "warnings": run_warnings.warnings(config, grades, fake_model, meta, judged.judge_note),
        "cases": [],
        "judge_usage": _usage(judged.stats),
        "judge_cost": judged.cost,
        "metrics_interval": rate_intervals(
            grades, Bootstrap(options.bootstrap_seed, options.bootstrap_resamples)
        ),
        "schema": GRADE_SCHEMA,
    }


def _judge_identity(provider: str | None, model: str | None, checked: _Checked) -> GradeJudge:
    """`judge`, with the sampling settings when they are not the defaults (one sample at 0)."""
    recorded: GradeJudge = {"provider": provider, "model": model}
    if checked.samples != 1 or checked.temperature != 0:
        recorded["samples"] = checked.samples
        recorded["temperature"] = checked.temperature
    return recorded


def _usage(stats: ClientStats | None) -> dict[str, int | float | None]:
    """`judge_usage`: the judge's counters this format reports, all 0 when none was called."""
    if stats is None:
        return dict.fromkeys(USAGE, 0)
    counters = stats.as_dict()
    return {name: counters[name] for name in USAGE}


def _judging(options: GradeOptions) -> JudgingOptions:
    """The judge flags, as the judging phase takes them."""
    return JudgingOptions(
        options.judge_timeout,
        options.judge_call_timeout,
        options.judge_ca_bundle,
        options.concurrency,
        options.use_store,
        options.store_path,
        options.quiet,
        options.batch,
        options.batch_poll_seconds,
        options.batch_fallback,
        given_rates(*options.prices),
    )
