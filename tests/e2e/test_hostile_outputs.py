"""Outputs that would overwrite inputs: a results file over a trajectory, an HTML report over
the results, the results over the verdict store, a grade's reports over the project's own
files. Each is refused with exit 3 before any judge call, naming both paths, and every file
is left as it was. The real CLI in a subprocess, the real judge server."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjudge.errors import EXIT_USAGE
from agentjudge.testing import JudgeServer
from tests.conftest import FIXTURES
from tests.e2e.test_calibrate_cli import labelled_set
from tests.e2e.test_grade_cli import PROJECT, TRACES
from tests.e2e.test_hostile_cli import run
from tests.e2e.test_score_cli import judge_flags, score, tree
from tests.report.test_html import GOLDEN

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` and its bytes: what must be unchanged after a refusal."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def refused(done: subprocess.CompletedProcess[str], *named: Path | str) -> str:
    """The one error line of a refused run (exit 3), which names every path in `named`."""
    assert done.returncode == EXIT_USAGE, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: "), line
    for path in named:
        assert str(path) in line, line
    assert "choose another" in line
    return line


def test_score_results_over_a_trajectory_in_the_input_folder(
    tmp_path: Path, server: JudgeServer
) -> None:
    runs = tree(tmp_path)
    before = snapshot(tmp_path / "runs")
    done = score(runs, *judge_flags(server), "-o", runs / "root.json", cwd=tmp_path)
    line = refused(done, runs / "root.json", runs)
    assert "-o" in line or "--output" in line
    assert server.log == []
    assert snapshot(tmp_path / "runs") == before


def test_score_results_over_a_named_trajectory_file(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    before = snapshot(runs)
    root = runs / "root.json"
    done = score(root, *judge_flags(server), "-o", "runs/../runs/root.json", cwd=tmp_path)
    refused(done, "runs/../runs/root.json", root)
    assert server.log == []
    assert snapshot(runs) == before


def test_a_new_json_inside_the_input_folder_is_refused(tmp_path: Path, server: JudgeServer) -> None:
    """It would be read as a trajectory by the next run of the same command."""
    runs = tree(tmp_path)
    done = score(runs, *judge_flags(server), "-o", runs / "results.json", cwd=tmp_path)
    line = refused(done, runs / "results.json", runs)
    assert "inside the trajectory folder" in line
    assert not (runs / "results.json").exists()


def test_an_html_report_inside_the_input_folder_is_fine(
    tmp_path: Path, server: JudgeServer
) -> None:
    """Not a `*.json`: never read as a trajectory."""
    runs = tree(tmp_path)
    html = runs / "report.html"
    done = score(runs, *judge_flags(server), "-o", "out.json", "--html", html, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert html.read_text().startswith("<!DOCTYPE html>")


def test_score_through_a_hard_link_to_a_trajectory(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    before = snapshot(runs)
    link = tmp_path / "linked.json"
    os.link(runs / "child.json", link)
    done = score(runs, *judge_flags(server), "-o", link, cwd=tmp_path)
    refused(done, link, runs / "child.json")
    assert snapshot(runs) == before
    assert server.log == []


def test_score_results_over_a_subagent_file_of_a_named_root(
    tmp_path: Path, server: JudgeServer
) -> None:
    """child.json is not named: only root.json's `trajectory_path` ref reaches it."""
    runs = tree(tmp_path)
    before = snapshot(runs)
    done = score(runs / "root.json", *judge_flags(server), "-o", runs / "child.json", cwd=tmp_path)
    line = refused(done, runs / "child.json")
    assert "--output would overwrite the subagent trajectory" in line
    assert snapshot(runs) == before
    assert server.log == []


def test_score_verdict_store_over_a_subagent_file_of_a_named_root(
    tmp_path: Path, server: JudgeServer
) -> None:
    runs = tree(tmp_path)
    before = snapshot(runs)
    flags: list[str | Path] = ["-o", tmp_path / "out.json", "--cache", runs / "child.json"]
    done = score(runs / "root.json", *judge_flags(server), *flags, cwd=tmp_path)
    line = refused(done, runs / "child.json")
    assert "the verdict store would overwrite the subagent trajectory" in line
    assert snapshot(runs) == before
    assert server.log == []
    assert not (tmp_path / "out.json").exists()


def test_score_results_over_an_unparseable_subagent_file(
    tmp_path: Path, server: JudgeServer
) -> None:
    """A subagent file that is not JSON is still a file the run read: `-o` onto it would
    replace the user's (broken) trajectory with the results."""
    runs = tree(tmp_path)
    (runs / "child.json").write_bytes(b'{"schema_version": "ATIF-v1.6", "steps": [\xff')
    before = snapshot(runs)
    done = score(runs / "root.json", *judge_flags(server), "-o", runs / "child.json", cwd=tmp_path)
    line = refused(done, runs / "child.json")
    assert "--output would overwrite the subagent trajectory" in line
    assert snapshot(runs) == before
    assert server.log == []


