"""`agentjudge report`: the HTML report of a results file; and the `--html` writer that
`score` and `grade` share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from agentjudge.errors import UsageError
from agentjudge.report.files import write_text_atomic
from agentjudge.report.html import NotAResultsDocument, render_html


def read_results(path: Path) -> dict[str, Any]:
    """A results file as a dict; a usage error when it is not one `report` can render."""
    try:
        document: Any = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file; pass a results JSON file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise UsageError(
            f"{path}: not JSON{where}; pass the results file of agentjudge score or grade"
        ) from None
    return document  # type: ignore[no-any-return]  # checked by render_html


def write_html_report(document: dict[str, Any], output: Path, source: Path | str) -> None:
    """Render `document` and write it to `output` atomically; `source` names the results
    in error messages."""
    try:
        page = render_html(document)
    except NotAResultsDocument as exc:
        raise UsageError(
            f"{source}: not an agentjudge results file: {exc}; pass the results file of "
            "agentjudge score or agentjudge grade"
        ) from None
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        # a results file edited by hand or cut short: a field has the wrong shape
        raise UsageError(
            f"{source}: a field of these results is missing or malformed "
            f"({type(exc).__name__}: {exc}); pass an unmodified results file"
        ) from None
    try:
        write_text_atomic(output, page)
    except OSError as exc:
        raise UsageError(
            f"{output}: cannot write the report here ({exc.strerror}); choose another --output"
        ) from None


def report_command(
    results: Annotated[
        Path, typer.Argument(help="Results JSON of agentjudge score or agentjudge grade.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")] = Path(
        "report.html"
    ),
) -> int:
    """Write a self-contained HTML report (no network needed) of a scoring or grading run."""
    write_html_report(read_results(results), output, results)
    typer.echo(f"report written to {output}")
    return 0


def register(app: typer.Typer) -> None:
    """Add the `report` command to the `agentjudge` app."""
    app.command("report")(report_command)
