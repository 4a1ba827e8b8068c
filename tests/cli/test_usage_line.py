"""A bad command line (an unknown flag or command, a value of the wrong type, a missing
argument) is one `error:` line naming the flag and where the help is, exit 3, as every
other usage error is; not click's three lines of `Usage:`, `Try ...` and `Error:`."""

from __future__ import annotations

import pytest

from agentjudge.cli import main


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["score", "--bogus", "runs/"],
            "error: No such option: --bogus; see agentjudge score --help",
        ),
        (
            ["score", "runs/", "--concurrency", "abc"],
            "error: Invalid value for '--concurrency': Input should be a valid integer, unable "
            "to parse string as an integer; see agentjudge score --help",
        ),
        (["validate"], "error: Missing argument 'paths'; see agentjudge validate --help"),
        (["nosuchcmd"], "error: No such command 'nosuchcmd'; see agentjudge --help"),
        (
            ["convert", "traces", "x.json"],
            "error: Missing option '--out'; see agentjudge convert traces --help",
        ),
    ],
)
def test_a_bad_command_line_is_one_error_line(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 3
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [line]
    assert captured.out == ""


def test_a_bare_group_still_shows_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert"]) == 3
    assert "agentjudge convert" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["score", "runs/"], ["grade"], ["calibrate", "l.json"]])
def test_an_empty_cache_path_is_refused_not_the_shared_default(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--cache", ""]) == 3
    assert "--cache': an empty path: give the verdict store's file" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "runs/", "--no-cache", "--cache", "v.sqlite"],
        ["grade", "--no-cache", "--cache", "v.sqlite"],
        ["calibrate", "labels.json", "--cache", "v.sqlite", "--no-cache"],
    ],
)
def test_cache_and_no_cache_together_are_refused_not_one_dropped(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # before: --cache was ignored without a word (and nothing is read before the refusal)
    assert main(argv) == 3
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "error: --cache names a verdict store and --no-cache uses none: give one of the two"
    ]
    assert captured.out == ""