def test_score_through_a_symlinked_folder(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    before = snapshot(runs)
    (tmp_path / "alias").symlink_to(runs)
    done = score(runs, *judge_flags(server), "-o", "alias/root.json", cwd=tmp_path)
    refused(done, "alias/root.json")
    assert snapshot(runs) == before


def test_score_html_over_its_own_results(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    done = score(runs, *judge_flags(server), "-o", "r.json", "--html", "r.json", cwd=tmp_path)
    line = refused(done, "r.json")
    assert "--html is the same file as --output" in line
    assert server.log == []
    assert not (tmp_path / "r.json").exists()


def test_score_results_over_the_verdict_store(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    first = score(runs, *judge_flags(server), "-o", "a.json", "--cache", "rc.json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    store = (tmp_path / "rc.json").read_bytes()
    calls = len(server.log)
    done = score(runs, *judge_flags(server), "-o", "rc.json", "--cache", "rc.json", cwd=tmp_path)
    line = refused(done, "rc.json")
    assert "--output is the same file as the verdict store rc.json; choose another --output" in (
        line
    )
    assert len(server.log) == calls
    assert (tmp_path / "rc.json").read_bytes() == store


def test_score_results_over_its_config_file(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    config = tmp_path / "score.yaml"
    config.write_text("context_steps: 4\n")
    done = score(runs, *judge_flags(server), "--config", config, "-o", config, cwd=tmp_path)
    refused(done, config)
    assert config.read_text() == "context_steps: 4\n"


def test_score_training_manifest_over_a_trajectory(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    named = tmp_path / "out.eligible_trajectories.json"
    shutil.copy(runs / "child.json", named)  # a trajectory that has no subagents
    before = named.read_bytes()
    flags: list[str | Path] = ["-o", tmp_path / "out.json", "--set", "training_threshold=0.5"]
    done = score(named, *judge_flags(server), *flags, cwd=tmp_path)
    line = refused(done, named)
    assert "the training manifest would overwrite the trajectory file" in line
    assert named.read_bytes() == before
    assert server.log == []


def test_report_over_its_own_results(tmp_path: Path) -> None:
    document = tmp_path / "rr.json"
    shutil.copy(GOLDEN / "fail_and_missing.results.json", document)
    before = document.read_bytes()
    done = run("report", document, "-o", document, cwd=tmp_path)
    refused(done, document)
    assert document.read_bytes() == before


def test_report_through_a_hard_link(tmp_path: Path) -> None:
    document = tmp_path / "rr.json"
    shutil.copy(GOLDEN / "fail_and_missing.results.json", document)
    before = document.read_bytes()
    os.link(document, tmp_path / "other.html")
    done = run("report", document, "-o", tmp_path / "other.html", cwd=tmp_path)
    refused(done, document, tmp_path / "other.html")
    assert document.read_bytes() == before


@pytest.mark.parametrize(
    ("flag", "target"),
    [
        ("--output", TRACES),
        ("--junit", "tests/eval/datasets/basic-dataset.json"),
        ("--html", "tests/eval/eval_config.yaml"),
        ("--html", "graph-agents-cli-manifest.yaml"),
    ],
)
def test_grade_refuses_to_overwrite_the_projects_files(
    tmp_path: Path, server: JudgeServer, flag: str, target: str
) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    before = snapshot(project)
    done = run("grade", flag, target, cwd=project, JUDGE_BASE_URL=server.base_url)
    line = refused(done, target)
    assert flag in line
    assert server.log == []
    assert snapshot(project) == before


def test_grade_output_inside_a_named_traces_folder(tmp_path: Path, server: JudgeServer) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    before = snapshot(project)
    out = "artifacts/traces/results.json"
    args = ["--traces", "artifacts/traces", "--output", out]
    done = run("grade", *args, cwd=project, JUDGE_BASE_URL=server.base_url)
    line = refused(done, out)
    assert "inside the traces folder" in line
    assert snapshot(project) == before


def test_grade_junit_and_html_on_one_file(tmp_path: Path, server: JudgeServer) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    args = ["--junit", "report.xml", "--html", "report.xml"]
    done = run("grade", *args, cwd=project, JUDGE_BASE_URL=server.base_url)
    line = refused(done, "report.xml")
    assert "--html is the same file as --junit" in line
    assert server.log == []


@pytest.mark.parametrize("flag", ["--output", "--score-output"])
def test_calibrate_outputs_over_its_labels(tmp_path: Path, server: JudgeServer, flag: str) -> None:
    labels = labelled_set(tmp_path)
    before = snapshot(tmp_path / "runs"), labels.read_bytes()
    done = run("calibrate", labels, *judge_flags(server), flag, labels, cwd=tmp_path)
    refused(done, labels)
    assert (snapshot(tmp_path / "runs"), labels.read_bytes()) == before
    assert server.log == []


def test_convert_into_its_own_source_folder_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "ww"
    shutil.copytree(FIXTURES / "who-and-when", src)
    before = snapshot(src)
    done = run("convert", "who-and-when", src, src / "out", cwd=tmp_path)
    line = refused(done, src / "out", src)
    assert "inside the Who&When folder" in line
    assert snapshot(src) == before
    assert not (src / "out").exists()


def test_convert_over_a_source_file_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "ww"
    shutil.copytree(FIXTURES / "who-and-when", src)
    one = sorted(src.rglob("*.json"))[0]
    out = tmp_path / "out"
    (out / "trajectories").mkdir(parents=True)
    os.link(one, out / "labels.json")  # OUT's labels file is a hard link to a run
    before = one.read_bytes()
    done = run("convert", "who-and-when", one, out, cwd=tmp_path)
    refused(done, out / "labels.json", one)
    assert one.read_bytes() == before


def test_grade_results_over_the_verdict_store(tmp_path: Path, server: JudgeServer) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    store = project / "cache" / "verdicts.sqlite"  # where run() points AGENTJUDGE_CACHE_DIR
    store.parent.mkdir()
    store.write_bytes(b"a store")
    done = run("grade", "--output", store, cwd=project, JUDGE_BASE_URL=server.base_url)
    line = refused(done, store)
    assert f"--output is the same file as the verdict store {store}" in line
    assert store.read_bytes() == b"a store"
