"""The console text of `compare` over two grade results: graph-agents-cli 0.3.1's `eval
compare` text, line for line."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentjudge.printable import printable
from agentjudge.report import console_text
from agentjudge.report.console_text import say

_CHANGE_STYLE = {"regressed": "red", "improved": "green", "added": "cyan", "removed": "magenta"}


def render_compare(report: dict[str, Any], console: Console) -> None:
    """Print the report as `compare` shows it: headers, change tables, deltas, regressions.

    Lines are printed with soft wrapping (never folded, titles flush left), as
    graph-agents-cli prints them. Names and values from the files are shown literally.
    """
    say(console, "Baseline:  ", (report["baseline"], "cyan"))
    say(console, "Candidate: ", (report["candidate"], "cyan"))
    if not report["same_dataset"]:
        say(console, ("Warning:", "yellow"), " the two results come from different datasets.")
    for label in ("baseline", "candidate"):
        if report["traces_dataset_hash"][label]["mismatch"]:
            say(
                console,
                ("Warning:", "yellow"),
                f" the {label} results were graded against a dataset the traces were not "
                "generated from (traces_dataset_hash != dataset_hash).",
            )
    changed = {k: v for k, v in report["cases"].items() if v["change"] != "unchanged"}
    if changed:
        console.print(_changes_table(changed), soft_wrap=True)
    else:
        say(console, f"No case status changes across {len(report['cases'])} case(s).")
    if report["quality"]:
        console.print(_quality_table(report["quality"]), soft_wrap=True)
    differences = report["summary"]["differences"]
    if differences:
        say(console, "Summary deltas:")
        for key, entry in differences.items():
            delta = f" ({entry['delta']})" if "delta" in entry else ""
            say(console, f"  {key}: {entry['baseline']} -> {entry['candidate']}{delta}")
    if report["regressions"]:
        say(console, ("Regressions:", "red"))
        for line in report["regressions"]:
            say(console, f"  - {line}")
    if report["improvements"]:
        say(console, ("Improvements:", "green"))
        for line in report["improvements"]:
            say(console, f"  - {line}")
    if not report["regressions"]:
        say(console, ("No regressions.", "green"))


def _changes_table(changed: dict[str, dict[str, Any]]) -> Table:
    table = Table(title="Case status changes", show_header=True, header_style="bold")
    for header in ("Case", "Baseline", "Candidate", "Change"):
        table.add_column(header)
    for case_id, entry in changed.items():
        table.add_row(
            Text(printable(case_id)),
            Text(printable(str(entry["baseline"]))),
            Text(printable(str(entry["candidate"]))),
            Text(entry["change"], style=_CHANGE_STYLE.get(entry["change"], "")),
        )
    return table


def _quality_table(quality: dict[str, dict[str, Any]]) -> Table:
    table = console_text.table("Quality metrics", "Metric", "Baseline", "Candidate", "Delta")
    for metric, entry in quality.items():
        table.add_row(
            Text(printable(metric)),
            _percent(entry["baseline_pass_rate"], ".0%"),
            _percent(entry["candidate_pass_rate"], ".0%"),
            _percent(entry.get("delta"), "+.0%"),
        )
    return table


def _percent(value: Any, spec: str) -> Text:
    if value is None:
        return Text("n/a")
    return Text(format(value, spec) if isinstance(value, int | float) else str(value))
