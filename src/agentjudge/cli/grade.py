"""`agentjudge grade`: grade a graph-agents-cli project's traces against its cases.

It accepts exactly the flags graph-agents-cli passes to an `eval.grade` override
(`--traces --dataset --config --output --judge-provider --judge-model --judge-timeout`;
`--judge-provider` is `--judge`'s other spelling, hidden from --help), plus agentjudge's
own (`--judge-call-timeout`, `--judge-ca-bundle`, `--junit`, `--html`, `--concurrency`,
`--cache`, `--no-cache`, `--samples`, `--temperature`, `--fail-on-unstable`, `--quiet`,
`--bootstrap-seed`, `--bootstrap-resamples`, `--price-in`, `--price-cache-read`,
`--price-cache-write`, `--price-out`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agentjudge.cases.loading import DEFAULT_JUDGE_CALL_TIMEOUT, DEFAULT_JUDGE_TIMEOUT
from agentjudge.cli.aliases import accepting
from agentjudge.cli.options import (
    GRADE_ALIASES,
    Batch,
    BatchFallback,
    BatchPollSeconds,
    BootstrapResamples,
    BootstrapSeed,
    CachePath,
    Concurrency,
    Dataset,
    EvalConfigFile,
    FailOnUnstable,
    GradeHtml,
    GradeJudge,
    GradeJudgeCaBundle,
    GradeJudgeModel,
    GradeOutput,
    GradeQuiet,
    GradeSamples,
    GradeTemperature,
    JudgeCallTimeout,
    JudgeTimeout,
    Junit,
    NoCache,
    PriceCacheRead,
    PriceCacheWrite,
    PriceIn,
    PriceOut,
    Traces,
    one_store_choice,
)
from agentjudge.collisions import Named
from agentjudge.files import check_writable, write_text_atomic
from agentjudge.printable import printable

if TYPE_CHECKING:
    from agentjudge.cases.grade import GradeRun

# The grading modules (jsonschema, the judge client, ...) are imported by the commands that
# use them, so that `agentjudge score` and `validate` start without them.


@accepting(GRADE_ALIASES)
def grade_command(
    traces: Traces = None,
    dataset: Dataset = None,
    config: EvalConfigFile = None,
    output: GradeOutput = None,
    judge: GradeJudge = None,
    judge_model: GradeJudgeModel = None,
    judge_timeout: JudgeTimeout = DEFAULT_JUDGE_TIMEOUT,
    judge_call_timeout: JudgeCallTimeout = DEFAULT_JUDGE_CALL_TIMEOUT,
    judge_ca_bundle: GradeJudgeCaBundle = None,
    junit: Junit = None,
    html: GradeHtml = None,
    concurrency: Concurrency = 16,
    cache_path: CachePath = None,
    no_cache: NoCache = False,
    batch: Batch = False,
    batch_poll_seconds: BatchPollSeconds = 30.0,
    batch_fallback: BatchFallback = "batch",
    samples: GradeSamples = None,
    temperature: GradeTemperature = None,
    fail_on_unstable: FailOnUnstable = False,
    quiet: GradeQuiet = False,
    bootstrap_seed: BootstrapSeed = None,
    bootstrap_resamples: BootstrapResamples = None,
    price_in: PriceIn = None,
    price_cache_read: PriceCacheRead = None,
    price_cache_write: PriceCacheWrite = None,
    price_out: PriceOut = None,
    aliased: dict[str, str] | None = None,  # --judge-provider, graph-agents-cli's --judge
) -> int:
    """Grade traces against their cases' checks, judges and custom metrics; apply the gate.

    Exit codes: 0 gate met; 1 a case failed or a quality metric is under its min_pass_rate
    (or, with --fail-on-unstable, a case's judge samples fall on both sides of a threshold);
    2 a case is error or missing (incomplete run); 3 configuration error (nothing written);
    4 internal error (a bug).
    """
    one_store_choice(cache_path, no_cache)
    from agentjudge.cases.grade import GradeOptions, grade
    from agentjudge.errors import UsageError

    if batch_fallback not in ("batch", "online"):
        raise UsageError(f"--batch-fallback {batch_fallback!r}: give batch or online")
    given = (aliased or {}).get("judge")
    if judge is not None and given is not None:
        raise UsageError("--judge is given twice (--judge-provider is its other spelling)")
    err = Console(stderr=True, soft_wrap=True)
    if junit is not None:
        check_writable(junit, "--junit", "the JUnit XML")
    if html is not None:
        check_writable(html, "--html", "the HTML report")
    options = GradeOptions(
        traces=traces,
        dataset=dataset,
        config=config,
        output=output,
        judge_provider=judge if judge is not None else given,
        judge_model=judge_model,
        judge_timeout=judge_timeout,
        judge_call_timeout=judge_call_timeout,
        judge_ca_bundle=judge_ca_bundle,
        concurrency=concurrency,
        use_store=not no_cache,
        store_path=cache_path,
        batch=batch,
        batch_poll_seconds=batch_poll_seconds,
        batch_fallback=batch_fallback,
        samples=samples,
        temperature=temperature,
        fail_on_unstable=fail_on_unstable,
        bootstrap_seed=0 if bootstrap_seed is None else bootstrap_seed,
        bootstrap_resamples=bootstrap_resamples or 1000,
        reports=tuple(
            Named(flag, path) for flag, path in (("--junit", junit), ("--html", html)) if path
        ),
        quiet=quiet,
        prices=(price_in, price_cache_read, price_cache_write, price_out),
    )
    bar = Progress(
        TextColumn("judging"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=quiet or not sys.stderr.isatty(),
        transient=True,
    )

    def progress(total: int) -> Callable[[], None]:
        task = bar.add_task("items", total=total)
        return lambda: bar.advance(task)

    with bar:
        run = grade(
            options,
            lambda text: err.print(f"[yellow]warning:[/yellow] {escape(printable(text))}"),
            progress,
        )
    _report(run, junit, html, cache_path, quiet, err)
    return run.exit_code


def _report(
    run: GradeRun,
    junit: Path | None,
    html: Path | None,
    store: str | None,  # --cache
    quiet: bool,
    err: Console,
) -> None:
    """Write the extra reports that were asked for, then print the outcome."""
    from agentjudge.report.grade_console import print_summary

    out = Console(soft_wrap=True)
    if junit is not None or html is not None:
        document = run.read_document()  # every case: these reports list them all
        if junit is not None:
            from agentjudge.report.grade_junit import write_junit  # only when asked

            write_junit(junit, document)
        if html is not None:
            from agentjudge.report.html import grade_page  # its modules only when asked

            write_text_atomic(html, grade_page(document), "--html", "the HTML report")
    if not quiet and run.stats is not None and run.stats.store_hits:
        from agentjudge.judge.store import store_line

        err.print(store_line(run.stats, store), highlight=False)
    if quiet:
        summary = run.document["summary"]
        out.print(f"agentjudge grade: exit code {run.exit_code}; {json.dumps(summary)}")
    else:
        print_summary(run.document, out, run.flagged)
        out.print(f"results saved to {run.output}")
