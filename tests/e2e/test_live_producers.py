"""Real agent frameworks, live: their agents run against our test server playing their
model (scripted tool calls, then an answer; a subagent), their instrumentations record the
spans, and `validate` and `score` read what they wrote. A new version of a producer that
changes its spans fails here, not in a user's job.

`make test` installs the producers in a virtualenv of their own (`.venv/peers/producers`,
pinned in the Makefile) and requires this test; elsewhere it is skipped when they are
missing. The drivers are in tests/e2e/producers/.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agentjudge.testing import JudgeServer, Script
from agentjudge.testing.agent_model import AgentScript, ToolCall, Turn
from tests.conftest import REPO
from tests.e2e.test_score_cli import judge_flags, score
from tests.e2e.test_trace_score_cli import validate

PRODUCERS_PYTHON = Path(
    os.environ.get("AGENTJUDGE_PRODUCERS_PYTHON", REPO / ".venv/peers/producers/bin/python")
)

if not PRODUCERS_PYTHON.exists():
    if os.environ.get("AGENTJUDGE_PRODUCERS_TESTS") == "required":
        raise RuntimeError(f"the producers are not installed at {PRODUCERS_PYTHON}: make test")
    pytest.skip(f"the producers are not installed at {PRODUCERS_PYTHON}", allow_module_level=True)

pytestmark = pytest.mark.timeout(120)

# the final answers the frameworks return: the scripts' last turns
ANSWERS = {
    "sum-pass": "numbers.txt holds 17 and 25; their sum is 42. [[score=0.5]]",
    "subagent-pass": "The meeting moved to Thursday at 3pm; bring the Q3 numbers. [[score=1.0]]",
}  # fmt: skip
QUESTION = "Open notes.txt and quote its contents. [[score=0.1]]"
NOTES = "Team meeting moved to Thursday 3pm. Bring the Q3 numbers."
# Every step's text carries the score the scripted judge gives it (its last marker counts):
# the scores in the results say which step each one is, in which agent.
READ_NUMBERS = (ToolCall("read_file", {"path": "numbers.txt"}),)
ASK_RESEARCHER = ToolCall("ask_researcher", {"question": QUESTION})
AGENT_SCRIPTS = (
    AgentScript(  # the researcher: a subagent's conversation starts with the delegated question
        "open notes.txt and quote its contents",
        (
            Turn("Opening it. [[score=0.2]]", (ToolCall("read_file", {"path": "notes.txt"}),)),
            Turn(f'notes.txt says: "{NOTES}" [[score=0.3]]'),
        ),
    ),
    AgentScript(
        "what is the sum of the numbers in numbers.txt",
        (
            Turn("Reading numbers.txt. [[score=0.7]]", READ_NUMBERS),
            Turn("Adding them up. [[score=0.8]]", (ToolCall("add_numbers", {"a": 17, "b": 25}),)),
            Turn(ANSWERS["sum-pass"]),
        ),
    ),
    AgentScript(
        "ask the researcher what my notes file says",
        (
            Turn("Asking the researcher. [[score=0.4]]", (ASK_RESEARCHER,)),
            Turn(ANSWERS["subagent-pass"]),
        ),
    ),
)  # fmt: skip
# a node: its depth, the step it hangs from, its steps' (source, tool calls, score)
Node = tuple[int, int | None, list[tuple[str, list[str], float]]]
# run -> its nodes. The coordinator's delegating step scores 0.3, not its own 0.4: the
# researcher's answer is that step's tool result, judged with it, and its marker comes last.
NODES: dict[str, list[Node]] = {
    "sum-pass": [
        (0, None, [("user", [], 0.6), ("agent", ["read_file"], 0.7),
                   ("agent", ["add_numbers"], 0.8), ("agent", [], 0.5)]),
    ],
    "subagent-pass": [
        (0, None, [("user", [], 0.9), ("agent", ["ask_researcher"], 0.3), ("agent", [], 1.0)]),
        (1, 2, [("user", [], 0.1), ("agent", ["read_file"], 0.2), ("agent", [], 0.3)]),
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    ("driver", "turn_attribute", "agents"),
    [
        # GenAI conventions: a model turn is a span whose gen_ai.operation.name is chat
        ("pydantic_ai_agent", ("gen_ai.operation.name", "chat"), ["coordinator", "researcher"]),
        # OpenInference: an LLM span; the AGENT spans are the graphs' model nodes, named "agent",
        # each named after its graph (the CHAIN span it is a node of)
        ("langgraph_agent", ("openinference.span.kind", "LLM"), ["coordinator", "researcher"]),
    ],
)
def test_a_live_producers_traces_validate_and_score_exactly(
    tmp_path: Path, driver: str, turn_attribute: tuple[str, str], agents: list[str]
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    with JudgeServer(Script(agent=AGENT_SCRIPTS)) as model:
        ran = subprocess.run(
            [str(PRODUCERS_PYTHON), "-m", f"tests.e2e.producers.{driver}", model.base_url,
             str(traces), *ANSWERS],
            capture_output=True, text=True, timeout=90, cwd=REPO,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        # every turn of every script was asked for once: 3 + 2 + the researcher's 2
        assert model.outcomes() == {"agent": 7}
    answered = [json.loads(line) for line in ran.stdout.splitlines()]
    assert answered == [{"run": run, "answer": answer} for run, answer in ANSWERS.items()]

    checked = validate("--json", traces, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    roots = {Path(r["file"]).name.split(".")[0]: r for r in json.loads(checked.stdout)["roots"]}
    assert sorted(roots) == sorted(NODES)
    for run, nodes in NODES.items():
        assert roots[run]["valid"], roots[run]["problems"]
        assert roots[run]["subagents"] == len(nodes) - 1
        shape = [(n["depth"], n["parent_step_id"], n["steps"]) for n in roots[run]["nodes"]]
        assert shape == [(depth, parent, len(steps)) for depth, parent, steps in nodes]

    with JudgeServer() as judge:
        scored = score(traces, "--output", tmp_path / "results.json", *judge_flags(judge),
                       cwd=tmp_path)  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    # the mean of the nodes' own scores (each the mean of its steps')
    own = [sum(s for *_, s in steps) / len(steps) for run in NODES.values() for *_, steps in run]
    assert results["metrics"]["atif_overall_score"] == pytest.approx(sum(own) / len(own))
    assert results["metrics"]["atif_trajectory_count"] == len(own)
    assert results["status"] == "succeeded"
    assert not results["step_errors"]
    for trajectory in results["trajectories"]:
        source = Path(trajectory["root"].split(":")[0])
        run = source.name.split(".")[0]
        spans = span_attributes(source)
        got = [
            (node["depth"], node["parent_step_id"],
             [(s["source"], s["tool_names"], s["score"]) for s in node["steps"]])
            for node in trajectory["nodes"]
        ]  # fmt: skip
        assert got == NODES[run]
        assert [node["agent"]["name"] for node in trajectory["nodes"]] == agents[: len(got)]
        trace_id = trajectory["root"].split(":")[1]
        turns = []
        for step in (step for node in trajectory["nodes"] for step in node["steps"]):
            assert step["origin"]["trace_id"] == trace_id
            assert step["origin"]["span_id"] in spans
            if step["source"] == "agent":
                turns.append(step["origin"]["span_id"])
        # each model turn points back to the span that recorded it, one span a turn
        key, kind = turn_attribute
        assert [spans[span].get(key) for span in turns] == [kind] * len(turns)
        assert len(set(turns)) == len(turns)


def span_attributes(path: Path) -> dict[str, dict[str, object]]:
    """Each span of an OTLP/JSON file by its id: its attributes' values."""
    spans: dict[str, dict[str, object]] = {}
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    attributes = span.get("attributes", [])
                    spans[span["spanId"]] = {
                        a["key"]: next(iter(a["value"].values()), None) for a in attributes
                    }
    return spans
