"""Hostile inputs a user can hand the real CLI (issue 33): nesting 100,000 deep, a NUL byte
in a ref, a file name that is not UTF-8, a config or key file that is not UTF-8 or never
ends (/dev/zero), a judge URL that does not parse, a billion samples, an unreachable Ray
head. Each is one line and a documented exit code (1 or 3), never exit 4, never a hang."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from agentjudge.errors import EXIT_INVALID, EXIT_USAGE
from agentjudge.nesting import MAX_JSON_DEPTH, MAX_YAML_DEPTH
from tests.atif.docs import doc, with_refs, write
from tests.e2e.test_hostile_cli import run
from tests.e2e.test_score_cli import tree

pytestmark = pytest.mark.timeout(120)

DATASET = Path(__file__).parents[1] / "cases/data/project/tests/eval/datasets/basic-dataset.json"


def one_error(done: subprocess.CompletedProcess[str], code: int = EXIT_USAGE) -> str:
    """The one line a refused command printed, after checking its exit code."""
    assert done.returncode == code, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if not line.startswith("note:")]
    assert line.startswith("error: ")
    assert "Traceback" not in done.stderr
    return line


def grade(tmp_path: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return run(
        "grade", "--dataset", DATASET, "--judge-provider", "fake", "--no-cache",
        "-o", tmp_path / "grade.json", *args, cwd=tmp_path,
    )  # fmt: skip


def score(tmp_path: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """`score` of a small tree, by the fake judge unless `args` name a judge URL."""
    judge = () if "--judge-url" in args else ("--judge", "fake")
    return run(
        "score", tree(tmp_path), *judge, "--no-cache", "-o", tmp_path / "results.json",
        *args, cwd=tmp_path,
    )  # fmt: skip


def test_traces_nested_deeply_are_refused_while_read(tmp_path: Path) -> None:
    deep = 20_000  # it took 1 GB before: ijson's path strings grow with the depth
    traces = tmp_path / "traces.json"
    traces.write_text('{"traces": ' + "[" * deep + "]" * deep + "}")
    line = one_error(grade(tmp_path, "--traces", traces))
    assert str(traces) in line
    assert f"nested more than {MAX_JSON_DEPTH} levels deep" in line
    assert not (tmp_path / "grade.json").exists()


@pytest.mark.parametrize("command", ["score", "grade"])
def test_a_config_nested_deeply_is_one_line(tmp_path: Path, command: str) -> None:
    config = tmp_path / "deep.yaml"
    config.write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    if command == "score":
        done = score(tmp_path, "--config", config)
    else:
        done = grade(tmp_path, "--traces", tree(tmp_path), "--config", config)
    line = one_error(done)
    assert "deep.yaml" in line
    assert f"nested more than {MAX_YAML_DEPTH} levels deep" in line


@pytest.mark.parametrize("command", ["score", "grade"])
def test_a_config_that_is_not_utf8_is_one_line(tmp_path: Path, command: str) -> None:
    config = tmp_path / "odd.yaml"
    config.write_bytes(b"judge: \xff\n")
    if command == "score":
        done = score(tmp_path, "--config", config)
    else:
        done = grade(tmp_path, "--traces", tree(tmp_path), "--config", config)
    line = one_error(done)
    assert "odd.yaml is not UTF-8 text (at byte 7)" in line


def test_a_key_file_that_is_not_utf8_is_one_line_without_the_key(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_bytes(b"\xffsk-secret-value\n")
    done = score(
        tmp_path, "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m",
        "--set", f"judge_api_key_file={key}",
    )  # fmt: skip
    line = one_error(done)
    assert "cannot read the judge API key file" in line
    assert "not UTF-8" in line
    assert "secret" not in done.stderr + done.stdout


@pytest.mark.parametrize(
    "flags",
    [
        ("--config", "/dev/zero"),
        (
            "--judge-url",
            "http://127.0.0.1:9/v1",
            "--judge-model",
            "m",
            "--set",
            "judge_api_key_file=/dev/zero",
        ),
    ],
    ids=["config", "key-file"],
)
def test_score_refuses_dev_zero_without_reading_it(tmp_path: Path, flags: tuple[str, ...]) -> None:
    line = one_error(score(tmp_path, *flags))
    assert "/dev/zero is a device, not a file" in line


@pytest.mark.parametrize("command", [["report", "/dev/zero"], ["compare", "/dev/zero", "x"]])
def test_results_readers_refuse_dev_zero(tmp_path: Path, command: list[str]) -> None:
    done = (
        run(*command, cwd=tmp_path)
        if command[0] == "compare"
        else run("report", "/dev/zero", "-o", tmp_path / "r.html", cwd=tmp_path)
    )
    line = one_error(done)
    assert "results file /dev/zero is a device, not a file" in line


def test_a_judge_url_that_does_not_parse_is_one_line(tmp_path: Path) -> None:
    line = one_error(score(tmp_path, "--judge-url", "http://u:pw@[::1/v1", "--judge-model", "m"))
    assert line.startswith("error: --judge-url: http://***@[::1/v1 is not a valid URL")
    assert "pw" not in line


@pytest.mark.parametrize("dry_run", [False, True])
def test_score_bounds_samples(tmp_path: Path, dry_run: bool) -> None:
    started = time.monotonic()
    done = score(tmp_path, "--samples", "1000000000", *(["--dry-run"] if dry_run else []))
    assert "samples: Input should be less than or equal to 100" in one_error(done)
    assert time.monotonic() - started < 60


def test_grade_bounds_samples(tmp_path: Path) -> None:
    done = grade(tmp_path, "--traces", tree(tmp_path), "--samples", "1000000000")
    assert "--samples 1000000000: must be a whole number from 1 to 100" in one_error(done)


def test_a_nul_byte_in_a_ref_fails_that_trajectory_only(tmp_path: Path) -> None:
    bad = doc(2)
    with_refs(bad, 1, [{"trajectory_path": "sub\x00.json", "session_id": "s"}])
    write(tmp_path / "runs" / "bad.json", bad)
    write(tmp_path / "runs" / "good.json", doc(2))
    done = run("validate", tmp_path / "runs", "--json", cwd=tmp_path)
    assert done.returncode == EXIT_INVALID, done.stderr
    report = json.loads(done.stdout)
    valid = {Path(r["file"]).name: r["valid"] for r in report["roots"]}
    assert valid == {"bad.json": False, "good.json": True}
    assert "ref.path_nul" in done.stdout


def test_a_file_name_that_is_not_utf8_is_shown_escaped(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write(runs / "x.json", doc(2))
    os.rename(runs / "x.json", os.fsencode(runs) + b"/\xff.json")
    done = run(
        "score", runs, "--judge", "fake", "--no-cache", "-o", tmp_path / "results.json",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "results.json").read_text(encoding="utf-8")
    assert "runs/\\\\xff.json" in text  # JSON's escape of the backslash
    listed = run("validate", runs, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "runs/\\xff.json" in listed.stdout


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs agentjudge[ray]")
def test_an_unreachable_ray_head_fails_in_seconds(tmp_path: Path) -> None:
    started = time.monotonic()
    done = score(tmp_path, "--ray-address", "127.0.0.1:1")
    line = one_error(done)
    assert line.startswith("error: --ray-address 127.0.0.1:1: cannot reach a Ray cluster")
    assert time.monotonic() - started < 30


def test_a_rubric_nested_deeply_is_one_line(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")  # under the rubric's 16 KiB
    line = one_error(score(tmp_path, "--scoring-mode", "custom", "--rubric", rubric))
    assert f"rubric.yaml: nested more than {MAX_YAML_DEPTH} levels deep" in line
