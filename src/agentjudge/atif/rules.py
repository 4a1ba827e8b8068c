"""The semantic rules harbor enforces on top of the schema, plus ATIF's per-version ref rules.

Each rule yields a `Problem` naming the JSON path and a rule id, so a file reports every
violation at once rather than the first one. Rule ids are stable (documented in docs/atif.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from agentjudge.atif.models import Step, SubagentRef, Trajectory, version_minor
from agentjudge.errors import Problem, clip

AGENT_ONLY_FIELDS = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")
NO_LLM_FORBIDDEN = ("metrics", "reasoning_content")


def check_trajectory(traj: Trajectory, file: str, path: str = "$") -> Iterator[Problem]:
    """Every rule violation in `traj` and its embedded subagents, in document order."""
    minor = version_minor(traj.schema_version)
    if minor < 7 and traj.session_id is None:
        yield Problem(
            file,
            f"{path}.session_id",
            "session_id.required",
            f"{traj.schema_version} requires 'session_id' (optional only from ATIF-v1.7)",
        )
    for index, step in enumerate(traj.steps):
        yield from _check_step(step, index, minor, file, f"{path}.steps[{index}]")
    yield from _check_embedded(traj, file, path)


def _check_step(step: Step, index: int, minor: int, file: str, path: str) -> Iterator[Problem]:
    if step.step_id != index + 1:
        yield Problem(
            file,
            f"{path}.step_id",
            "step_id.sequence",
            f"step_id is {step.step_id} but must be {index + 1} (its 1-based position)",
        )
    if step.timestamp is not None and not _is_iso8601(step.timestamp):
        yield Problem(
            file,
            f"{path}.timestamp",
            "timestamp.iso8601",
            f"timestamp {step.timestamp[:60]!r} is not ISO 8601",
        )
    if step.source != "agent":
        for name in AGENT_ONLY_FIELDS:
            if getattr(step, name) is not None:
                yield Problem(
                    file,
                    f"{path}.{name}",
                    "step.agent_only_field",
                    f"'{name}' is only allowed on agent steps, this step's source is "
                    f"'{step.source}'",
                )
    elif step.llm_call_count == 0:
        for name in NO_LLM_FORBIDDEN:
            if getattr(step, name) is not None:
                yield Problem(
                    file,
                    f"{path}.{name}",
                    "step.llm_call_count_zero",
                    f"'{name}' must be absent when llm_call_count is 0 (a non-LLM dispatch)",
                )
    if step.observation is None:
        return
    call_ids = {call.tool_call_id for call in step.tool_calls or ()}
    for r_index, result in enumerate(step.observation.results):
        r_path = f"{path}.observation.results[{r_index}]"
        if result.source_call_id is not None and result.source_call_id not in call_ids:
            yield Problem(
                file,
                f"{r_path}.source_call_id",
                "observation.source_call_id",
                f"source_call_id {clip(repr(result.source_call_id))} matches no tool_call_id "
                "of this step",
            )
        ref_value = result.subagent_trajectory_ref
        if isinstance(ref_value, SubagentRef) and minor >= 2:
            yield Problem(
                file,
                f"{r_path}.subagent_trajectory_ref",
                "ref.shape",
                "from ATIF-v1.2 on, subagent_trajectory_ref is a list: wrap the object in [ ]",
            )
        for ref_index, ref in enumerate(result.refs()):
            ref_path = f"{r_path}.subagent_trajectory_ref"
            if isinstance(ref_value, list):
                ref_path += f"[{ref_index}]"
            yield from _check_ref(ref, minor, file, ref_path)


def _check_ref(ref: SubagentRef, minor: int, file: str, path: str) -> Iterator[Problem]:
    if minor >= 7:
        if not ref.trajectory_id and not ref.trajectory_path:
            yield Problem(
                file,
                path,
                "ref.target",
                "a subagent reference needs 'trajectory_id' (embedded) or 'trajectory_path' "
                "(file) from ATIF-v1.7 on; 'session_id' alone is informational",
            )
    elif ref.session_id is None:
        yield Problem(
            file,
            f"{path}.session_id",
            "ref.session_id",
            "before ATIF-v1.7 a subagent reference requires 'session_id'",
        )


def _check_embedded(traj: Trajectory, file: str, path: str) -> Iterator[Problem]:
    seen: set[str] = set()
    for index, child in enumerate(traj.subagent_trajectories or ()):
        c_path = f"{path}.subagent_trajectories[{index}]"
        if not child.trajectory_id:
            yield Problem(
                file,
                f"{c_path}.trajectory_id",
                "subagent.trajectory_id",
                "an embedded subagent trajectory needs a 'trajectory_id'",
            )
        elif child.trajectory_id in seen:
            yield Problem(
                file,
                f"{c_path}.trajectory_id",
                "subagent.trajectory_id",
                f"trajectory_id {clip(repr(child.trajectory_id))} repeats a sibling's; "
                "embedded subagents need unique ids",
            )
        else:
            seen.add(child.trajectory_id)
        yield from check_trajectory(child, file, c_path)


def _is_iso8601(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True
