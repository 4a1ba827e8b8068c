"""`agentjudge grade` end to end: a graph-agents-cli project graded by the real CLI against
our judge server on 127.0.0.1 (scores come from `[[score=X]]` markers in the replies)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agentjudge.testing import JudgeServer, Script
from agentjudge.testing.scripted import Malformed
from tests.conftest import ATIF_FIXTURES

PROJECT = Path(__file__).resolve().parents[1] / "cases" / "data" / "project"
TRACES = "artifacts/traces/traces_20261130_060000.json"

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    return root


def grade(
    root: Path, *args: str, server: JudgeServer | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "JUDGE_"))}
    clean["AGENTJUDGE_CACHE_DIR"] = str(root.parent / "cache")
    if server is not None:
        clean["JUDGE_BASE_URL"] = server.base_url
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", "grade", *args],
        cwd=root,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=110,
    )


def results(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["id"]: case for case in document["cases"]}


# the scores the test project's judge metrics get from our judge server (its markers)
PROJECT_JUDGE_SCORES = {
    ("greeting", "response_quality"): 5.0,
    ("weather", "task_success"): 4.0,
    ("weather", "politeness"): 4.0,
    ("terse", "response_quality"): 2.0,
}


def judge_scores(document: dict[str, Any]) -> dict[tuple[str, str], float | None]:
    """(case, metric) -> score of every judge metric (custom metrics left out)."""
    return {
        (case["id"], name): metric["score"]
        for case in document["cases"]
        for name, metric in case["judge_scores"].items()
        if metric["kind"] == "judge"
    }


def test_a_project_graded_end_to_end(project: Path, server: JudgeServer) -> None:
    done = grade(project, "--output", "out.json", "--junit", "junit.xml", server=server)
    assert done.returncode == 1, done.stderr  # one case failed
    document = results(project / "out.json")
    cases = by_id(document)
    assert {cid: c["status"] for cid, c in cases.items()} == {
        "greeting": "passed",
        "weather": "passed",
        "no-delete": "passed",
        "structured": "passed",
        "too-slow": "failed",
        "terse": "quality_below_threshold",
        "follow-up": "passed",
    }
    assert cases["too-slow"]["reasons"] == ["max_latency_ms: latency 4200 ms exceeds 1000 ms"]
    assert cases["too-slow"]["judge_scores"] == {}  # a failed case is never judged
    assert cases["terse"]["reasons"] == ["response_quality: score 2 below threshold 4 (quality)"]
    weather = cases["weather"]["judge_scores"]
    assert weather["task_success"]["score"] == 4.0
    assert weather["task_success"]["threshold"] == 3.0
    assert weather["politeness"] == {
        "score": 4.0,
        "threshold": 3.0,
        "passed": True,
        "quality": False,
        "reasoning": "scripted verdict",
        "error": None,
        "kind": "judge",
    }
    length = cases["terse"]["judge_scores"]["answer_length_ok"]
    assert (length["score"], length["kind"], length["reasoning"]) == (
        1.0,
        "custom",
        "2 words (limit 3)",
    )
    assert document["summary"] == {
        "passed": 5,
        "failed": 1,
        "quality_below_threshold": 1,
        "error": 0,
        "missing": 0,
        "exit_code": 1,
    }
    assert document["quality"]["response_quality"] == {
        "pass_rate": 0.5,
        "min_pass_rate": 0.5,
        "met": True,
        "below_threshold": 1,
        "scored": 2,
        "passed": 1,
        "status": "met",
    }
    assert document["judge"] == {"provider": "openai-compatible", "model": "test-judge"}
    assert document["agent_version"] == "1.4.0"
    assert document["dataset_paths"] == [str(project / "tests/eval/datasets/basic-dataset.json")]
    assert document["fake_model"] == []
    assert document["warnings"] == [
        "1 case(s) give task_success no reference answer to judge against, so it judges "
        "without: weather. Add reference: to these cases in the dataset."
    ]
    # the preflight, then four judge calls: greeting, weather x2, terse; concurrently
    assert len(server.log) == 5
    prompt = next(r.body for r in server.log if "get_weather" in json.dumps(r.body))
    text = prompt["messages"][-1]["content"]
    assert "system (from the dataset; not sent to the agent): You are a weather agent." in text
    assert "- get_weather(" in text
    assert "Paris is sunny, 21 C." in text
    junit = ET.parse(project / "junit.xml").getroot()
    suite = junit.find("testsuite[@name='cases']")
    assert suite is not None
    assert suite.get("tests") == "7"
    assert suite.get("failures") == "1"
    failure = suite.find("testcase[@name='too-slow']/failure")
    assert failure is not None
    assert failure.get("message", "").startswith("max_latency_ms:")
    assert "too-slow" in done.stdout
    assert "gate failed" in done.stdout


def test_a_rerun_says_its_verdicts_came_from_the_store(project: Path, server: JudgeServer) -> None:
    first = grade(project, "--output", "a.json", server=server)
    assert "verdict store" not in first.stderr
    again = grade(project, "--output", "b.json", server=server)
    assert again.returncode == first.returncode == 1
    assert len(server.log) == 5  # the preflight and 4 calls; the second run made none
    store = project.parent / "cache" / "verdicts.sqlite"
    line = f"4 of 4 verdicts from the verdict store ({store}); --no-cache to judge again"
    assert line in again.stderr
    assert results(project / "b.json")["judge_usage"]["cache_hits"] == 4


def test_cache_names_the_verdict_store_as_on_score(project: Path, server: JudgeServer) -> None:
    store = project.parent / "mine.sqlite"
    first = grade(project, "--cache", str(store), "--output", "a.json", server=server)
    again = grade(project, "--cache", str(store), "--output", "b.json", server=server)
    assert again.returncode == first.returncode == 1, first.stderr
    assert len(server.log) == 5  # the preflight and 4 calls; the second run made none
    line = f"4 of 4 verdicts from the verdict store ({store}); --no-cache to judge again"
    assert line in again.stderr
    assert not (project.parent / "cache" / "verdicts.sqlite").exists()


def test_judge_calls_run_concurrently_across_cases(project: Path) -> None:
    traces = results(project / TRACES)
    traces["dataset_paths"] = []  # plan the cases the traces embed
    base = traces["traces"][0]
    traces["traces"] = [
        {
            **base,
            "case_id": f"c{i}",
            "response": f"[[score=5]] Hello {i}!",  # distinct prompts: no shared call
            "case": {**base["case"], "id": f"c{i}"},
        }
        for i in range(12)
    ]
    (project / TRACES).write_text(json.dumps(traces))
    with JudgeServer(Script(latency=0.3)) as slow:
        done = grade(project, "--output", "out.json", "--concurrency", "8", server=slow)
        assert done.returncode == 0, done.stderr
        assert len(slow.log) == 13  # the preflight, then one call a case
        assert slow.peak_in_flight >= 4


def test_a_judge_call_timeout_is_an_error_case_and_exit_2(project: Path) -> None:
    traces = results(project / TRACES)
    greeting = next(t for t in traces["traces"] if t["case_id"] == "greeting")
    greeting["response"] += " [[fault=hang]]"  # only this case's judge call hangs
    (project / TRACES).write_text(json.dumps(traces))
    with JudgeServer(Script(hang_seconds=10)) as slow:
        flags = ["--output", "out.json", "--judge-call-timeout", "1"]
        done = grade(project, *flags, server=slow)
    assert done.returncode == 2, done.stderr
    cases = by_id(results(project / "out.json"))
    assert cases["greeting"]["status"] == "error"
    assert cases["greeting"]["reasons"] == [
        "error: judge response_quality: judge call failed: timeout"
    ]
    assert cases["greeting"]["judge_scores"]["response_quality"]["score"] is None
    assert cases["weather"]["status"] == "passed"  # its judges answered
    assert cases["no-delete"]["status"] == "passed"  # no judge, no error


def test_the_whole_judging_phase_is_bounded_by_judge_timeout(project: Path) -> None:
    # graph-agents-cli's meaning: --judge-timeout bounds all the judging; over it, exit 3
    with JudgeServer(Script(latency=3)) as slow:
        done = grade(project, "--output", "out.json", "--judge-timeout", "1", server=slow)
    assert done.returncode == 3
    assert done.stderr.startswith("error: judging did not finish within --judge-timeout 1 s")
    assert not (project / "out.json").exists()


@pytest.mark.parametrize(
    ("server_url", "extra", "said"),
    [
        (
            "http://127.0.0.1:9/v1",
            [],
            "(transport_error: connection refused)",
        ),  # nothing listens on 9
        (None, ["JUDGE_API_KEY=sk-wrong-key-0000"], "(http_401: Incorrect API key provided"),
        (None, ["--judge-model", "no-such-model"], "(http_404: The model `no-such-model`"),
    ],
)
def test_an_unusable_judge_is_a_configuration_error(
    project: Path, server_url: str | None, extra: list[str], said: str
) -> None:
    with JudgeServer(mimic="openai", api_key="sk-right-key-0000", models=("test-judge",)) as srv:
        env = {"OPENAI_BASE_URL": server_url or srv.base_url, "JUDGE_API_KEY": "sk-right-key-0000"}
        env.update(item.partition("=")[::2] for item in extra if "=" in item)
        flags = ["--judge-provider", "openai", "--output", "out.json"]
        flags += [item for item in extra if "=" not in item]
        done = grade(project, *flags, **env)  # type: ignore[arg-type]
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("error: the judge openai/")
    assert said in done.stderr
    assert "sk-wrong-key-0000" not in done.stderr
    assert not (project / "out.json").exists()


NO_SCORE = "ValueError: could not parse a score from judge reply: "


# the metric's error: graph-agents-cli's words where its runner fails too (quoting the reply
# as it does), then ours; where it would take the score, ours alone
@pytest.mark.parametrize(
    ("malformed", "error"),
    [
        ("out_of_range", "unusable judge answer: score_out_of_range: 7 is outside 1..5"),
        ("bool_score", "unusable judge answer: score_not_number"),
        (
            "no_score",
            NO_SCORE + """'{"reasoning": "looks fine"}' (unusable judge answer: score_missing)""",
        ),
        (
            "non_json",
            NO_SCORE + "'I think this step is fine, maybe 0.7.' (unusable judge answer: "
            "score_missing)",
        ),
    ],
)
def test_a_protocol_error_never_becomes_a_score(project: Path, malformed: str, error: str) -> None:
    with JudgeServer(Script(malformed=malformed)) as bad:  # type: ignore[arg-type]
        done = grade(project, "--output", "out.json", server=bad)
    assert done.returncode == 2, done.stderr
    document = results(project / "out.json")
    for case in document["cases"]:
        for name, entry in case["judge_scores"].items():
            if entry["kind"] == "judge":
                assert entry["score"] is None
                assert entry["passed"] is None
                assert entry["error"] == error
                assert f"error: judge {name}: {error}" in case["reasons"]
    assert document["quality"]["response_quality"]["status"] == "incomplete"


def test_judge_server_faults_are_retried(project: Path) -> None:
    with JudgeServer(Script(fail_first=1, fail_first_fault="503")) as flaky:
        done = grade(project, "--output", "out.json", server=flaky)
    assert done.returncode == 1, done.stderr
    assert results(project / "out.json")["judge_usage"]["retries"] >= 4


def test_the_fake_judge_scores_the_maximum_and_says_so(project: Path) -> None:
    done = grade(project, "--output", "out.json", "--judge-provider", "fake")
    document = results(project / "out.json")
    assert done.returncode == 1, done.stderr  # too-slow still fails
    assert document["fake_model"] == ["judge"]
    assert document["judge"] == {"provider": "fake", "model": "test-judge"}
    score = by_id(document)["terse"]["judge_scores"]["response_quality"]
    assert (score["score"], score["reasoning"]) == (5.0, "fake provider: deterministic score")
    assert "plumbing check only" in document["warnings"][0]


def test_the_api_key_is_never_written(project: Path, server: JudgeServer) -> None:
    secret = "sk-test-5b1e0c9d"
    done = grade(project, "--output", "out.json", server=server, JUDGE_API_KEY=secret)
    assert done.returncode == 1
    assert server.log  # the key was used ...
    assert secret not in (project / "out.json").read_text()  # ... and written nowhere
    assert secret not in done.stdout + done.stderr


def test_custom_metrics_run_in_the_projects_own_venv(project: Path, server: JudgeServer) -> None:
    venv.create(project / ".venv", with_pip=False)
    # only the project's interpreter can import this module
    site = next((project / ".venv" / "lib").glob("python3*/site-packages"))
    (site / "project_only.py").write_text("LIMIT_WORDS = 1\n")
    metrics = project / "tests" / "eval" / "metrics.py"
    metrics.write_text(
        "import sys\nimport project_only\n\n\n"
        "def answer_length_ok(case, trace):\n"
        "    print('noise on stdout must not break the worker')\n"
        "    words = len((trace.get('response') or '').split())\n"
        "    return {'score': words <= 200, 'reasoning': sys.prefix}\n"
    )
    done = grade(project, "--output", "out.json", server=server)
    assert done.returncode == 1, done.stderr
    score = by_id(results(project / "out.json"))["greeting"]["judge_scores"]["answer_length_ok"]
    assert score["score"] == 1.0
    assert score["reasoning"] == str(project / ".venv")


def test_a_failing_custom_metric_is_an_error_case(project: Path, server: JudgeServer) -> None:
    metrics = project / "tests" / "eval" / "metrics.py"
    metrics.write_text("def answer_length_ok(case, trace):\n    return 'long'\n")
    done = grade(project, "--output", "out.json", server=server)
    assert done.returncode == 2
    case = by_id(results(project / "out.json"))["greeting"]
    assert case["status"] == "error"
    assert case["reasons"][0].startswith("error: custom metric answer_length_ok: ValueError: ")


def test_a_missing_trace_is_a_missing_case(project: Path, server: JudgeServer) -> None:
    traces = results(project / TRACES)
    traces["traces"] = [t for t in traces["traces"] if t["case_id"] != "greeting"]
    (project / TRACES).write_text(json.dumps(traces))
    done = grade(project, "--output", "out.json", server=server)
    assert done.returncode == 2
    case = by_id(results(project / "out.json"))["greeting"]
    assert (case["status"], case["reasons"]) == ("missing", ["missing: no trace for case"])


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("judges:\n  x:\n    prompt_template: '{bogus}'\n    rubric: r\n", "{bogus}"),
        ("quality_metrics:\n  nope: 3\n", "quality_metrics.nope"),
        ("judge:\n  max_tool_result_chars: 0\n", "judge.max_tool_result_chars"),
        ("custom_metrics: [nocolon]\n", "custom_metrics[0].callable"),
    ],
)
def test_configuration_errors_exit_3_before_any_judge_call(
    project: Path, server: JudgeServer, config: str, message: str
) -> None:
    (project / "tests" / "eval" / "eval_config.yaml").write_text(config)
    done = grade(project, "--output", "out.json", server=server)
    assert done.returncode == 3, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not server.log
    assert not (project / "out.json").exists()


def test_an_unknown_metric_on_a_case_exits_3(project: Path, server: JudgeServer) -> None:
    dataset = project / "tests/eval/datasets/basic-dataset.json"
    data = json.loads(dataset.read_text())
    data["cases"][0]["judge"] = {"humour": 3}
    dataset.write_text(json.dumps(data))
    done = grade(project, "--output", "out.json", "--dataset", str(dataset), server=server)
    assert done.returncode == 3
    assert "case 'greeting': judge.humour: unknown metric" in done.stderr
    assert not server.log


def test_the_graph_agents_cli_flag_set(project: Path, server: JudgeServer) -> None:
    """Exactly what graph-agents-cli passes to an `eval.grade` override."""
    done = grade(
        project,
        "--traces", TRACES,
        "--dataset", "tests/eval/datasets/basic-dataset.json",
        "--config", "tests/eval/eval_config.yaml",
        "--output", "artifacts/grade_results/results_x.json",
        "--judge-provider", "openai-compatible",
        "--judge-model", "other-judge",
        "--judge-timeout", "30",
        server=server,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    document = results(project / "artifacts/grade_results/results_x.json")
    assert document["judge"] == {"provider": "openai-compatible", "model": "other-judge"}
    assert {r.body["model"] for r in server.log} == {"other-judge"}


def test_atif_trajectories_are_traces(tmp_path: Path) -> None:
    source = ATIF_FIXTURES / "harbor-golden__openhands-hello-world.v1.5.json"
    shutil.copy(source, tmp_path / "run.json")
    traj = json.loads(source.read_text())
    agent_steps = [s for s in traj["steps"] if s["source"] == "agent"]
    final = agent_steps[-1]["message"]
    names = [c["function_name"] for s in agent_steps for c in s.get("tool_calls") or []]
    dataset = {
        "cases": [
            {
                "id": "run",
                "messages": [{"role": "user", "content": "task"}],
                "expect": {"contains": [final[:10]], "max_tokens": 300, "tool_calls": names},
            }
        ]
    }
    (tmp_path / "dataset.json").write_text(json.dumps(dataset))
    done = grade(tmp_path, "--traces", "run.json", "--dataset", "dataset.json", "-o", "o.json")
    assert done.returncode == 0, done.stderr
    assert "ignored" not in done.stderr  # matched by its file stem, not left over
    case = results(tmp_path / "o.json")["cases"][0]
    assert case["status"] == "passed"
    assert set(case["checks"]) == {"contains", "max_tokens", "tool_calls"}
    (tmp_path / "dataset.json").write_text(
        json.dumps({"cases": [{**dataset["cases"][0], "expect": {"max_tokens": 299}}]})
    )
    done = grade(tmp_path, "--traces", "run.json", "--dataset", "dataset.json", "-o", "o.json")
    assert done.returncode == 1  # 220 prompt + 80 completion tokens in final_metrics
    assert results(tmp_path / "o.json")["cases"][0]["reasons"][0].startswith("max_tokens: ")


def test_a_changed_dataset_is_graded_with_both_hashes_recorded(
    project: Path, server: JudgeServer
) -> None:
    dataset = project / "tests/eval/datasets/basic-dataset.json"
    changed = json.loads(dataset.read_text())
    changed["cases"] = [c for c in changed["cases"] if c["id"] != "too-slow"]
    changed["cases"].append({"id": "new", "messages": [{"role": "user", "content": "x"}]})
    (project / "v2.json").write_text(json.dumps(changed))
    done = grade(project, "--dataset", "v2.json", "--output", "out.json", server=server)
    assert done.returncode == 2, done.stderr  # "new" has no trace
    assert "hash mismatch" in done.stderr
    assert "1 trace(s) not in the dataset are ignored: too-slow" in done.stderr
    document = results(project / "out.json")
    traces = results(project / TRACES)
    assert document["traces_dataset_hash"] == traces["dataset_hash"]
    assert document["dataset_hash"] not in (None, traces["dataset_hash"])
    assert by_id(document)["new"]["reasons"] == ["missing: no trace for case"]
    # without --dataset, the recorded dataset file changed on disk: the embedded cases rule
    dataset.write_text(json.dumps(changed))
    done = grade(project, "--output", "out.json", server=server)
    assert done.returncode == 1, done.stderr
    assert "the dataset changed since the traces were made" in done.stderr
    assert results(project / "out.json")["dataset_hash"] == traces["dataset_hash"]


@pytest.mark.parametrize(
    ("source", "answer"),
    [("environment", "scored"), ("dotenv", "scored"), ("environment", "no_score")],
)
def test_a_judge_echoing_the_key_has_it_written_nowhere(
    project: Path, source: str, answer: str
) -> None:
    secret = "sk-echoed-grade-9d8e7f6a5b4c"
    env: dict[str, str] = {}
    if source == "dotenv":  # the project's own .env, as graph-agents-cli reads it
        with (project / ".env").open("a") as dotenv:
            dotenv.write(f"\nJUDGE_API_KEY={secret}\n")
    else:
        env["JUDGE_API_KEY"] = secret
    # no_score: the echo is in a reply the error quotes, as graph-agents-cli quotes it
    malformed: Malformed | None = "no_score" if answer == "no_score" else None
    with JudgeServer(Script(echo_credentials=True, malformed=malformed)) as judge:
        flags = ["--output", "out.json", "--html", "out.html"]
        done = grade(project, *flags, server=judge, **env)
        sent = [e for e in judge.log if e.headers.get("authorization") == f"Bearer {secret}"]
    assert sent  # the key was sent, and the judge quoted it back
    assert "I was sent" in (project / "out.json").read_text()
    if malformed:
        error = by_id(results(project / "out.json"))["greeting"]["judge_scores"]
        assert error["response_quality"]["error"] == (
            NO_SCORE + """'{"reasoning": "looks fine (I was sent authorization: Bearer ***)"}' """
            "(unusable judge answer: score_missing)"
        )
    store = project.parent / "cache" / "verdicts.sqlite"
    written = [project / "out.json", project / "out.html", store]
    everything = b"".join(p.read_bytes() for p in written) + (done.stdout + done.stderr).encode()
    assert secret.encode() not in everything


def test_a_rate_limiting_judge_is_said_unless_quiet(tmp_path: Path) -> None:
    """Each judge call is first refused with a wait long enough to be worth saying (11 s);
    the preflight is answered at once (refused too, it would add its own 11 s before the
    calls'). The loud and the quiet run wait side by side: the 11 s are waited once."""
    script = Script(
        fail_first=1, fail_first_fault="429", retry_after=11, fail_first_preflight=False
    )

    def graded(quiet: bool) -> tuple[subprocess.CompletedProcess[str], Path, int]:
        root = tmp_path / ("quiet" if quiet else "loud") / "proj"
        shutil.copytree(PROJECT, root)
        with JudgeServer(script) as judge:
            flags = ["--output", "out.json", "--no-cache", *(["--quiet"] if quiet else [])]
            return grade(root, *flags, server=judge), root, judge.outcomes()["429"]

    with ThreadPoolExecutor(2) as pool:
        (loud, loud_root, refused), (quiet, quiet_root, _) = pool.map(graded, (False, True))
    assert refused == 4  # every judge call waited, the preflight did not
    said = [line for line in loud.stderr.splitlines() if "rate-limiting" in line]
    assert len(said) == 1, loud.stderr  # said once, not for each call that waits
    assert said[0].startswith("warning: judge openai-compatible/")
    assert "(http_429, for 0 s): waiting 11." in said[0]
    assert [line for line in quiet.stderr.splitlines() if "rate-limiting" in line] == []
    for root in (loud_root, quiet_root):
        assert judge_scores(results(root / "out.json")) == PROJECT_JUDGE_SCORES
