"""`agentjudge report`: the HTML report of a results file."""

from __future__ import annotations

from pathlib import Path

import typer

from agentjudge.cli.options import HtmlOutput, Results
from agentjudge.collisions import Named, check_no_collision
from agentjudge.files import read_json, write_text_atomic
from agentjudge.printable import printable


def report_command(results: Results, output: HtmlOutput = Path("report.html")) -> int:
    """Write a self-contained HTML report (no network needed) of a scoring or grading run."""
    from agentjudge.report.html import results_page

    check_no_collision([Named("--output", output)], [Named("the results file", results)])
    page = results_page(read_json(results, "results file"), str(results))
    write_text_atomic(output, page, "--output", "the HTML report")
    typer.echo(printable(f"report written to {output}"))
    return 0
