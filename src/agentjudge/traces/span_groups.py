"""Spans grouped per trace in bounded memory, each trace handed on once the file is read.

A trace's spans may be spread over the whole file (exporters send spans in batches as they
end, whichever trace they belong to), so a trace is known to be complete only at the
file's end. Until then what a reader made of each span (its `Role`: the text it keeps, no
attributes) waits in a spill file of this process, and memory holds per open trace only
where its spans are in that file (16 bytes a span). The traces are then read back one at
a time, in the order they first appeared, so memory holds one trace's roles at once.

Two limits bound what is held, each failing at the line where it is passed:
`max_trajectory_files` (a trace is a run, one trajectory), and `max_file_bytes` for one
trace's spans as kept (one trace becomes one ATIF document, which that limit bounds).
"""

from __future__ import annotations

import marshal
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from typing import IO, Any

from agentjudge.atif.limits import Limits
from agentjudge.errors import InputError, Problem, clip
from agentjudge.traces.otlp_spans import Placed
from agentjudge.traces.span_runs import Agent, Call, Other, Role, Spot, ToolRun, Turn

_AGENT, _TURN, _TOOL, _OTHER = range(4)


def grouped(
    spans: Iterable[Spot], display: str, limits: Limits
) -> Iterator[tuple[str, list[Spot]]]:
    """`spans` (in the order read) as (trace id, its spans), one trace at a time.

    Raises `InputError` naming the file, the line and the trace when the file opens more
    traces than `max_trajectory_files`, or one trace's spans hold more than
    `max_file_bytes`.
    """
    with tempfile.TemporaryFile(prefix="agentjudge-spans-") as spill:
        index = _spill(spans, display, limits, spill)
        spill.flush()
        while index:
            trace_id = next(iter(index))
            yield trace_id, _read_back(spill, trace_id, index.pop(trace_id))


def _spill(
    spans: Iterable[Spot], display: str, limits: Limits, spill: IO[bytes]
) -> dict[str, tuple[array[int], list[int]]]:
    """Write each span's record; per trace, its records' (offset, size) pairs and size."""
    index: dict[str, tuple[array[int], list[int]]] = {}
    offset = 0
    for spot in spans:
        held = index.get(spot.trace_id)
        if held is None:
            if len(index) >= limits.max_trajectory_files:
                raise _problem(
                    display,
                    spot,
                    "limit.max_trajectory_files",
                    f"more than max_trajectory_files={limits.max_trajectory_files} traces "
                    "in this file (each is a run); raise the limit (--max-trajectory-files) "
                    "or split the file",
                )
            held = index[spot.trace_id] = (array("q"), [0])
        record = _encoded(spot)
        held[1][0] += len(record)
        if held[1][0] > limits.max_file_bytes:
            raise _problem(
                display,
                spot,
                "limit.max_file_bytes",
                f"this trace's spans hold more than max_file_bytes={limits.max_file_bytes} "
                "bytes of content by here (one trace is one ATIF document); raise the limit "
                "(--max-file-bytes) or check the trace ends",
            )
        held[0].extend((offset, len(record)))
        spill.write(record)
        offset += len(record)
    return index


def _read_back(spill: IO[bytes], trace_id: str, held: tuple[array[int], list[int]]) -> list[Spot]:
    places = held[0]
    spots = []
    for at in range(0, len(places), 2):
        spill.seek(places[at])
        spots.append(_decoded(trace_id, spill.read(places[at + 1])))
    return spots


def _encoded(spot: Spot) -> bytes:
    """A span as marshal writes plain values (the spill file is this process's own: marshal
    is safe on it, and several times as fast as pickling the dataclasses)."""
    role = spot.role
    fields: tuple[Any, ...]
    if isinstance(role, Turn):
        calls = tuple((c.call_id, c.name, c.arguments) for c in role.calls)
        fields = (_TURN, role.text, calls, role.user_input, role.model, role.prompt_tokens)
        fields += (role.completion_tokens, role.cached_tokens)
    elif isinstance(role, ToolRun):
        fields = (_TOOL, role.name, role.call_id, role.arguments, role.content, role.error)
    elif isinstance(role, Agent):
        fields = (_AGENT, role.name, role.user_input, role.graph_node)
    else:
        fields = (_OTHER, role.kind, role.graph)
    return marshal.dumps((spot.span_id, spot.parent_id, spot.start, spot.line, fields))


def _decoded(trace_id: str, record: bytes) -> Spot:
    span_id, parent_id, start, line, (kind, *rest) = marshal.loads(record)
    role: Role
    if kind == _TURN:
        role = Turn(rest[0], tuple(Call(*call) for call in rest[1]), *rest[2:])
    elif kind == _TOOL:
        role = ToolRun(*rest)
    elif kind == _AGENT:
        role = Agent(*rest)
    else:
        role = Other(*rest)
    return Placed(trace_id, span_id, parent_id, start, line, role)


def _problem(display: str, spot: Spot, rule: str, message: str) -> InputError:
    where = f"line {spot.line}: trace {clip(spot.trace_id)}"
    return InputError([Problem(display, where, rule, message)])
