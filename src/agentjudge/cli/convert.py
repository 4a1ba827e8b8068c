"""`agentjudge convert`: public datasets as ATIF trajectories plus calibration labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentjudge.errors import EXIT_OK

convert_app = typer.Typer(
    help="Convert public datasets into ATIF trajectories and calibration labels.",
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
