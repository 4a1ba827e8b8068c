"""A provider agentjudge does not speak goes through the project's own `get_judge_model()`,
run in the project's environment (here a `.venv` with nothing of ours in it), concurrently,
with our retries, store and error kinds around it; custom metrics see the judge chosen.
The real graph-agents-cli drives the same in tests/e2e/test_graph_agents_cli.py."""

from __future__ import annotations

import json
import shutil
import venv
from pathlib import Path

import pytest

from agentjudge.testing import JudgeServer, Script
from tests.e2e.test_grade_cli import PROJECT, by_id, grade, results

pytestmark = pytest.mark.timeout(120)

# A chat model class of the project's own, which agentjudge cannot call itself: it speaks
# to its server in its own way (a POST of {"prompt": ...} turned into a chat completion
# here only because our test server is the one listening).
MODEL_PY = """
import json, os, threading, urllib.request

calls = 0
lock = threading.Lock()


class Reply:
    def __init__(self, content, usage):
        self.content = content
        self.usage_metadata = usage


class HouseModel:
    def __init__(self, name):
        self.model_name = name

    def invoke(self, prompt):
        text = prompt if isinstance(prompt, str) else prompt[-1].content
        if "[[raise]]" in text:
            raise RuntimeError("rate limited")
        if "[[no verdict]]" in text:
            return Reply("no verdict here", {})
        body = {"model": self.model_name, "messages": [{"role": "user", "content": text}]}
        request = urllib.request.Request(
            os.environ["HOUSE_MODEL_URL"] + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            data = json.load(answer)
        usage = {"input_tokens": 11, "output_tokens": 7}
        return Reply(data["choices"][0]["message"]["content"], usage)


def get_judge_model():
    provider = os.environ.get("JUDGE_MODEL_PROVIDER")
    if provider != "house":
        raise ValueError(f"Unknown MODEL_PROVIDER {provider!r}")
    if os.environ.get("HOUSE_MODEL_BROKEN"):
        raise RuntimeError("house model: no credentials configured")
    return HouseModel(os.environ["JUDGE_MODEL_NAME"])
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    return root


def with_house_model(project: Path) -> Path:
    """The project gets its own `.venv` (stdlib only) and a judge model of its own."""
    venv.create(project / ".venv", with_pip=False)
    utils = project / "app" / "app_utils"
    utils.mkdir(parents=True)
    (project / "app" / "__init__.py").write_text("")
    (utils / "__init__.py").write_text("")
    (utils / "model.py").write_text(MODEL_PY)
    return project


def test_the_projects_own_judge_model_grades_concurrently(project: Path) -> None:
    with_house_model(project)
    traces = results(project / "artifacts/traces/traces_20261130_060000.json")
    for trace in traces["traces"]:
        trace["response"] = f"{trace['response']} [[score=4]]"
    (project / "artifacts/traces/traces_20261130_060000.json").write_text(json.dumps(traces))
    with JudgeServer(Script(latency=0.4)) as server:
        flags = ["--judge-provider", "house", "--judge-model", "house-1", "--output", "out.json"]
        done = grade(project, *flags, HOUSE_MODEL_URL=server.base_url)
        assert done.returncode == 1, done.stderr  # the project has one failing case
        # the preflight first, then the four judge calls at once through the worker
        assert server.peak_in_flight >= 4
        assert {r.body["model"] for r in server.log} == {"house-1"}
    document = results(project / "out.json")
    assert document["judge"] == {"provider": "house", "model": "house-1"}
    cases = by_id(document)
    assert cases["weather"]["judge_scores"]["task_success"]["score"] == 4.0
    assert cases["greeting"]["judge_scores"]["response_quality"]["score"] == 4.0
    assert document["judge_usage"]["input_tokens"] == 11 * 5
    # a second run: every verdict from the store, the worker not asked
    again = grade(project, *flags, "--output", "again.json", HOUSE_MODEL_URL="http://127.0.0.1:9")
    assert again.returncode == 1, again.stderr
    assert "4 of 4 verdicts from the verdict store" in again.stderr


def test_the_project_models_failures_are_worded_as_graph_agents_cli_words_them(
    project: Path,
) -> None:
    with_house_model(project)
    traces = results(project / "artifacts/traces/traces_20261130_060000.json")
    markers = {"greeting": " [[raise]]", "weather": " [[no verdict]]", "terse": " [[score=4]]"}
    for trace in traces["traces"]:
        trace["response"] = f"{trace['response']}{markers.get(trace['case_id'], '')}"
    (project / "artifacts/traces/traces_20261130_060000.json").write_text(json.dumps(traces))
    with JudgeServer() as server:
        flags = ["--judge-provider", "house", "--judge-model", "house-1", "--output", "out.json"]
        done = grade(project, *flags, "--no-cache", HOUSE_MODEL_URL=server.base_url)
    assert done.returncode == 2, done.stderr
    cases = by_id(results(project / "out.json"))
    # the exception the model raised, as graph-agents-cli records it, then ours: it was
    # taken as a failed call (no HTTP status of its own: a 502), retried, and failed
    raised = "RuntimeError: rate limited (judge call failed: http_502)"
    assert cases["greeting"]["judge_scores"]["response_quality"]["error"] == raised
    assert cases["greeting"]["reasons"] == [f"error: judge response_quality: {raised}"]
    # graph-agents-cli's runner's words for a reply it reads no score from, quoting it
    unusable = (
        "ValueError: could not parse a score from judge reply: 'no verdict here' "
        "(unusable judge answer: score_missing)"
    )
    assert cases["weather"]["reasons"] == [
        f"error: judge task_success: {unusable}",
        f"error: judge politeness: {unusable}",
    ]
    assert cases["terse"]["judge_scores"]["response_quality"]["score"] == 4.0


def test_a_project_judge_that_cannot_be_built_is_a_configuration_error(project: Path) -> None:
    with_house_model(project)
    flags = ["--judge-provider", "house", "--judge-model", "h", "--output", "out.json"]
    done = grade(project, *flags, HOUSE_MODEL_URL="http://127.0.0.1:9", HOUSE_MODEL_BROKEN="1")
    assert done.returncode == 3
    assert done.stderr.strip() == (
        "error: the project's judge (house/h, from app.app_utils.model.get_judge_model()) "
        "could not be built: RuntimeError: house model: no credentials configured"
    )
    assert not (project / "out.json").exists()


def test_a_project_judge_needs_the_projects_environment(project: Path) -> None:
    done = grade(project, "--judge-provider", "house", "--judge-model", "h", "-o", "out.json")
    assert done.returncode == 3
    assert "is not one agentjudge calls itself" in done.stderr
    assert "run graph-agents-cli install" in done.stderr


def test_custom_metrics_see_the_judge_chosen(project: Path) -> None:
    venv.create(project / ".venv", with_pip=False)
    (project / "tests" / "eval" / "metrics.py").write_text(
        "import os\n\n\n"
        "def answer_length_ok(case, trace):\n"
        "    chosen = os.environ.get('JUDGE_MODEL_PROVIDER'), os.environ.get('JUDGE_MODEL_NAME')\n"
        "    return {'score': 1, 'reasoning': '/'.join(map(str, chosen))}\n"
    )
    with JudgeServer() as server:
        flags = ["--judge-model", "picked-by-flag", "--output", "out.json"]
        done = grade(project, *flags, server=server)
    assert done.returncode == 1, done.stderr
    metric = by_id(results(project / "out.json"))["terse"]["judge_scores"]["answer_length_ok"]
    assert metric["reasoning"] == "openai-compatible/picked-by-flag"
