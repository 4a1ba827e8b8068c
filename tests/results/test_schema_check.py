"""The walk that finds the results files a test wrote (tests/results/schema_check.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.results.schema_check import fresh_json_files


def test_the_walk_finds_the_json_files_written_since_but_in_folders_passed_over(
    tmp_path: Path,
) -> None:
    old, since = tmp_path / "old.json", time.time_ns()
    old.write_text("{}")
    os.utime(old, ns=(since - 10**9, since - 10**9))  # written before `since`
    wanted = [tmp_path / "a" / "b" / "r.json", tmp_path / ".hidden" / "r.json"]
    passed_over = [
        tmp_path / "proj" / ".venv" / "lib" / "x.json",
        tmp_path / "ray" / "n0" / "session_2026-12-05_08-40-11_510798_22088" / "logs" / "x.json",
    ]
    for path in (*wanted, *passed_over):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    (tmp_path / "a" / "notes.txt").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "a", target_is_directory=True)  # not followed
    assert fresh_json_files(tmp_path, since) == sorted(wanted)
    assert sorted(tmp_path.rglob("*.json")) == sorted([old, *wanted, *passed_over])
