"""Read one file into a small summary (`FileInfo`), so a collection never sits in memory whole.

The summary keeps what building the tree needs: identity, agent, step counts, the subagent
references with the step that made them, embedded subagents, the continuation, and
claude-code sidechain groups. Step contents are read again when a node is scored.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

from agentjudge.atif.discover import InputFile
from agentjudge.atif.document import parse_trajectory
from agentjudge.atif.models import Step, Trajectory
from agentjudge.errors import InputError, Problem

# claude-code's tools that start a subagent: a sidechain's parent is the last main-chain step
# that called one of these before the sidechain's first step.
SPAWN_TOOLS = frozenset({"Task", "Agent"})

# Below this many files a process pool costs more than it saves.
PARALLEL_MIN_FILES = 256


@dataclass(frozen=True, slots=True)
class RefInfo:
    """A subagent reference, the step it sits on, and the sidechain it belongs to (if any)."""

    step_id: int
    json_path: str
    session_id: str | None
    trajectory_id: str | None
    trajectory_path: str | None
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class SidechainInfo:
    """A claude-code subagent merged into the main step list (`extra.is_sidechain`)."""

    agent_id: str
    steps: int
    context_steps: int
    parent_step_id: int | None


@dataclass(frozen=True, slots=True)
class TrajInfo:
    """What the tree needs of one trajectory object (a document or an embedded entry)."""

    pointer: str
    schema_version: str
    session_id: str | None
    trajectory_id: str | None
    agent_name: str
    agent_version: str
    model_name: str | None
    steps: int
    context_steps: int
    refs: tuple[RefInfo, ...]
    embedded: tuple[TrajInfo, ...]
    continuation: str | None
    sidechains: tuple[SidechainInfo, ...]


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One input file: valid (`traj` set) or not (`problems` set)."""

    path: Path
    root: Path
    display: str
    sha256: str
    traj: TrajInfo | None
    problems: tuple[Problem, ...] = ()


def index_files(
    inputs: Sequence[InputFile], max_file_bytes: int, workers: int | None = None
) -> Iterator[FileInfo]:
    """`index_file` over `inputs`, in input order; in worker processes when there are many.

    Validation is CPU-bound pure Python and pydantic, so processes (not threads) use every
    core. A single-threaded caller is forked (workers need not re-import `__main__`); a
    caller running threads gets `forkserver` workers, since forking threads is unsafe.
    """
    workers = workers or len(os.sched_getaffinity(0))
    method = "fork" if threading.active_count() == 1 else "forkserver"
    usable = method == "fork" or _main_is_importable()
    if workers < 2 or len(inputs) < PARALLEL_MIN_FILES or not usable:
        for item in inputs:
            yield _index_input(item, max_file_bytes)
        return
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        yield from pool.map(_index_input, inputs, repeat(max_file_bytes), chunksize=64)


def _main_is_importable() -> bool:
    """forkserver workers re-import `__main__` from its file; code fed on stdin has none."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return main_file is None or os.path.isfile(main_file)


def _index_input(item: InputFile, max_file_bytes: int) -> FileInfo:
    if item.problem is not None:  # refused by discovery: never opened
        return FileInfo(item.path, item.root, item.display, "", None, (item.problem,))
    return index_file(item.path, item.root, item.display, max_file_bytes)


def index_file(path: Path, root: Path, display: str, max_file_bytes: int) -> FileInfo:
    """Validate and summarise one file; problems are returned in the `FileInfo`, not raised."""
    try:
        size = path.stat().st_size
        if size > max_file_bytes:
            return _invalid(
                path,
                root,
                display,
                "limit.max_file_bytes",
                f"file is {size} bytes, more than max_file_bytes={max_file_bytes}; raise the "
                "limit (validate: --max-file-bytes; score: --set max_file_bytes=N) or split the "
                "trajectory",
            )
        data = path.read_bytes()
    except OSError as exc:
        return _invalid(path, root, display, "file.unreadable", f"cannot read: {exc.strerror}")
    digest = hashlib.sha256(data).hexdigest()
    try:
        traj = parse_trajectory(data, display)
    except InputError as exc:
        return FileInfo(path, root, display, digest, None, exc.problems)
    return FileInfo(path, root, display, digest, summarize(traj, "$"))


def summarize(traj: Trajectory, pointer: str) -> TrajInfo:
    """The `TrajInfo` of a validated trajectory and its embedded subagents."""
    steps = context = 0
    refs: list[RefInfo] = []
    groups: dict[str, list[int]] = {}
    group_context: dict[str, int] = {}
    spawners: list[tuple[int, int]] = []  # (index, step_id) of main-chain spawn steps
    for index, step in enumerate(traj.steps):
        agent_id = _sidechain_agent(step)
        copied = bool(step.is_copied_context)
        if agent_id is not None:
            groups.setdefault(agent_id, []).append(index)
            group_context[agent_id] = group_context.get(agent_id, 0) + copied
        elif copied:
            context += 1
        else:
            steps += 1
        if agent_id is None and any(c.function_name in SPAWN_TOOLS for c in step.tool_calls or ()):
            spawners.append((index, step.step_id))
        if step.observation is not None:
            for r_index, result in enumerate(step.observation.results):
                is_list = isinstance(result.subagent_trajectory_ref, list)
                for ref_index, ref in enumerate(result.refs()):
                    ref_path = f"{pointer}.steps[{index}].observation.results[{r_index}]"
                    ref_path += ".subagent_trajectory_ref" + (f"[{ref_index}]" if is_list else "")
                    refs.append(
                        RefInfo(
                            step.step_id,
                            ref_path,
                            ref.session_id,
                            ref.trajectory_id,
                            ref.trajectory_path,
                            agent_id,
                        )
                    )
    sidechains = tuple(
        SidechainInfo(
            agent_id,
            len(indexes) - group_context[agent_id],
            group_context[agent_id],
            _parent_step(spawners, indexes[0]),
        )
        for agent_id, indexes in groups.items()
    )
    embedded = tuple(
        summarize(child, f"{pointer}.subagent_trajectories[{i}]")
        for i, child in enumerate(traj.subagent_trajectories or ())
    )
    return TrajInfo(
        pointer=pointer,
        schema_version=traj.schema_version,
        session_id=traj.session_id,
        trajectory_id=traj.trajectory_id,
        agent_name=traj.agent.name,
        agent_version=traj.agent.version,
        model_name=traj.agent.model_name,
        steps=steps,
        context_steps=context,
        refs=tuple(refs),
        embedded=embedded,
        continuation=traj.continued_trajectory_ref,
        sidechains=sidechains,
    )


def _sidechain_agent(step: Step) -> str | None:
    extra = step.extra
    if not extra or extra.get("is_sidechain") is not True:
        return None
    agent_id = extra.get("agent_id")
    return agent_id if isinstance(agent_id, str) and agent_id else None


def _parent_step(spawners: list[tuple[int, int]], first_index: int) -> int | None:
    parent = None
    for index, step_id in spawners:
        if index >= first_index:
            break
        parent = step_id
    return parent


def _invalid(path: Path, root: Path, display: str, rule: str, message: str) -> FileInfo:
    return FileInfo(path, root, display, "", None, (Problem(display, "$", rule, message),))
