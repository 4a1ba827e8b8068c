"""Hostile names and bad files on the console: a file name or case id holding a newline, a
carriage return or an escape sequence is printed escaped (it cannot forge a line), and
`score` names each bad file with its rule, as `validate` does. The real CLI in a
subprocess, the real judge server."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjudge.errors import EXIT_INVALID, EXIT_JOB_FAILED, EXIT_USAGE
from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write
from tests.e2e.test_grade_cli import PROJECT, TRACES
from tests.e2e.test_hostile_cli import run
from tests.e2e.test_score_cli import judge_flags, score, tree

pytestmark = pytest.mark.timeout(120)

# a name that, printed raw, would show as a line of its own saying all is well
FORGED = "x\nvalid    ATIF-v1.7  a 1  steps 1  subagents 0 (omitted 0)  depth 0  INJECTED.json"
OVERWRITING = "bad\rvalid    fake.json"  # a carriage return: the line is written over
STYLED = "styled\x1b[2J\x1b[32m.json"  # an escape sequence: clears the screen, restyles


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def hostile_folder(tmp_path: Path) -> Path:
    """`runs/` (a root and its child) plus a valid copy of the child under a forging name,
    and two files that are not JSON under overwriting and restyling names."""
    runs = tree(tmp_path)
    shutil.copy(runs / "child.json", runs / FORGED)
    (runs / OVERWRITING).write_text("{not json")
    (runs / STYLED).write_text("[1, 2")
    return runs


def no_raw_controls(text: str) -> None:
    assert "\r" not in text
    assert "\x1b" not in text
    assert "INJECTED" not in "".join(
        line for line in text.splitlines() if not line.startswith(("valid", "invalid", " "))
    )


def test_validate_prints_each_name_escaped_on_its_own_line(tmp_path: Path) -> None:
    runs = hostile_folder(tmp_path)
    done = run("validate", runs, cwd=tmp_path)
    assert done.returncode == EXIT_INVALID, done.stderr
    no_raw_controls(done.stdout)
    roots = [line for line in done.stdout.splitlines() if line.startswith(("valid", "invalid"))]
    assert len(roots) == 4  # root.json, the forged copy, and the two broken files
    (forged,) = [line for line in roots if "INJECTED" in line]
    assert forged.startswith("valid  ")
    assert forged.endswith(
        str(runs / "x\\nvalid    ATIF-v1.7  a 1") + FORGED[len("x\nvalid    ATIF-v1.7  a 1") :]
    )
    assert any(line.endswith("bad\\rvalid    fake.json") for line in roots)
    assert any("styled\\x1b[2J\\x1b[32m.json" in line for line in roots)


def test_score_names_every_bad_file_with_its_rule(tmp_path: Path, server: JudgeServer) -> None:
    runs = hostile_folder(tmp_path)
    done = score(runs, *judge_flags(server), "-o", "out.json", cwd=tmp_path)
    assert done.returncode == EXIT_JOB_FAILED, done.stderr
    assert server.log == []  # invalid input is known before any judge call
    error = json.loads((tmp_path / "out.json").read_text())["error"]
    assert error["type"] == "invalid_input"
    message = error["message"]
    assert message.startswith("2 invalid trajectory file(s): ")
    assert f"{runs / OVERWRITING}: $: not valid JSON" in message
    assert f"{runs / STYLED}: $: not valid JSON" in message
    assert message.count("[schema.json_invalid]") == 2
    no_raw_controls(done.stderr)
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith("error: invalid_input: 2 invalid trajectory file(s): ")
    assert str(runs / "bad\\rvalid    fake.json") + ": $: not valid JSON" in line
    assert "styled\\x1b[2J\\x1b[32m.json: $: not valid JSON" in line


def test_score_skipping_bad_files_names_them(tmp_path: Path, server: JudgeServer) -> None:
    runs = hostile_folder(tmp_path)
    flags = ["--set", "partial_result_policy=skip_failed_trajectory", "-o", "out.json"]
    done = score(runs, *judge_flags(server), *flags, cwd=tmp_path)
    assert done.returncode == EXIT_INVALID, done.stderr  # scored, but incomplete
    no_raw_controls(done.stderr)
    lines = done.stderr.splitlines()
    at = lines.index("not scored, invalid input:")
    listed = lines[at + 1 : at + 3]
    assert all(line.endswith("[schema.json_invalid]") for line in listed), lines
    assert any(line.startswith(f"  {runs}/bad\\rvalid    fake.json: $: ") for line in listed)


def test_score_every_root_invalid_names_them(tmp_path: Path, server: JudgeServer) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.json").write_text("{}")
    flags = ["--set", "partial_result_policy=skip_failed_trajectory", "-o", "out.json"]
    done = score(runs, *judge_flags(server), *flags, cwd=tmp_path)
    assert done.returncode == EXIT_JOB_FAILED, done.stderr
    error = json.loads((tmp_path / "out.json").read_text())["error"]
    assert error["type"] == "all_roots_failed"
    assert error["message"].startswith(f"1 invalid trajectory file(s): {runs / 'a.json'}: ")
    assert f"error: all_roots_failed: 1 invalid trajectory file(s): {runs / 'a.json'}" in (
        done.stderr
    )


def test_an_error_line_about_a_hostile_path_stays_one_line(tmp_path: Path) -> None:
    done = run("validate", tmp_path / "gone\nerror: forged\r.json", cwd=tmp_path)
    assert done.returncode == EXIT_USAGE
    (line,) = done.stderr.splitlines()
    assert line == f"error: {tmp_path}/gone\\nerror: forged\\r.json: no such file or folder"


def test_grade_prints_a_hostile_case_id_escaped(tmp_path: Path, server: JudgeServer) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    traces = json.loads((project / TRACES).read_text())
    extra = dict(traces["traces"][0], case_id="stray\nresult: passed (exit code 0)\x1b[2J")
    traces["traces"].append(extra)
    (project / TRACES).write_text(json.dumps(traces))
    done = run("grade", cwd=project, JUDGE_BASE_URL=server.base_url)
    everything = done.stdout + done.stderr
    no_raw_controls(everything)
    assert "stray\\nresult: passed (exit code 0)\\x1b[2J" in everything
    results = [line for line in done.stdout.splitlines() if line.startswith("result:")]
    assert len(results) == 1


# short, so a table cell holds it whole; printed raw, each would break the row it is in
SPLITTING = "t\nINJECTED"
RESTYLING = "u\x1b[31m"


def test_score_summary_names_its_results_file_on_one_line(
    tmp_path: Path, server: JudgeServer
) -> None:
    runs = tree(tmp_path)
    done = score(runs, *judge_flags(server), "-o", tmp_path / f"{SPLITTING}{RESTYLING}.json",
                 cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr
    (summary,) = [line for line in done.stderr.splitlines() if "results in" in line]
    assert summary.endswith(f"{repr(SPLITTING + RESTYLING)[1:-1]}.json")
    assert not any(line.startswith("INJECTED") for line in done.stderr.splitlines())


def scored_twice(tmp_path: Path, server: JudgeServer) -> tuple[Path, Path]:
    """Two results of trajectories whose ids hold a newline and an escape sequence, each
    scored higher in the baseline than in the candidate."""
    made = []
    for side, mark in (("baseline", "1.0"), ("candidate", "0.0")):
        for name in (SPLITTING, RESTYLING):
            trajectory = doc(2, trajectory_id=name, session_id=name)
            trajectory["steps"][1]["message"] = f"done [[score={mark}]]"
            write(tmp_path / side / f"{len(name)}{name[0]}.json", trajectory)
        flags: list[str | Path] = ["-o", tmp_path / f"{side}.json", "--no-cache"]
        done = score(tmp_path / side, *judge_flags(server), *flags, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        made.append(tmp_path / f"{side}.json")
    return made[0], made[1]


def test_compare_table_prints_each_trajectory_id_on_its_row(
    tmp_path: Path, server: JudgeServer
) -> None:
    baseline, candidate = scored_twice(tmp_path, server)
    done = run("compare", baseline, candidate, cwd=tmp_path, COLUMNS="200")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    lines = done.stdout.splitlines()
    assert not any(line.strip("│ ").startswith("INJECTED") for line in lines), done.stdout
    for name in (SPLITTING, RESTYLING):
        (row,) = [line for line in lines if repr(name)[1:-1] in line]
        # the whole row: the id, then baseline, candidate and delta, in one line
        assert re.search(r"│ +\d\.\d{4} │ +\d\.\d{4} │ -\d\.\d{4} │$", row), row
