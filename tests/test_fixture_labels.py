"""The labels of the fixture runs (tests/fixtures/traces/labels.json): each labelled run is
there, its outcome is the one its folder's PROVENANCE.md records, and its failing step is a
step an agent took in the run as agentjudge reads it, the only one whose message or tool
calls hold the text the label quotes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjudge.scoring.steps import FileCache, StepView, node_steps
from agentjudge.traces.staging import load_runs
from tests.conftest import FIXTURES

LABELS = FIXTURES / "traces" / "labels.json"
RUNS: list[dict[str, Any]] = json.loads(LABELS.read_text())["runs"]


def agent_steps(run: Path) -> dict[tuple[str | None, int], StepView]:
    """Every step an agent took in the one root `run` holds, by (agent, step id)."""
    trees = list(load_runs([run])[0])
    assert len(trees) == 1, f"{run}: {len(trees)} roots"
    files = FileCache()
    found: dict[tuple[str | None, int], StepView] = {}
    for node in trees[0].walk():
        for view in node_steps(node, files).steps:
            if view.source == "agent" and not view.is_context:
                found[(view.agent_name or node.agent_name, view.step_id)] = view
    return found


@pytest.mark.parametrize("label", RUNS, ids=[label["run"] for label in RUNS])
def test_a_labelled_run_reads_and_its_failing_step_is_an_agent_step(label: dict[str, Any]) -> None:
    run = FIXTURES / "traces" / label["run"]
    assert run.exists(), run
    folder = FIXTURES / "traces" / label["run"].split("/")[0]
    assert f"**{label['provenance']}**" in (folder / "PROVENANCE.md").read_text()
    assert label["outcome"] == label["provenance"].split()[0].lower()
    steps = agent_steps(run)
    failing = label["failing_step"]
    if failing is None:
        return
    assert label["outcome"] == "fail"
    key = (failing["agent"], failing["step_id"])
    assert key in steps, f"{run}: no agent step {failing['step_id']} of {failing['agent']}"
    quoted = failing["evidence"].lower()
    holding = [k for k, view in steps.items() if quoted in _said(view)]
    assert holding == [key]


def _said(view: StepView) -> str:
    """What a step's agent said and did (its message and tool calls), not the results."""
    return json.dumps([view.data.get("message"), view.data.get("tool_calls")]).lower()


def test_every_failed_run_the_provenance_names_a_step_of_is_labelled() -> None:
    labelled = {label["run"] for label in RUNS}
    assert len(labelled) == len(RUNS)
    failed = [label for label in RUNS if label["outcome"] == "fail"]
    assert len(failed) == 14
    assert sum(label["failing_step"] is not None for label in failed) == 12
