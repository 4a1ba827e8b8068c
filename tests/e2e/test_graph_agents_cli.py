"""The real graph-agents-cli 0.3.1 (its own virtualenv, `.venv/peers/graph-agents-cli`, with
uv), on a project it scaffolds in the test: `create`, `install`, `eval generate` with its
fake agent model, then its native `eval grade` and `eval grade` through our extension on
the same traces, compared: statuses, quality block and exit code, for
(a) the fake judge, (b) `JUDGE_*` pointing at our judge server, (c) the scaffold's default
judge (the agent's provider, `openai`) with `OPENAI_BASE_URL` + `OPENAI_API_KEY`, and
(d) a judge model class of the project's own, which agentjudge calls through the project's
`get_judge_model()` in the project's environment, concurrently.

`make test` installs graph-agents-cli and requires this test (a Python 3.12 or 3.13 for the
project is looked for in pyenv's folder, or given in AGENTJUDGE_PROJECT_PYTHON).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentjudge.testing import JudgeServer, Script
from tests.conftest import REPO

PEER = Path(os.environ.get("AGENTJUDGE_GAC_VENV", REPO / ".venv/peers/graph-agents-cli"))
GAC = PEER / "bin" / "graph-agents-cli"
EXTENSION = REPO / "deploy" / "graph-agents-cli"
OURS = REPO / ".venv" / "bin"  # where `agentjudge` is


def project_python() -> str | None:
    """A Python the scaffold takes (>= 3.12, < 3.14): uv may not download one here."""
    given = os.environ.get("AGENTJUDGE_PROJECT_PYTHON")
    if given:
        return given
    for version in ("3.13", "3.12"):
        found = sorted(glob.glob(str(Path.home() / f".pyenv/versions/{version}*/bin/python3")))
        if found:
            return found[-1]
    return shutil.which("python3.13") or shutil.which("python3.12")


PYTHON = project_python()
if not GAC.exists() or PYTHON is None:
    why = f"graph-agents-cli is not installed at {GAC}" if PYTHON else "no Python 3.12/3.13"
    if os.environ.get("AGENTJUDGE_GAC_TESTS") == "required":
        raise RuntimeError(f"{why}: run `make test`")
    pytest.skip(why, allow_module_level=True)

pytestmark = pytest.mark.timeout(600)

# The scores our judge server gives, by the agent's reply each prompt holds (graph-agents-cli
# and agentjudge word their prompts differently; both quote the reply)
SCORES = {"How can I help": 5.0, "I am a fake model": 2.0, "90 degrees": 4.0}
# A judge model class the project has and agentjudge does not speak: a LangChain chat model
# that calls our judge server in a request shape of its own
HOUSE_MODEL = """

import httpx as _httpx
from langchain_core.language_models import BaseChatModel as _BaseChatModel
from langchain_core.messages import AIMessage as _AIMessage
from langchain_core.outputs import ChatGeneration as _ChatGeneration, ChatResult as _ChatResult


class HouseChatModel(_BaseChatModel):
    model_name: str = "house-1"

    @property
    def _llm_type(self) -> str:
        return "house"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        asked = [{"role": "user", "content": messages[-1].content}]
        # a prompt quoting HOUSE_RAISES's text fails; one quoting HOUSE_MUMBLES's: no score
        raises, mumbles = os.environ.get("HOUSE_RAISES"), os.environ.get("HOUSE_MUMBLES")
        if raises and raises in asked[0]["content"]:
            raise RuntimeError("rate limited")
        if mumbles and mumbles in asked[0]["content"]:
            text = "no verdict here"
            return _ChatResult(generations=[_ChatGeneration(message=_AIMessage(content=text))])
        answer = _httpx.post(
            os.environ["HOUSE_URL"] + "/chat/completions",
            json={"model": self.model_name, "messages": asked},
            timeout=60,
        )
        answer.raise_for_status()
        text = answer.json()["choices"][0]["message"]["content"]
        return _ChatResult(generations=[_ChatGeneration(message=_AIMessage(content=text))])


_scaffold_get_judge_model = get_judge_model


def get_judge_model(**kwargs):
    if os.environ.get("JUDGE_MODEL_PROVIDER") == "house":
        return HouseChatModel(model_name=os.environ.get("JUDGE_MODEL_NAME") or "house-1")
    return _scaffold_get_judge_model(**kwargs)
"""
# a custom metric that asks the project which judge it would build
METRICS = """
from app.app_utils.model import get_judge_model


def judge_in_use(case, trace):
    model = get_judge_model()
    return {"score": 1, "reasoning": str(getattr(model, "model_name", type(model).__name__))}
