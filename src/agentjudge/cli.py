"""The `agentjudge` command: parses flags, calls the library, maps errors to exit codes.

Exit codes (docs/cli.md): 0 success, 1 invalid input (or an incomplete/failed gate),
2 job failed, 3 usage or configuration error, 130 interrupted.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from agentjudge import __version__
from agentjudge.atif import Limits, load_trees
from agentjudge.errors import (
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    AgentJudgeError,
    InputError,
)
from agentjudge.report.validation import ValidationSummary, root_line, root_record

app = typer.Typer(
    name="agentjudge",
    help="Judge recorded AI-agent runs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# typer vendors click privately; its public BadParameter lets us name the base of usage errors.
_ClickException: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentjudge {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Judge recorded AI-agent runs."""


MaxFileBytes = Annotated[
    int, typer.Option("--max-file-bytes", min=1, help="Largest trajectory file accepted.")
]
MaxFiles = Annotated[
    int, typer.Option("--max-trajectory-files", min=1, help="Most trajectory files accepted.")
]
MaxSteps = Annotated[
    int, typer.Option("--max-steps-per-trajectory", min=1, help="Most steps in one node.")
]
MaxTotal = Annotated[int, typer.Option("--max-total-steps", min=1, help="Most steps in one tree.")]

_DEFAULTS = Limits()


@app.command()
def validate(
    paths: Annotated[
        list[Path], typer.Argument(help="ATIF files or folders (searched recursively).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print only invalid roots and the summary.")
    ] = False,
    max_file_bytes: MaxFileBytes = _DEFAULTS.max_file_bytes,
    max_trajectory_files: MaxFiles = _DEFAULTS.max_trajectory_files,
    max_steps_per_trajectory: MaxSteps = _DEFAULTS.max_steps_per_trajectory,
    max_total_steps: MaxTotal = _DEFAULTS.max_total_steps,
) -> int:
    """Check ATIF trajectories and their subagent trees without judging anything.

    Prints one line per root trajectory and a summary. Exit 0 when every tree is valid,
    1 when any is not, 3 on a usage error.
    """
    limits = Limits(max_file_bytes, max_trajectory_files, max_steps_per_trajectory, max_total_steps)
    summary = ValidationSummary()
    records = []
    for root in load_trees(paths, limits):
        summary.add(root)
        if as_json:
            records.append(root_record(root))
        elif not quiet or not root.valid:
            typer.echo(root_line(root))
            for problem in root.all_problems():
                typer.echo(f"    {problem}")
    if as_json:
        typer.echo(json.dumps({"roots": records, "summary": summary.as_dict()}, indent=2))
    else:
        typer.echo(summary.line())
    return EXIT_OK if summary.invalid == 0 else EXIT_INVALID


@app.command("judge-server")
def judge_server(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one).")] = 8000,
    latency: Annotated[float, typer.Option(min=0, help="Seconds per answer.")] = 0.0,
    capacity: Annotated[
        int | None, typer.Option(min=1, help="Concurrent requests before answering 429.")
    ] = None,
) -> int:
    """Run the scriptable test judge (OpenAI-compatible) for plumbing checks. Not a judge of
    quality: its scores come from `[[score=X]]` markers or a hash of the request."""
    from agentjudge.testing import JudgeServer, Script

    async def serve() -> None:
        server = JudgeServer(Script(latency=latency, capacity=capacity), port=port)
        await server.start()
        typer.echo(f"test judge listening on {server.base_url} (Ctrl-C stops it)")
        await asyncio.Event().wait()

    asyncio.run(serve())
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors print one line each and map to their exit code."""
    try:
        result = app(args=argv, standalone_mode=False)
    except _ClickException as exc:
        exc.show()  # type: ignore[attr-defined]  # click's ClickException.show
        return EXIT_USAGE
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(f"error: {problem}", err=True)
        return exc.exit_code
    except AgentJudgeError as exc:
        typer.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    return result if isinstance(result, int) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
