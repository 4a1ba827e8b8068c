"""The `agentjudge` command: parses flags, calls the library, maps errors to exit codes.

One module per command; this one holds the app, its root options (`--version`, `--debug`)
and `main`, which turns errors into one line and an exit code.

Exit codes (docs/scoring.md, docs/cases.md): 0 success, 1 invalid input (or an
incomplete/failed gate), 2 job failed, 3 usage or configuration error, 4 internal error (a
bug), 130 interrupted.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Annotated

import typer

from agentjudge import __version__
from agentjudge.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    AgentJudgeError,
    InputError,
    clip,
)
from agentjudge.printable import printable

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


# Set by --debug (or AGENTJUDGE_DEBUG=1): an internal error then shows its traceback.
_debug = {"on": False}


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="Show the traceback of an internal error (exit 4), to report it."
        ),
    ] = False,
) -> None:
    """Judge recorded AI-agent runs."""
    _debug["on"] = debug


# Each command's module and its command (a function) or group (a Typer), in the order
# `--help` lists them (a group such as `metric` comes after the commands). A run imports
# only the module of the command it runs: `grade` has no use for the ATIF models that
# `score` loads, and start-up is part of every CI gate's time.
_COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate", "validate_command"),
    "score": ("score", "score_command"),
    "evalhub": ("evalhub", "evalhub_command"),
    "judge-server": ("judge_server", "judge_server_command"),
    "grade": ("grade", "grade_command"),
    "compare": ("compare", "compare_command"),
    "analyze": ("analyze", "analyze_command"),
    "calibrate": ("calibrate", "calibrate_command"),
    "metric": ("metric", "metric_app"),
    "convert": ("convert", "convert_app"),
    "report": ("report", "report_command"),
    "review": ("review", "review_command"),
}
# Commands that say themselves what Ctrl-C left behind (`review`: its labels are on disk);
# for the others, main says nothing was written.
_SAY_INTERRUPTED = frozenset({"review"})


def _named(argv: list[str]) -> str | None:
    """The command `argv` names (its first word that is not a flag), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def _register(argv: list[str]) -> None:
    """Add to `app` the command `argv` names, or every command when it names none (the
    root's `--help`, a typo that click answers with the list)."""
    named = _named(argv)
    for name in [named] if named in _COMMANDS else list(_COMMANDS):
        module, attribute = _COMMANDS[name]
        command = getattr(importlib.import_module(f"agentjudge.cli.{module}"), attribute)
        if isinstance(command, typer.Typer):
            app.add_typer(command, name=name)
        else:
            app.command(name)(command)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors print one line each and map to their exit code."""
    argv = sys.argv[1:] if argv is None else argv
    app.registered_commands.clear()
    app.registered_groups.clear()
    _register(argv)
    try:
        result = app(args=argv, standalone_mode=False, prog_name="agentjudge")
    except _ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare group: its help is the answer
            exc.show()  # type: ignore[attr-defined]  # click's ClickException.show
        else:  # one `error:` line like every other usage error, not click's three
            typer.echo(f"error: {printable(clip(_usage_line(exc), 2000))}", err=True)
        return EXIT_USAGE
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(f"error: {printable(str(problem))}", err=True)
        return exc.exit_code
    except AgentJudgeError as exc:
        # the sites that quote a value cut it; this bounds the ones that do not. A file
        # name or id in it comes from input: escaped, it cannot forge a line of its own
        typer.echo(f"error: {printable(clip(str(exc), 2000))}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        result = EXIT_INTERRUPTED
    except Exception as exc:  # a bug of ours: CI must tell it from a failing gate
        return internal_error(exc, _debug["on"] or os.environ.get("AGENTJUDGE_DEBUG") == "1")
    # typer turns Ctrl-C into this code itself
    if result == EXIT_INTERRUPTED and _named(argv) not in _SAY_INTERRUPTED:
        typer.echo(
            "interrupted: nothing was written; the verdicts judged so far are kept in the "
            "verdict store (unless --no-cache), so running the same command again resumes",
            err=True,
        )
    return result if isinstance(result, int) else EXIT_OK


def _usage_line(exc: Exception) -> str:
    """Click's message of a bad command line (`No such option: --bogus`), and where the
    help is: `...; see agentjudge score --help`."""
    message = str(exc.format_message()).rstrip(".")  # type: ignore[attr-defined]
    context = getattr(exc, "ctx", None)
    command = context.command_path if context is not None else "agentjudge"
    return f"{message}; see {command} --help"


def internal_error(exc: BaseException, debug: bool) -> int:
    """Say in one line that `exc` is a bug of ours and how to report it; the traceback only
    when `debug`. The exception's own text is left out: it may hold input or a credential."""
    if debug:
        traceback.print_exception(exc)
    where = _origin(exc)
    typer.echo(
        f"error: internal error ({type(exc).__name__}{where}): this is a bug in agentjudge "
        f"{__version__}, not in your input; please report it to the agentjudge maintainers "
        "with the command and what it prints when run again as `agentjudge --debug ...` "
        "(or with AGENTJUDGE_DEBUG=1)",
        err=True,
    )
    return EXIT_INTERNAL


def _origin(exc: BaseException) -> str:
    """` at module.py:123`: the innermost frame of ours, to make a report findable."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f"{os.sep}agentjudge{os.sep}" in f.filename]
    if not ours:
        return ""
    frame = ours[-1]
    return f" at {clip(os.path.basename(frame.filename), 60)}:{frame.lineno}"
