"""`--samples K` end to end: the real CLI (`score`, `grade`) against our judge server, whose
`[[samples=...]]` marker gives the n-th of identical requests the n-th value."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentjudge.scoring.prompts import CATEGORIZE_SYSTEM
from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write
from tests.e2e.test_grade_cli import PROJECT, TRACES, by_id, grade
from tests.e2e.test_score_cli import judge_flags, results, score, tree

pytestmark = pytest.mark.timeout(120)
MEAN = (0.2 + 0.9 + 0.5) / 3


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def sampled_runs(folder: Path) -> Path:
    """One node: a user step, then steps whose samples disagree, agree, and agree low."""
    run = doc(4)
    run["steps"][0]["message"] = "Do the task [[score=0.9]]"
    run["steps"][1]["message"] = "Try the fix [[samples=0.2,0.9,0.5]]"
    run["steps"][2]["message"] = "Run the tests [[score=0.8]]"
    run["steps"][3]["message"] = "Forgot the task [[samples=0.1,0.3,0.2]] [[category=context_loss]]"
    write(folder / "runs" / "a.json", run)
    return folder / "runs"


def steps_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = document["trajectories"][0]["nodes"][0]["steps"]
    return steps


def test_samples_give_the_mean_the_spread_and_unstable_steps(
    tmp_path: Path, server: JudgeServer
) -> None:
    runs = sampled_runs(tmp_path)
    flags = [*judge_flags(server), "--samples", "3", "--set", "failure_threshold=0.5"]
    done = score(runs, *flags, "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "samples at judge temperature 0 mostly agree by construction" in done.stderr
    assert "unstable steps: 1 (their 3 samples fall on both sides of failure_threshold 0.5" in (
        done.stderr
    )
    document = results(tmp_path / "out.json")
    user, disagree, agree, low = steps_of(document)
    assert disagree["score"] == pytest.approx(MEAN, abs=1e-12)
    assert round(disagree["score"], 10) == 0.5333333333
    assert sorted(disagree["samples"]) == [0.2, 0.5, 0.9]
    assert (disagree["spread"], disagree["unstable"]) == (0.7, True)
    assert disagree["categorization_status"] is None  # its mean is not below 0.5
    assert (agree["samples"], agree["spread"], agree["stdev"], agree["unstable"]) == (
        [0.8, 0.8, 0.8], 0.0, 0.0, False,
    )  # fmt: skip
    assert (user["samples"], user["unstable"]) == ([0.9, 0.9, 0.9], False)
    assert low["score"] == pytest.approx(0.2)
    assert (low["spread"], low["unstable"]) == (0.2, False)
    # a low step is categorized by its 3 samples' majority, with their mean confidence
    assert (low["category"], low["confidence"]) == ("context_loss", 0.9)
    assert document["run_metadata"]["unstable_steps"] == 1
    assert (
        document["run_parameters"]["samples"],
        document["run_parameters"]["judge_temperature"],
    ) == (3, 0.0)
    # 4 steps x 3 samples, and 3 samples of the low step's categorization: 15 judge calls
    categorizations = [
        r for r in server.log if r.body["messages"][0]["content"] == CATEGORIZE_SYSTEM
    ]
    assert (len(server.log), len(categorizations)) == (15, 3)
    assert document["judge"]["calls"] == 15
    # temperature 0 was sent: the index is never part of the request
    assert {r.body.get("temperature") for r in server.log} == {0.0}

    again = score(runs, *flags, "-o", "again.json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(server.log) == 15  # every sample from the verdict store
    rerun = results(tmp_path / "again.json")
    assert (rerun["judge"]["calls"], rerun["judge"]["cache_hits"]) == (0, 15)
    assert steps_of(rerun) == steps_of(document)


def test_one_sample_is_todays_run_keys_and_results(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    first = score(runs, *judge_flags(server), "-o", "a.json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    calls = len(server.log)
    one = score(runs, *judge_flags(server), "--samples", "1", "-o", "b.json", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert len(server.log) == calls  # the same keys: every verdict from the store
    a, b = results(tmp_path / "a.json"), results(tmp_path / "b.json")
    assert a["trajectories"] == b["trajectories"]
    assert "samples" not in json.dumps(a["trajectories"])
    assert (b["run_metadata"]["unstable_steps"], b["run_parameters"]["samples"]) == (0, 1)
    assert "agree by construction" not in one.stderr


def test_a_temperature_is_sent_and_keyed(tmp_path: Path, server: JudgeServer) -> None:
    runs = sampled_runs(tmp_path)
    flags = [*judge_flags(server), "--samples", "2", "--temperature", "0.7"]
    done = score(runs, *flags, "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "agree by construction" not in done.stderr
    assert {r.body.get("temperature") for r in server.log} == {0.7}
    assert results(tmp_path / "out.json")["run_parameters"]["judge_temperature"] == 0.7


def test_samples_below_one_are_a_usage_error(tmp_path: Path, server: JudgeServer) -> None:
    done = score(sampled_runs(tmp_path), *judge_flags(server), "--samples", "0", cwd=tmp_path)
    assert done.returncode == 3
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("samples: Input should be greater than or equal to 1")
    )
    assert server.log == []


def test_a_dry_run_counts_every_sample_and_budgets_check_them(
    tmp_path: Path, server: JudgeServer
) -> None:
    runs = tree(tmp_path)  # 5 scored steps
    done = score(runs, *judge_flags(server), "--samples", "3", "--dry-run", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert (plan["step_calls"], plan["calls_to_send"], plan["categorizations_at_most"]) == (
        15, 15, 15,
    )  # fmt: skip
    over = score(
        runs, *judge_flags(server), "--samples", "3", "--set", "max_judge_requests=14", cwd=tmp_path
    )
    assert over.returncode == 3
    assert "would make 15 judge calls" in over.stderr
    assert server.log == []


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The test project, its weather case's judge samples disagreeing across the
    threshold (3 of 5), and its slow case made fast, so the gate is met."""
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    traces = root / TRACES
    traces.write_text(traces.read_text().replace("[[score=4]]", "[[samples=2,4,5]]"))
    traces.write_text(traces.read_text().replace('"latency_ms": 4200', '"latency_ms": 420'))
    return root


