"""The console text of `analyze`: the failure clusters' table and where the analysis went,
as graph-agents-cli 0.3.1's `eval analyze` prints them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentjudge.printable import printable

# The console lists this many case ids per cluster, then "...".
SHOWN_CASE_IDS = 5


def render_analysis(
    analysis: dict[str, Any], console: Console, top_k: int | None, saved_to: Path
) -> None:
    """Print the cluster table (the `top_k` largest, or all) and where the analysis was
    saved. The file always holds every cluster."""
    clusters = analysis["clusters"]
    if not clusters:
        console.print(
            Text.assemble(
                ("No failures to analyze", "green"),
                printable(
                    f" in {analysis['results_file']} ({analysis['total_cases']} case(s) passed)."
                ),
            ),
            soft_wrap=True,
        )
    else:
        shown = clusters[:top_k] if top_k else clusters
        console.print(_cluster_table(analysis, shown), soft_wrap=True)
    saved = Text.assemble("Analysis saved to ", (printable(str(saved_to)), "green"))
    console.print(saved, soft_wrap=True)


def _cluster_table(analysis: dict[str, Any], shown: list[dict[str, Any]]) -> Table:
    table = Table(
        title=f"Failure clusters ({analysis['flagged_cases']} of {analysis['total_cases']} cases)",
        show_header=True,
        header_style="bold",
    )
    table.add_column("#", justify="right")
    table.add_column("Status")
    table.add_column("Check / metric")
    table.add_column("Pattern")
    table.add_column("Cases", justify="right")
    table.add_column("Case ids")
    for cluster in shown:
        ids = cluster["case_ids"]
        listed = ", ".join(ids[:SHOWN_CASE_IDS]) + (", ..." if len(ids) > SHOWN_CASE_IDS else "")
        table.add_row(
            str(cluster["rank"]),
            Text(printable(str(cluster["status"]))),
            Text(printable(cluster["kind"])),
            Text(printable(cluster["pattern"])),
            str(cluster["count"]),
            Text(printable(listed)),
        )
    return table
