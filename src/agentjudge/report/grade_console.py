"""The console summary of a graded run: status counts, quality metrics, the cases needing
attention and the verdict.

The table of cases needing attention is capped (`MAX_CASE_ROWS`): a run of 100,000
cases must not spend its time printing; the results file holds every case.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agentjudge.printable import printable
from agentjudge.report.cost import cost_text
from agentjudge.results.grade import (
    ERROR,
    FAILED,
    MISSING,
    PASSED,
    STATUSES,
    CaseResult,
    GradeResults,
    QualityResult,
)
from agentjudge.results.grade import QUALITY_BELOW_THRESHOLD as QUALITY
from agentjudge.trust.intervals import with_interval

MAX_CASE_ROWS = 20
_STYLE = {PASSED: "green", QUALITY: "yellow", FAILED: "red", ERROR: "red", MISSING: "magenta"}
_VERDICT = {
    0: "[green]gate met[/green]",
    1: "[red]gate failed[/red]",
    2: "[magenta]incomplete[/magenta]",
}


def print_summary(
    document: GradeResults, console: Console, flagged: list[CaseResult] | None = None
) -> None:
    """Status counts, quality metrics, the first cases needing attention, the verdict.

    `flagged`: the first records of cases not passed, when `document` holds no `cases`
    (grade keeps them on disk); else they are found in `document["cases"]`."""
    summary = document["summary"]
    table = Table(title="agentjudge grade", show_header=True, header_style="bold")
    table.add_column("Status")
    table.add_column("Cases", justify="right")
    for status in STATUSES:
        style = _STYLE[status] if summary[status] else "dim"
        table.add_row(f"[{style}]{status}[/{style}]", str(summary[status]))
    table.add_row("[bold]planned[/bold]", str(document["planned"]))
    console.print(table)
    intervals = document.get("metrics_interval")
    if document["planned"]:
        bounds = intervals["pass_rate"] if intervals else None
        rate = with_interval(summary[PASSED] / document["planned"], bounds, ".0%")
        console.print(f"pass rate: {rate}")
    if document["quality"]:
        metrics = intervals["metrics"] if intervals else {}
        console.print(_quality_table(document["quality"], metrics))
    if flagged is None:
        flagged = [c for c in document["cases"] if c["status"] != PASSED][:MAX_CASE_ROWS]
    if flagged:
        cases = Table(title="Cases needing attention", show_header=True, header_style="bold")
        cases.add_column("Case")
        cases.add_column("Status")
        cases.add_column("Reasons")
        for case in flagged[:MAX_CASE_ROWS]:
            reasons = case["reasons"][:3] + (["..."] if len(case["reasons"]) > 3 else [])
            style = _STYLE[case["status"]]
            cases.add_row(
                escape(printable(case["id"])),
                f"[{style}]{case['status']}[/{style}]",
                escape("\n".join(printable(reason) for reason in reasons)),
            )
        console.print(cases)
        more = document["planned"] - summary[PASSED] - len(flagged)
        if more > 0:
            console.print(f"... and {more} more in the results file")
    unstable = summary.get("unstable")
    if unstable:
        console.print(
            f"unstable: {unstable} case(s) whose {summary['samples']} judge samples fall on "
            "both sides of a threshold (each metric's samples are in the results file)"
        )
    for text in document["warnings"]:
        console.print(f"[bold yellow]warning:[/bold yellow] {escape(printable(text))}")
    cost = document.get("judge_cost")
    if cost is not None:  # a judge was called
        console.print(escape(printable(f"judge cost: {cost_text(cost)}")), highlight=False)
    code = summary["exit_code"]
    caveat = ""
    if code == 0 and document["fake_model"]:
        caveat = " [yellow](fake model: plumbing check only, not a quality signal)[/yellow]"
    console.print(f"result: {_VERDICT.get(code, str(code))} (exit code {code}){caveat}")


def _quality_table(
    quality: dict[str, QualityResult], intervals: dict[str, list[float] | None]
) -> Table:
    table = Table(title="Quality metrics", show_header=True, header_style="bold")
    for name, justify in (("Metric", "left"), ("Pass rate", "right"), ("Passed/scored", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_column("Min", justify="right")
    table.add_column("Met")
    for name, entry in quality.items():
        rate, met = entry["pass_rate"], entry["met"]
        if met is None:
            met_text = (
                "n/a (no case ran it)" if entry["status"] == "not_run" else "n/a (incomplete)"
            )
        else:
            met_text = "[green]yes[/green]" if met else "[red]no[/red]"
        table.add_row(
            escape(printable(name)),
            "n/a" if rate is None else with_interval(rate, intervals.get(name), ".0%"),
            f"{entry['passed']}/{entry['scored']}",
            f"{entry['min_pass_rate']:.0%}",
            met_text,
        )
    return table