def test_grade_samples_their_mean_and_unstable_cases(project: Path, server: JudgeServer) -> None:
    done = grade(
        project, "--samples", "3", "--output", "out.json", "--junit", "j.xml", server=server
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agree by construction" in done.stderr
    document = json.loads((project / "out.json").read_text())
    cases = by_id(document)
    weather = cases["weather"]
    assert weather["status"] == "passed"
    assert weather["unstable"] == ["task_success", "politeness"]
    for metric in ("task_success", "politeness"):
        entry = weather["judge_scores"][metric]
        assert entry["score"] == pytest.approx(11 / 3, abs=1e-12)
        assert sorted(entry["samples"]) == [2.0, 4.0, 5.0]
        assert (entry["spread"], entry["unstable"], entry["passed"]) == (3.0, True, True)
    greeting = cases["greeting"]["judge_scores"]["response_quality"]
    assert (greeting["score"], greeting["samples"], greeting["unstable"]) == (
        5.0, [5.0, 5.0, 5.0], False,
    )  # fmt: skip
    assert "unstable" not in cases["greeting"]
    assert (document["summary"]["unstable"], document["summary"]["samples"]) == (1, 3)
    assert document["judge"]["samples"] == 3
    assert "unstable: 1 case(s) whose 3 judge samples" in done.stdout
    # the preflight, then 3 samples of greeting, weather x2, terse
    assert len(server.log) == 1 + 3 * 4
    junit = ET.parse(project / "j.xml").getroot()
    prop = junit.find("testsuite/testcase[@name='weather']/properties/property")
    assert prop is not None
    assert prop.get("value") == "unstable: task_success, politeness"

    gated = grade(project, "--samples", "3", "--fail-on-unstable", "-o", "b.json", server=server)
    assert gated.returncode == 1, gated.stdout + gated.stderr
    assert len(server.log) == 1 + 3 * 4  # every sample from the verdict store
    assert json.loads((project / "b.json").read_text())["summary"]["exit_code"] == 1


def test_grade_samples_from_the_config_file_and_one_sample_unchanged(
    project: Path, server: JudgeServer
) -> None:
    config = project / "tests/eval/eval_config.yaml"
    config.write_text(
        config.read_text().replace(
            "model: test-judge", "model: test-judge\n  samples: 2\n  temperature: 0.5"
        )
    )
    done = grade(project, "-o", "out.json", server=server)
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((project / "out.json").read_text())
    assert (document["judge"]["samples"], document["judge"]["temperature"]) == (2, 0.5)
    temperatures = sorted(float(r.body["temperature"]) for r in server.log)
    assert temperatures == [0.0] + [0.5] * 8  # the preflight; 2 samples of 4 judge metrics
    one = grade(
        project,
        "--samples",
        "1",
        "--temperature",
        "0",
        "--fail-on-unstable",
        "-o",
        "one.json",
        server=server,
    )
    # one sample: the weather case's first arrival (2) fails it, unstable or not
    assert one.returncode == 1, one.stdout + one.stderr
    plain = json.loads((project / "one.json").read_text())
    assert set(plain["summary"]) == {
        "passed", "failed", "quality_below_threshold", "error", "missing", "exit_code",
    }  # fmt: skip
    assert "samples" not in json.dumps(plain["cases"])
    weather = by_id(plain)["weather"]
    assert weather["judge_scores"]["task_success"]["score"] == 2.0
    assert "unstable" not in weather
    bad = grade(project, "--samples", "0", server=server)
    assert bad.returncode == 3
    assert "--samples 0: must be a whole number from 1 to 100" in bad.stderr
