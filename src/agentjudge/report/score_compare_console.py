"""The console text of `compare` over two `score` results (the report of score_compare.py)."""

from __future__ import annotations

from functools import partial
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentjudge.printable import printable
from agentjudge.report import console_text

# the console lists the largest changes only; `--json` has every trajectory
SHOWN_TRAJECTORIES = 20
SHOWN_UNMATCHED = 10


def render_score_compare(report: dict[str, Any], console: Console) -> None:
    """Headers, the largest per-trajectory changes, the paired statistics, category deltas,
    unmatched trajectories and the verdict on regression."""
    say = partial(console_text.say, console)
    say("Baseline:  ", (report["baseline"], "cyan"))
    say("Candidate: ", (report["candidate"], "cyan"))
    if not report["comparable"]:
        say(("Warning:", "yellow"), f" runs are not comparable: {report['difference']} "
            "(compared anyway: --allow-incomparable)")  # fmt: skip
    changed = [r for r in report["trajectories"] if r["delta"]]
    if changed:
        console.print(_trajectory_table(changed), soft_wrap=True)
    overall = report["overall_score"]
    say(f"atif_overall_score: {_num(overall['baseline'])} -> {_num(overall['candidate'])}")
    say(_paired_line(report))
    if report["failure_categories"]:
        console.print(_category_table(report["failure_categories"]), soft_wrap=True)
    unmatched = report["unmatched"]
    if unmatched["count"]:
        say(("Unmatched:", "yellow"), f" {unmatched['count']} trajectory(ies)")
        for side in ("baseline", "candidate"):
            labels = unmatched[side]
            if labels:
                more = len(labels) - SHOWN_UNMATCHED
                extra = f" and {more} more" if more > 0 else ""
                say(f"  only in the {side}: {', '.join(labels[:SHOWN_UNMATCHED])}{extra}")
    if report["regressed"]:
        say(("Regression:", "red"), f" the mean drop is significant at {report['significance']}")
    else:
        say(("No significant regression.", "green"))


def _num(value: Any, spec: str = ".4f") -> str:
    return "n/a" if not isinstance(value, int | float) else format(value, spec)


def _paired_line(report: dict[str, Any]) -> str:
    if report["mean_delta"] is None:
        return "Mean delta: n/a (no paired trajectory was scored in both runs)"
    bounds = report["mean_delta_interval"]
    interval = "" if bounds is None else (
        f" ({report['level']:.0%} CI {bounds[0]:+.4f}\u2013{bounds[1]:+.4f})"
    )  # fmt: skip
    return (
        f"Mean delta: {report['mean_delta']:+.4f}{interval}, p = {report['p_value']:.4f} "
        f"({report['test']}) over {report['paired']} paired trajectory(ies)"
    )


def _trajectory_table(changed: list[dict[str, Any]]) -> Table:
    largest = sorted(changed, key=lambda r: (-abs(r["delta"]), str(r["trajectory_id"])))
    shown = largest[:SHOWN_TRAJECTORIES]
    title = "Largest score changes"
    if len(largest) > len(shown):
        title += f" ({len(shown)} of {len(largest)})"
    table = console_text.table(title, "Trajectory", "Baseline", "Candidate", "Delta")
    for row in shown:
        style = "red" if row["delta"] < 0 else "green"
        table.add_row(
            Text(printable(str(row["trajectory_id"] or row["input_sha256"]))),
            Text(_num(row["baseline"])),
            Text(_num(row["candidate"])),
            Text(_num(row["delta"], "+.4f"), style=style),
        )
    return table


def _category_table(categories: dict[str, dict[str, Any]]) -> Table:
    table = console_text.table(
        "Failure categories (steps)", "Category", "Baseline", "Candidate", "Delta"
    )
    for name, entry in categories.items():
        table.add_row(
            Text(printable(name)),
            str(entry["baseline"]),
            str(entry["candidate"]),
            f"{entry['delta']:+d}",
        )
    return table
