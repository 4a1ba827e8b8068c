"""`agentjudge validate` as a user runs it: a real subprocess, real files, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.atif.docs import doc, with_refs, write

AGENTJUDGE = [sys.executable, "-m", "agentjudge"]


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [*AGENTJUDGE, *map(str, args)], capture_output=True, text=True, timeout=60, env=env
    )


def test_valid_folder_exits_0_with_a_line_per_root(tmp_path: Path) -> None:
    write(tmp_path / "a.json", with_refs(doc(3), 1, [{"trajectory_path": "b.json"}]))
    write(tmp_path / "b.json", doc(2, "ATIF-v1.6"))
    write(tmp_path / "c.json", doc(1, "ATIF-v1.3"))
    result = run("validate", tmp_path)
    assert result.returncode == 0, result.stderr
    a, c = tmp_path / "a.json", tmp_path / "c.json"
    assert result.stdout.splitlines() == [
        f"valid    ATIF-v1.7  agent 1  steps 5  subagents 1 (omitted 0)  depth 1  {a}",
        f"valid    ATIF-v1.3  agent 1  steps 1  subagents 0 (omitted 0)  depth 0  {c}",
        "2 roots: 2 valid, 0 invalid; 3 nodes, 6 steps, 0 omitted subagents",
    ]
    assert result.stderr == ""


def test_invalid_file_exits_1_and_lists_its_problems(tmp_path: Path) -> None:
    broken = doc(2)
    broken["steps"][1]["step_id"] = 9
    write(tmp_path / "bad.json", broken)
    write(tmp_path / "good.json", doc(1))
    result = run("validate", tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"invalid  {tmp_path}/bad.json"
    assert lines[1] == (
        f"    {tmp_path}/bad.json: $.steps[1].step_id: step_id is 9 but must be 2 "
        "(its 1-based position) [step_id.sequence]"
    )
    assert lines[-1] == "2 roots: 1 valid, 1 invalid; 2 nodes, 1 steps, 0 omitted subagents"
    assert "Traceback" not in result.stdout + result.stderr


def test_json_output(atif_fixtures: Path) -> None:
    result = run("validate", "--json", atif_fixtures / "harbor-golden__t2-context-summarization")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    (root,) = report["roots"]
    assert (root["valid"], root["steps"], root["subagents"], root["depth"]) == (True, 16, 3, 1)
    assert [n["kind"] for n in root["nodes"]] == ["root", "file", "file", "file"]
    assert report["summary"] == {
        "roots": 1,
        "valid": 1,
        "invalid": 0,
        "nodes": 4,
        "steps": 16,
        "omitted": 0,
    }


def test_fixture_folder_exits_1_for_its_four_rejected_files(atif_fixtures: Path) -> None:
    result = run("validate", "--quiet", atif_fixtures)
    assert result.returncode == 1
    invalid = [line for line in result.stdout.splitlines() if line.startswith("invalid")]
    assert len(invalid) == 4
    assert result.stdout.splitlines()[-1].startswith("41 roots: 37 valid, 4 invalid;")


def test_usage_errors_exit_3(tmp_path: Path) -> None:
    missing = run("validate", tmp_path / "nope")
    assert missing.returncode == 3
    assert missing.stderr.strip() == f"error: {tmp_path}/nope: no such file or folder"
    assert run("validate", "--no-such-flag", tmp_path).returncode == 3
    assert run("validate").returncode == 3
    assert run("validate", "--max-total-steps", "0", tmp_path).returncode == 3


def test_links_that_loop_or_lead_outside_are_problems_not_tracebacks(tmp_path: Path) -> None:
    write(tmp_path / "in" / "a.json", doc(1))
    (tmp_path / "in" / "loop.json").symlink_to(tmp_path / "in" / "loop.json")
    (tmp_path / "in" / "passwd.json").symlink_to("/etc/passwd")
    result = run("validate", tmp_path / "in")
    assert result.returncode == 1
    assert result.stdout.splitlines()[1:5] == [
        f"invalid  {tmp_path}/in/loop.json",
        f"    {tmp_path}/in/loop.json: $: symbolic link loop; fix or remove the link "
        "[input.symlink_loop]",
        f"invalid  {tmp_path}/in/passwd.json",
        f"    {tmp_path}/in/passwd.json: $: symbolic link to /etc/passwd, outside the input "
        f"folder {tmp_path}/in; it was not opened: copy the file into the folder, or name it "
        "(or a folder holding both) instead [input.symlink_outside]",
    ]
    assert "root:" not in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    loop = run("validate", tmp_path / "in" / "loop.json")
    assert (loop.returncode, loop.stderr.strip()) == (
        3,
        f"error: {tmp_path}/in/loop.json: symbolic link loop; fix the link or name another path",
    )


def test_too_many_files_is_one_clear_line(tmp_path: Path) -> None:
    for name in "abc":
        write(tmp_path / f"{name}.json", doc(1))
    result = run("validate", "--max-trajectory-files", "2", tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: {tmp_path}: $: more than max_trajectory_files=2 trajectory files; raise the "
        "limit (--max-trajectory-files) or name fewer paths [limit.max_trajectory_files]"
    )


def test_version() -> None:
    result = run("--version")
    assert (result.returncode, result.stdout.strip()) == (0, "agentjudge 0.1.0")
