"""`agentjudge report`: the HTML report of a results file; and the `--html` writer that
`score` and `grade` share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from agentjudge.cli.options import HtmlOutput, Results
from agentjudge.collisions import Named, check_no_collision
from agentjudge.errors import UsageError
from agentjudge.files import read_json, write_text_atomic
from agentjudge.printable import printable


def write_html_report(
    document: Any, output: Path, source: Path | str, flag: str = "--output"
) -> None:
    """Render `document` (a parsed results document of either command) and write it to
    `output` atomically; `source` names the results in error messages, `flag` the option
    that chose `output`."""
    # the page's modules (and the results contract's pydantic) load only when a report is
    # asked for: grade and score start on every CI gate
    from agentjudge.report.html import NotAResultsDocument, render_html

    try:
        page = render_html(document, str(source))
    except NotAResultsDocument as exc:
        raise UsageError(
            f"{source}: not an agentjudge results file: {exc}; pass the results file of "
            "agentjudge score or agentjudge grade"
        ) from None
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        # grade results edited by hand or cut short (score results are checked against
        # their contract first, results/score.py): a field has the wrong shape
        raise UsageError(
            f"{source}: a field of these results is missing or malformed "
            f"({type(exc).__name__}: {exc}); pass an unmodified results file"
        ) from None
    write_text_atomic(output, page, flag, "the HTML report")


def report_command(results: Results, output: HtmlOutput = Path("report.html")) -> int:
    """Write a self-contained HTML report (no network needed) of a scoring or grading run."""
    check_no_collision([Named("--output", output)], [Named("the results file", results)])
    write_html_report(read_json(results, "results file"), output, results)
    typer.echo(printable(f"report written to {output}"))
    return 0
