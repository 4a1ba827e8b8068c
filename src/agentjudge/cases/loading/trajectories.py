"""An ATIF trajectory read as one graph-agents-cli trace, so every `expect` check works on it.

- the response is the last agent step's message; tool calls are the agent steps' calls,
  each with the observation result that answers it (by `source_call_id`);
- usage comes from `final_metrics` (prompt and completion token totals);
- latency is the time from the first to the last timestamped step, when both are known;
- the trace answers to its `trajectory_id`, its `session_id` and the file's stem.

Embedded subagent trajectories are not flattened into the parent's calls: a case grades
what its agent did, and the subagent shows up as the tool call that started it.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentjudge.atif.document import schema_problems
from agentjudge.atif.models import Content, Trajectory
from agentjudge.atif.rules import check_trajectory
from agentjudge.errors import UsageError


def trace_from_atif(data: dict[str, Any], path: Path) -> tuple[dict[str, Any], list[str]]:
    """The trace of one ATIF document and the other ids it answers to."""
    try:
        traj = Trajectory.model_validate(data)
    except ValidationError as exc:
        problems = schema_problems(exc, str(path))
    else:
        problems = list(check_trajectory(traj, str(path)))
    if problems:
        more = f" (and {len(problems) - 1} more; `agentjudge validate` lists them)"
        raise UsageError(f"traces file {problems[0]}{more if len(problems) > 1 else ''}")
    names = [n for n in (traj.trajectory_id, traj.session_id, path.stem) if n]
    return _trace(traj, names[0]), names[1:]


def _trace(traj: Trajectory, case_id: str) -> dict[str, Any]:
    results: dict[str, Any] = {}
    calls: list[dict[str, Any]] = []
    response: str | None = None
    for step in traj.steps:
        if step.observation is not None:
            for result in step.observation.results:
                if result.source_call_id is not None:
                    results[result.source_call_id] = _text(result.content)
        if step.source != "agent" or step.is_copied_context:
            continue
        response = _text(step.message)
        for call in step.tool_calls or ():
            calls.append(
                {
                    "id": call.tool_call_id,
                    "name": call.function_name,
                    "args": call.arguments,
                    "result": None,
                    "is_error": False,
                }
            )
    for entry in calls:
        entry["result"] = results.get(entry["id"])
    model = traj.agent.model_name
    return {
        "case_id": case_id,
        "status": "ok",
        "response": response,
        "error": None,
        "tool_calls": calls,
        "usage": _usage(traj),
        "latency_ms": _latency_ms(traj),
        "run_id": traj.trajectory_id or traj.session_id,
        "thread_id": traj.session_id,
        "agent_version": traj.agent.version,
        "model": model,
        "structured_response": None,
        "format": traj.schema_version,
    }


def _text(content: Content | None) -> str | None:
    if content is None:
        return None
    if isinstance(content, str):
        return content
    return "".join(part.text or "" for part in content if part.type == "text")


def _usage(traj: Trajectory) -> dict[str, int] | None:
    final = traj.final_metrics
    if final is None or final.total_prompt_tokens is None or final.total_completion_tokens is None:
        return None
    return {
        "input_tokens": final.total_prompt_tokens,
        "output_tokens": final.total_completion_tokens,
    }


def _latency_ms(traj: Trajectory) -> float | None:
    stamps = [s.timestamp for s in traj.steps if s.timestamp]
    if len(stamps) < 2:
        return None
    try:
        first = datetime.fromisoformat(stamps[0].replace("Z", "+00:00"))
        last = datetime.fromisoformat(stamps[-1].replace("Z", "+00:00"))
    except ValueError:
        return None
    if (first.tzinfo is None) != (last.tzinfo is None):
        return None
    return round((last - first).total_seconds() * 1000, 3)
