"""The case-grading commands of `agentjudge`: grade, metric list, compare, analyze.

`grade` accepts exactly the flags graph-agents-cli passes to an `eval.grade` override
(`--traces --dataset --config --output --judge-provider --judge-model --judge-timeout`),
plus agentjudge's own (`--junit`, `--html`, `--concurrency`, `--no-cache`, `--quiet`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agentjudge.cases.project import (
    DEFAULT_CONFIG,
    DEFAULT_JUDGE_CALL_TIMEOUT,
    DEFAULT_JUDGE_TIMEOUT,
    RESULTS_DIR,
    find_root,
)
from agentjudge.cli_report import write_html_report
from agentjudge.errors import UsageError
from agentjudge.report.files import check_writable, write_atomic

if TYPE_CHECKING:
    from agentjudge.cases.config import EvalConfig

# The grading modules (jsonschema, the judge client, ...) are imported by the commands that
# use them, so that `agentjudge score` and `validate` start without them.

metric_app = typer.Typer(help="Discover the metrics a case can use.", no_args_is_help=True)


def grade_command(
    traces: Annotated[
        str | None,
        typer.Option(
            help="Traces file, ATIF trajectory, or a folder whose *.json files are merged "
            "[the project's newest artifacts/traces/traces_*.json]."
        ),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(help="Dataset file or folder [the dataset recorded in the traces]."),
    ] = None,
    config: Annotated[
        str | None, typer.Option(help=f"Eval config [{DEFAULT_CONFIG}, if present].")
    ] = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output", "-o", help=f"Results file, or a folder [{RESULTS_DIR}/results_<ts>.json]."
        ),
    ] = None,
    judge_provider: Annotated[
        str | None,
        typer.Option(
            help="Judge provider: openai-compatible, openai, azure, anthropic, gemini, local "
            "or fake."
        ),
    ] = None,
    judge_model: Annotated[str | None, typer.Option(help="Judge model name.")] = None,
    judge_timeout: Annotated[
        float,
        typer.Option(
            min=1,
            help="Seconds the whole judging phase may take (graph-agents-cli's meaning); "
            "over it: exit 3, nothing written.",
        ),
    ] = DEFAULT_JUDGE_TIMEOUT,
    judge_call_timeout: Annotated[
        float, typer.Option(min=1, help="Seconds one attempt of one judge call may take.")
    ] = DEFAULT_JUDGE_CALL_TIMEOUT,
    judge_ca_bundle: Annotated[
        str | None,
        typer.Option(help="CA certificates (PEM) of an HTTPS judge (default: the system's)."),
    ] = None,
    junit: Annotated[
        Path | None, typer.Option(help="Also write JUnit XML here (one testcase per case).")
    ] = None,
    html: Annotated[
        Path | None, typer.Option(help="Also write the HTML report of the results here.")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Judge calls in flight at most.")] = 16,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the verdict store.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the result.")] = False,
) -> int:
    """Grade traces against their cases' checks, judges and custom metrics; apply the gate.

    Exit codes: 0 gate met; 1 a case failed or a quality metric is under its min_pass_rate;
    2 a case is error or missing (incomplete run); 3 configuration error (nothing written);
    4 internal error (a bug).
    """
    from agentjudge.cases.grade import GradeOptions, grade
    from agentjudge.cases.report import print_summary, write_junit

    out = Console(soft_wrap=True)
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
        judge_provider=judge_provider,
        judge_model=judge_model,
        judge_timeout=judge_timeout,
        judge_call_timeout=judge_call_timeout,
        judge_ca_bundle=judge_ca_bundle,
        concurrency=concurrency,
        cache=not no_cache,
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
            options, lambda text: err.print(f"[yellow]warning:[/yellow] {escape(text)}"), progress
        )
    if junit is not None:
        write_junit(junit, run.document)
    if html is not None:
        write_html_report(run.document, html, run.output, "--html")
    if not quiet and run.stats is not None and run.stats.cache_hits:
        from agentjudge.judge.store import store_line

        err.print(store_line(run.stats, None), highlight=False)
    if quiet:
        summary = run.document["summary"]
        out.print(f"agentjudge grade: exit code {run.exit_code}; {json.dumps(summary)}")
    else:
        print_summary(run.document, out)
        out.print(f"results saved to {run.output}")
    return run.exit_code


def compare_command(
    baseline: Annotated[Path, typer.Argument(help="The earlier results file.")],
    candidate: Annotated[Path, typer.Argument(help="The later results file.")],
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when anything regressed.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> int:
    """Compare two results files case by case: regressions, improvements, score deltas."""
    from agentjudge.cases.compare import (
        compare_exit_code,
        compare_results,
        load_results,
        render_compare,
    )

    report = compare_results(
        load_results(baseline), load_results(candidate), baseline.name, candidate.name
    )
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        render_compare(report, Console(soft_wrap=True))
    return compare_exit_code(report, fail_on_regression)


def analyze_command(
    results: Annotated[
        Path | None,
        typer.Option(help=f"Results file [the project's newest {RESULTS_DIR}/results_*.json]."),
    ] = None,
    top_k: Annotated[int | None, typer.Option(min=1, help="Show the K largest clusters.")] = None,
) -> int:
    """Cluster the reasons of every non-passed case into failure patterns.

    The analysis is saved as artifacts/analysis_<ts>.json."""
    from agentjudge.cases.analyze import analysis_path, analyze_results, render_analysis
    from agentjudge.cases.compare import load_results

    root = find_root()
    if results is not None and not results.exists() and root is not None:
        results = root / results
    path = results or _newest_results(root)
    now = datetime.now().astimezone()
    report = analyze_results(load_results(path), str(path), now)
    target = analysis_path(root or Path.cwd(), now)
    write_atomic(target, report, indent=2)
    render_analysis(report, Console(soft_wrap=True), top_k, target.resolve())
    return 0


def _newest_results(root: Path | None) -> Path:
    if root is None:
        raise UsageError(
            "--results: not inside a graph-agents-cli project; pass --results RESULTS_FILE"
        )
    folder = root / RESULTS_DIR
    files = sorted(folder.glob("results_*.json"), key=lambda p: p.stat().st_mtime)
    if not files:
        raise UsageError(f"--results: no results_*.json in {folder}; run agentjudge grade first")
    return files[-1]


@metric_app.command("list")
def metric_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print the catalogue as JSON.")] = False,
) -> int:
    """List the deterministic checks, modifiers, judges and this project's metrics."""
    from agentjudge.cases.catalog import catalog
    from agentjudge.cases.config import load_config

    root = find_root()
    config: EvalConfig | None = None
    if root is not None and (root / DEFAULT_CONFIG).is_file():
        config = load_config(root / DEFAULT_CONFIG)
    entries = catalog(config)
    if as_json:
        typer.echo(json.dumps(entries, indent=2, ensure_ascii=False))
        return 0
    console = Console(soft_wrap=True)
    for title, rows in (
        ("Checks (expect.<name>)", entries["checks"]),
        ("Modifiers (expect.<name>)", entries["modifiers"]),
    ):
        console.print(f"[bold]{title}[/bold]")
        for row in rows:
            console.print(f"  [cyan]{row['name']}[/cyan]  {row['description']}")
    console.print("[bold]Judges (judge.<name>)[/bold]")
    for row in entries["judges"]:
        mark = " (quality)" if row["name"] in entries["quality_metrics"] else ""
        console.print(
            f"  [cyan]{row['name']}[/cyan]{mark}  scale {row['scale']:g}  {row['description']}"
            f"  [dim]{row['source']}[/dim]"
        )
    if entries["custom_metrics"]:
        console.print("[bold]Custom metrics (custom_metrics)[/bold]")
        for row in entries["custom_metrics"]:
            console.print(
                f"  [cyan]{row['name']}[/cyan]  {row['callable']}  threshold {row['threshold']:g}"
            )
    return 0


def register(app: typer.Typer) -> None:
    """Add the case-grading commands to the `agentjudge` app."""
    app.command("grade")(grade_command)
    app.command("compare")(compare_command)
    app.command("analyze")(analyze_command)
    app.add_typer(metric_app, name="metric")