"""


def environ(**extra: str) -> dict[str, str]:
    """A clean environment: graph-agents-cli and uv first on PATH, then `agentjudge`; no key
    or model setting of the machine's."""
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL"))
        and not k.startswith(("MODEL_", "JUDGE_", "VIRTUAL_ENV", "AGENTJUDGE_"))
    }
    keep["PATH"] = os.pathsep.join([str(PEER / "bin"), str(OURS), keep.get("PATH", "")])
    keep.update(UV_PYTHON_DOWNLOADS="never", UV_PYTHON=str(PYTHON), NO_COLOR="1")
    keep.update(extra)
    return keep


def gac(*args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GAC), *args], cwd=cwd, env=environ(PWD=str(cwd), **extra), capture_output=True,
        text=True, timeout=500,
    )  # fmt: skip


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project scaffolded, installed and run over its dataset with the fake agent model;
    our extension added; a few more judge metrics and a custom metric in its eval config."""
    folder = tmp_path_factory.mktemp("gac")
    done = gac("create", "my-agent", "-p", "-y", cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    root = folder / "my-agent"
    # uv installs no bytecode by default; with PYTHONDONTWRITEBYTECODE set (as on the
    # machine the suite is timed on) every later run of the project compiled its 7,000
    # modules again
    installed = gac("install", cwd=root, UV_COMPILE_BYTECODE="1")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    env = (root / ".env.example").read_text()
    env = env.replace("MODEL_PROVIDER=openai\n", "MODEL_PROVIDER=fake\n")
    env = env.replace("\nAPI_KEY=\n", "\nAPI_KEY=eval-local-key\n")
    (root / ".env").write_text(env)
    dataset = root / "tests/eval/datasets/basic-dataset.json"
    data = json.loads(dataset.read_text())
    cases = data["cases"] if isinstance(data, dict) else data
    for case in cases:  # more judged items: enough to see them run concurrently
        if case["id"] == "weather":
            case["judge"] = {"task_success": 3, "response_quality": 3}
        if case["id"] == "weather-follow-up":
            case["judge"] = {"groundedness": 5, "response_quality": 3}
    dataset.write_text(json.dumps(data, indent=2))
    generated = gac("eval", "generate", cwd=root)
    assert generated.returncode == 0, generated.stdout + generated.stderr
    (root / "tests/eval/metrics.py").write_text(METRICS)
    config = root / "tests/eval/eval_config.yaml"
    config.write_text(
        config.read_text().replace(
            "custom_metrics: []", "custom_metrics:\n  - tests.eval.metrics:judge_in_use"
        )
    )
    model = root / "app/app_utils/model.py"
    model.write_text(model.read_text() + HOUSE_MODEL)
    added = gac("extension", "add", "-y", f"local@{EXTENSION}", cwd=root)
    assert added.returncode == 0, added.stdout + added.stderr
    return root


@dataclass
class Graded:
    code: int
    document: dict[str, Any]
    output: str

    def outcome(self) -> dict[str, Any]:
        """What must be the same, whoever graded: statuses, quality, the exit code."""
        return {
            "code": self.code,
            "statuses": {c["id"]: c["status"] for c in self.document["cases"]},
            "quality": self.document["quality"],
            "summary": self.document["summary"],
        }


def grade_both(root: Path, *flags: str, **env: str) -> tuple[Graded, Graded]:
    """graph-agents-cli's own `eval grade`, then the same through our extension."""
    runs = []
    for name, overrides in (("theirs", "1"), ("ours", "0")):
        out = root / f"{name}.json"
        out.unlink(missing_ok=True)
        done = gac(
            "eval", "grade", "--output", str(out), *flags, cwd=root,
            GRAPH_AGENTS_CLI_DISABLE_OVERRIDES=overrides, **env,
        )  # fmt: skip
        assert out.exists(), done.stdout + done.stderr
        runs.append(Graded(done.returncode, json.loads(out.read_text()), done.stdout + done.stderr))
    return runs[0], runs[1]


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    with JudgeServer(Script(latency=0.3, scores=SCORES)) as server:
        yield server


def test_a_the_fake_judge(project: Path) -> None:
    theirs, ours = grade_both(project)
    assert ours.outcome() == theirs.outcome()
    assert theirs.document["judge"]["provider"] == "fake"
    assert ours.document["fake_model"] == theirs.document["fake_model"] == ["agent", "judge"]


