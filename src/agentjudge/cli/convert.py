"""`agentjudge convert`: public datasets as ATIF trajectories plus calibration labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentjudge.cli.options import TraceFormat
from agentjudge.errors import EXIT_OK, UsageError
from agentjudge.printable import printable

convert_app = typer.Typer(
    help="Convert trace files, and public datasets, into ATIF trajectories.",
    no_args_is_help=True,
)


@convert_app.command("who-and-when")
def convert_who_and_when_command(
    src: Annotated[Path, typer.Argument(help="A Who&When file or folder (searched recursively).")],
    out: Annotated[Path, typer.Argument(help="Output folder.")],
) -> int:
    """Convert Who&When runs: OUT/trajectories/*.json (ATIF), OUT/labels.json (for
    `agentjudge calibrate`), OUT/references.json (a reference registry of the ground truths).

    Exit 0: converted; 1: a file is not a Who&When run (nothing written); 3: usage error.
    """
    from agentjudge.convert.folder import convert_who_and_when

    done = convert_who_and_when(src, out)
    typer.echo(
        f"converted {done.runs} runs ({done.steps} steps): trajectories in {done.trajectories}, "
        f"labels in {done.labels}, reference answers in {done.references}"
    )
    return EXIT_OK


@convert_app.command("traces")
def convert_traces_command(
    paths: Annotated[
        list[Path], typer.Argument(help="Trace files or folders (searched recursively).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Output folder.")],
    to: Annotated[str, typer.Option("--to", help="The format to write: atif.")] = "atif",
    trace_format: TraceFormat = None,
) -> int:
    """Convert trace files (OTLP GenAI, OpenInference, Claude Code, Codex, Inspect) into
    ATIF: one validated document per run (a trace, a session, a sample),
    OUT/<file>__<run>.json, subagents embedded.

    Exit 0: converted; 1: a file is not a readable trace (nothing written); 3: usage error.
    """
    from agentjudge.traces.to_atif import convert_to_atif

    if to != "atif":
        raise UsageError(f"--to {to}: the only format written is atif")
    done = convert_to_atif(paths, out, trace_format)
    for note in done.ignored:
        typer.echo(printable(note))
    typer.echo(f"converted {len(done.written)} runs into {out}")
    return EXIT_OK
