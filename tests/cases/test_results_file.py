"""The results file of a large, messy run is byte for byte what agentjudge wrote before grade
streamed (the golden files were written by the in-memory version, commit d9ac9e7), with
the run's time and its folder replaced by placeholders."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cases.mixed_set import write_mixed_set

GOLDEN = Path(__file__).parent / "data" / "streaming"


def normalised(output: Path, folder: Path) -> bytes:
    """The results file with its folder and `graded_at` made constant."""
    data = output.read_bytes().replace(str(folder).encode(), b"<DIR>")
    return re.sub(rb'"graded_at": "[^"]*"', b'"graded_at": "<TIME>"', data, count=1)


def grade_mixed_set(folder: Path, judged: bool) -> Path:
    write_mixed_set(folder, judged=judged)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "JUDGE_"))}
    env["AGENTJUDGE_CACHE_DIR"] = str(folder / "cache")
    command = [
        sys.executable, "-m", "agentjudge", "grade", "--quiet", "--no-cache",
        "--traces", "traces", "--dataset", "dataset.json", "--config", "eval_config.yaml",
        "--output", "results.json",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr  # missing and errored cases: incomplete
    assert "Traceback" not in done.stderr
    return folder / "results.json"


@pytest.mark.e2e  # runs the real CLI in a subprocess
@pytest.mark.parametrize("judged", [False, True], ids=["checks", "fake-judge"])
def test_the_results_file_is_byte_identical_to_the_in_memory_versions(
    tmp_path: Path, judged: bool
) -> None:
    output = grade_mixed_set(tmp_path, judged)
    golden = GOLDEN / f"results-{'judged' if judged else 'checks'}.json.gz"
    expected = gzip.decompress(golden.read_bytes())
    got = normalised(output, tmp_path)
    if got != expected:  # where they part, not two 2 MB strings
        at = next(
            (i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b),
            min(len(got), len(expected)),
        )
        pytest.fail(f"differs at byte {at}: {got[at - 200 : at + 200]!r}")
