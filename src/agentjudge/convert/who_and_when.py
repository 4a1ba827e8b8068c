"""Who&When runs as ATIF trajectories and calibration labels (pure: dicts in, dicts out).

A Who&When file (the failure-attribution benchmark of "Which Agent Causes Task Failures and
When?", ICML 2025) holds one failed multi-agent run: `question`, `ground_truth`, `history`
(messages `{content, role, name?}`) and the human labels `mistake_agent`, `mistake_step`
(a string: the 0-based index into `history` of the decisive error) and `mistake_reason`.

Each history message becomes one step, in order (step_id = index + 1), so a label's
`mistake_step` is step `mistake_step + 1`. The human's messages (role `human`, or role `user`
with no `name`) are `user` steps; every other message is an `agent` step, including the
algorithm-generated runs' `role: user` messages: AutoGen gives that role to whatever another
agent said, and their `name` says which agent spoke. Each step keeps its speaker in
`extra.agent_name` (the `name`, else the `role`: hand-crafted runs put the speaker there, as
in `Orchestrator (thought)`).
"""

from __future__ import annotations

from typing import Any

from agentjudge.errors import Problem

ATIF_VERSION = "ATIF-v1.7"  # the first with `trajectory_id`
# where the labels come from, said in the labels file
SOURCE = "Who&When (mingyin1/Agents_Failure_Attribution), MIT"


def check_run(data: Any, file: str) -> list[Problem]:
    """Why `data` is not a Who&When run (empty when it is): one problem per bad field."""
    if not isinstance(data, dict):
        return [_problem(file, "$", "must be a JSON object with `history` and the labels")]
    problems = []
    for field in ("question", "ground_truth"):
        if not isinstance(data.get(field), str):
            problems.append(_problem(file, f"$.{field}", "must be a string"))
    if not (isinstance(data.get("mistake_agent"), str) and data["mistake_agent"]):
        problems.append(_problem(file, "$.mistake_agent", "must be a string naming an agent"))
    history = data.get("history")
    if not isinstance(history, list) or not history:
        return [*problems, _problem(file, "$.history", "must be a non-empty list of messages")]
    for index, message in enumerate(history):
        where = f"$.history[{index}]"
        if not isinstance(message, dict):
            problems.append(_problem(file, where, "must be an object {content, role, name?}"))
            continue
        for field in ("content", "role"):
            if not isinstance(message.get(field), str):
                problems.append(_problem(file, f"{where}.{field}", "must be a string"))
        if "name" in message and not isinstance(message["name"], str):
            problems.append(_problem(file, f"{where}.name", "must be a string when present"))
    step = data.get("mistake_step")
    if not (isinstance(step, str) and step.isdigit() and int(step) < len(history)):
        problems.append(
            _problem(
                file,
                "$.mistake_step",
                f"must be a string holding an index into history (0 to {len(history) - 1})",
            )
        )
    return problems


def _problem(file: str, path: str, message: str) -> Problem:
    return Problem(file, path, "who_and_when", f"{message}: not a Who&When run")


def speaker(message: dict[str, Any]) -> str:
    """Who said `message`: its `name`, else its `role` (hand-crafted runs name it there)."""
    name = message.get("name")
    return name if isinstance(name, str) and name else str(message["role"])


def is_human(message: dict[str, Any]) -> bool:
    """The asker's message: role `human`, or role `user` with no speaker's name."""
    return message["role"] == "human" or (message["role"] == "user" and not message.get("name"))


def team(data: dict[str, Any]) -> str:
    """The system that ran: algorithm-generated runs carry per-agent system prompts."""
    return "captain-agent" if isinstance(data.get("system_prompt"), dict) else "magentic-one"


def to_trajectory(data: dict[str, Any], run_id: str) -> dict[str, Any]:
    """The ATIF trajectory of a checked run (see `check_run`); the labels stay out of it,
    so the judge never sees them. `run_id` is its trajectory id and reference id."""
    steps = []
    for index, message in enumerate(data["history"]):
        steps.append(
            {
                "step_id": index + 1,
                "source": "user" if is_human(message) else "agent",
                "message": message["content"],
                "extra": {"agent_name": speaker(message), "role": message["role"]},
            }
        )
    agent: dict[str, Any] = {"name": team(data), "version": "who-and-when"}
    if isinstance(data.get("system_prompt"), dict):
        agent["extra"] = {"system_prompts": data["system_prompt"]}
    extra = {
        # the algorithm-generated histories do not hold the question: the judge reads it here
        "task_instruction": data["question"],
        "reference_id": run_id,
        "question": data["question"],
        "ground_truth": data["ground_truth"],
        "question_id": data.get("question_ID"),
        "level": data.get("level"),
        "source": "who-and-when",
    }
    return {
        "schema_version": ATIF_VERSION,
        "trajectory_id": run_id,
        "agent": agent,
        "steps": steps,
        "extra": {k: v for k, v in extra.items() if v is not None},
    }


def to_labels(data: dict[str, Any]) -> dict[str, Any]:
    """The calibration labels of a checked run (docs/calibration.md): it failed; the
    decisive step is `mistake_step + 1` by `mistake_agent`; the steps before it pass and
    it fails (our reading: annotators marked the first decisive error); later steps are
    left unlabelled. Who&When's `mistake_type` is not our taxonomy: no category is given."""
    decisive = int(data["mistake_step"]) + 1
    steps = [{"step_id": step_id, "pass": True} for step_id in range(1, decisive)]
    steps.append({"step_id": decisive, "pass": False})
    return {
        "outcome": "fail",
        "decisive": {"step_id": decisive, "agent": data["mistake_agent"]},
        "steps": steps,
        "note": data.get("mistake_reason"),
    }


def reference_registry(answers: dict[str, str], criteria: list[dict[str, Any]]) -> dict[str, Any]:
    """A reference registry (`--scoring-mode reference`) of each run's ground truth, keyed
    by its reference id, scored on `criteria`."""
    references = {run_id: {"answer": answer} for run_id, answer in sorted(answers.items())}
    return {
        "version": 1,
        "rubrics": {"default": {"criteria": criteria, "references": references}},
    }