def test_a2_each_tool_s_compare_and_analyze_read_the_other_s_results(project: Path) -> None:
    # ours carry `schema`, which graph-agents-cli ignores; theirs have none, read as v1
    theirs, ours = grade_both(project)
    assert (ours.document["schema"], "schema" in theirs.document) == ("agentjudge.grade/v1", False)
    reports, clusters = [], []
    for tool in ([str(GAC), "eval"], [str(OURS / "agentjudge")]):
        done = subprocess.run(
            [*tool, "compare", "theirs.json", "ours.json", "--json"], cwd=project,
            env=environ(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        reports.append(json.loads(done.stdout))
        for results in ("ours.json", "theirs.json"):
            before = set((project / "artifacts").glob("analysis_*.json"))
            done = subprocess.run(
                [*tool, "analyze", "--results", results], cwd=project, env=environ(),
                capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            [saved] = set((project / "artifacts").glob("analysis_*.json")) - before
            clusters.append(json.loads(saved.read_text())["clusters"])
            saved.unlink()
    assert reports[0] == reports[1]
    assert reports[0]["regressed"] is False
    assert clusters[0] == clusters[1] == clusters[2] == clusters[3]


def test_b_judge_settings_to_our_server(project: Path, judge: JudgeServer) -> None:
    env = {
        "JUDGE_MODEL_PROVIDER": "openai-compatible",
        "JUDGE_MODEL_NAME": "our-judge",
        "JUDGE_BASE_URL": judge.base_url,
        "JUDGE_API_KEY": "sk-judge-0000",
    }
    theirs, ours = grade_both(project, **env)
    assert ours.outcome() == theirs.outcome(), ours.output
    assert theirs.code == 1  # a failed groundedness and a quality miss
    assert ours.document["judge"] == {"provider": "openai-compatible", "model": "our-judge"}
    metric = {c["id"]: c for c in ours.document["cases"]}["greeting"]["judge_scores"]
    assert metric["judge_in_use"]["reasoning"] == "our-judge"  # the custom metric's judge


def test_c_the_scaffolds_default_judge(project: Path, judge: JudgeServer) -> None:
    # the agent's provider (openai) judges, through the OpenAI SDK's own variables
    env = {
        "MODEL_PROVIDER": "openai",
        "MODEL_NAME": "gpt-4o-mini",
        "OPENAI_BASE_URL": judge.base_url,
        "OPENAI_API_KEY": "sk-openai-0000",
    }
    theirs, ours = grade_both(project, **env)
    assert ours.outcome() == theirs.outcome(), ours.output
    assert ours.document["judge"] == {"provider": "openai", "model": "gpt-4o-mini"}
    assert {r.headers["authorization"] for r in judge.log} == {"Bearer sk-openai-0000"}


def test_d_a_judge_model_of_the_projects_own(project: Path, judge: JudgeServer) -> None:
    env = {"JUDGE_MODEL_PROVIDER": "house", "HOUSE_URL": judge.base_url}
    theirs, ours = grade_both(project, "--judge-model", "house-7", **env)
    assert ours.outcome() == theirs.outcome(), ours.output
    assert ours.document["judge"] == {"provider": "house", "model": "house-7"}
    assert judge.peak_in_flight >= 4  # ours, through one worker, many at a time
    metric = {c["id"]: c for c in ours.document["cases"]}["greeting"]["judge_scores"]
    assert metric["judge_in_use"]["reasoning"] == "house-7"


def test_e_the_project_models_failures_are_worded_as_graph_agents_cli_words_them(
    project: Path, judge: JudgeServer
) -> None:
    # the weather case's judges raise, the greeting's answer with no score; a model name of
    # its own, so that no verdict in the store answers for it
    env = {"JUDGE_MODEL_PROVIDER": "house", "HOUSE_URL": judge.base_url}
    env.update(HOUSE_RAISES="90 degrees", HOUSE_MUMBLES="How can I help")
    theirs, ours = grade_both(project, "--judge-model", "house-failing", **env)
    assert ours.outcome() == theirs.outcome(), ours.output
    assert theirs.code == 2
    errors = {
        (case["id"], name): (metric["error"], case["reasons"])
        for case in theirs.document["cases"]
        for name, metric in case["judge_scores"].items()
        if metric["error"]
    }
    said = {error for error, _ in errors.values()}
    assert said == {
        "RuntimeError: rate limited",
        "ValueError: could not parse a score from judge reply: 'no verdict here'",
    }
    ours_by_id = {case["id"]: case for case in ours.document["cases"]}
    for (case_id, name), (error, reasons) in errors.items():
        # graph-agents-cli's words first, then ours in parentheses, in the results and the
        # reasons alike
        mine = ours_by_id[case_id]["judge_scores"][name]["error"]
        assert mine in (
            f"{error} (judge call failed: http_502)",
            f"{error} (unusable judge answer: score_missing)",
        ), mine
        theirs_reason = f"error: judge {name}: {error}"
        assert theirs_reason in reasons
        assert f"error: judge {name}: {mine}" in ours_by_id[case_id]["reasons"]


def test_f_a_case_first_match_fails_is_named(project: Path) -> None:
    # "any search", then "search for x", of calls search(q=x), search(q=y): first-match
    # gives the only q=x call to the first entry and fails the second
    greedy_miss: list[Any] = ["search", {"name": "search", "args_subset": {"q": "x"}}]
    cases: list[dict[str, Any]] = [
        {"id": "either-search", "expect": {"tool_calls": greedy_miss}},
        {"id": "strict-first", "expect": {"tool_calls": greedy_miss[::-1]}},
    ]
    calls = [
        {"id": f"c{i}", "name": "search", "args": {"q": q}, "result": "r", "is_error": False}
        for i, q in enumerate("xy")
    ]
    for case in cases:
        case["messages"] = [{"role": "user", "content": "find x"}]
    traces = [
        {"case_id": case["id"], "status": "ok", "response": "found", "tool_calls": calls}
        for case in cases
    ]
    folder = project / "first-match"
    folder.mkdir(exist_ok=True)
    (folder / "dataset.json").write_text(json.dumps({"cases": cases}))
    (folder / "traces.json").write_text(json.dumps({"traces": traces}))
    flags = ["--traces", str(folder / "traces.json"), "--dataset", str(folder / "dataset.json")]
    theirs, ours = grade_both(project, *flags)
    statuses = {"either-search": "failed", "strict-first": "passed"}
    assert theirs.outcome()["statuses"] == statuses
    (failed,) = [c for c in theirs.document["cases"] if c["id"] == "either-search"]
    assert failed["reasons"] == [
        """tool_calls: expected tool call search({"q": "x"}) not found; actual calls: """
        "['search', 'search']"
    ]
    assert (theirs.code, ours.code) == (1, 0)
    assert ours.outcome()["statuses"] == {**statuses, "either-search": "passed"}
    warning = (
        "1 case(s) pass their expect checks here that first-match matching, as "
        "graph-agents-cli 0.3.1 does it, fails: either-search."
    )
    assert any(w.startswith(warning) for w in ours.document["warnings"])
    assert "warning: 1 case(s) pass their expect checks here" in " ".join(ours.output.split())


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ({"JUDGE_BASE_URL": "http://127.0.0.1:9/v1"}, "(transport_error: connection refused)"),
        ({"JUDGE_API_KEY": "sk-wrong-0000"}, "(http_401: "),
        ({"JUDGE_MODEL_NAME": "no-such-model"}, "(http_404: The model `no-such-model`"),
    ],
)
def test_an_unusable_judge_is_exit_3_with_nothing_written(
    project: Path, setting: dict[str, str], said: str
) -> None:
    with JudgeServer(mimic="openai", api_key="sk-judge-0000", models=("our-judge",)) as server:
        env = {
            "JUDGE_MODEL_PROVIDER": "openai-compatible",
            "JUDGE_MODEL_NAME": "our-judge",
            "JUDGE_BASE_URL": server.base_url,
            "JUDGE_API_KEY": "sk-judge-0000",
            **setting,
        }
        out = project / "unusable.json"
        done = gac("eval", "grade", "--output", str(out), cwd=project, **env)
    assert done.returncode == 3, done.stdout + done.stderr
    assert said in done.stderr
    assert "sk-wrong-0000" not in done.stdout + done.stderr
    assert not out.exists()


def test_without_agentjudge_the_extension_is_a_configuration_error(project: Path) -> None:
    env = environ()
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != str(OURS))
    done = subprocess.run(
        [str(GAC), "eval", "grade", "--output", "x.json"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 3
    assert "error: agentjudge is not installed where graph-agents-cli runs" in done.stderr
    assert not (project / "x.json").exists()


def test_relative_paths_from_a_subfolder_read_as_graph_agents_cli_reads_them(
    project: Path,
) -> None:
    traces = sorted((project / "artifacts/traces").glob("traces_*.json"))[-1]
    flags = ["--traces", f"../artifacts/traces/{traces.name}", "--output", "sub.json"]
    runs = {}
    for name, overrides in (("theirs", "1"), ("ours", "0")):
        (project / "sub.json").unlink(missing_ok=True)
        done = gac(
            "eval", "grade", *flags, cwd=project / "app",
            GRAPH_AGENTS_CLI_DISABLE_OVERRIDES=overrides,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr  # fake judge: the gate is met
        runs[name] = json.loads((project / "sub.json").read_text())  # under the project
    assert runs["ours"]["traces_files"] == [str(traces)]
    assert runs["ours"]["summary"] == runs["theirs"]["summary"]
