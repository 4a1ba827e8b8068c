"""`agentjudge validate`: check ATIF trajectories and their subagent trees."""

from __future__ import annotations

import json

import typer

from agentjudge.atif import Limits
from agentjudge.cli.options import (
    MaxFileBytes,
    MaxFiles,
    MaxSteps,
    MaxTotal,
    Paths,
    TraceFormat,
    ValidateJson,
    ValidateQuiet,
)
from agentjudge.errors import EXIT_INVALID, EXIT_OK
from agentjudge.printable import printable
from agentjudge.report.validation import ValidationSummary, root_line, root_record
from agentjudge.traces.staging import load_runs

_DEFAULTS = Limits()


def validate_command(
    paths: Paths,
    as_json: ValidateJson = False,
    quiet: ValidateQuiet = False,
    max_file_bytes: MaxFileBytes = _DEFAULTS.max_file_bytes,
    max_trajectory_files: MaxFiles = _DEFAULTS.max_trajectory_files,
    max_steps_per_trajectory: MaxSteps = _DEFAULTS.max_steps_per_trajectory,
    max_total_steps: MaxTotal = _DEFAULTS.max_total_steps,
    trace_format: TraceFormat = None,
) -> int:
    """Check ATIF trajectories and trace files (OTLP GenAI, OpenInference) and their
    subagent trees without judging anything.

    Prints one line per root trajectory, per trace file what its reader did not map, and a
    summary. Exit 0 when every tree is valid, 1 when any is not, 3 on a usage error.
    """
    limits = Limits(max_file_bytes, max_trajectory_files, max_steps_per_trajectory, max_total_steps)
    summary = ValidationSummary()
    records = []
    trees, staged = load_runs(paths, limits, trace_format)
    if not as_json and not quiet:
        for display, left in staged.ignored.items():
            typer.echo(printable(f"{display}: {left.line()}"))
    for root in trees:
        summary.add(root)
        if as_json:
            records.append(root_record(root))
        elif not quiet or not root.valid:
            typer.echo(printable(root_line(root)))
            for problem in root.all_problems():
                typer.echo(f"    {printable(str(problem))}")
    if as_json:
        ignored = {display: left.as_dict() for display, left in staged.ignored.items()}
        document = {"roots": records, "summary": summary.as_dict(), "ignored": ignored}
        typer.echo(json.dumps(document, indent=2))
    else:
        typer.echo(summary.line())
    return EXIT_OK if summary.invalid == 0 else EXIT_INVALID
