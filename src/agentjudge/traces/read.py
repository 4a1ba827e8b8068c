"""What a trace reader gives back: ATIF documents, and a count of what it left out.

Each reader is one module beside this one; it maps its format onto ATIF (subagents
embedded in `subagent_trajectories`) and records, per step, where the step came from
(`extra["source"]`: trace and span ids, session file and line, log and sample ids) so a
user can find it again in the tool that recorded it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjudge.atif.limits import Limits


@dataclass(frozen=True, slots=True)
class Run:
    """One recorded run, a root agent and its subagents, as one ATIF trajectory document.

    `name` tells runs of one file apart (a trace id, a session id, a sample id).
    """

    name: str
    document: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TraceFile:
    """The runs read from one file, and what was not mapped, counted by kind.

    `ignored` is what `validate` names ("ignored 12 spans: 10 embeddings, 2 retrieval"):
    a reader never drops a span, line or event without counting it here. `runs` may be
    built as they are taken (the span readers' are: one trace in memory at a time), may
    raise `InputError` while taken, and is taken once; `ignored` is complete after.
    """

    runs: Iterable[Run]
    ignored: Mapping[str, int] = field(default_factory=dict)
    unit: str = "spans"  # what `ignored` counts: spans, lines, events


@dataclass(frozen=True, slots=True)
class Format:
    """A format a trace file may be in: how to recognise it and how to read it.

    `sniff` gets the path and the file's first bytes; `read` gets the path, the name to
    show for it and the limits (`max_file_bytes`: the most it may hold in memory at once, a
    whole document, or one line of a line-per-record file), and raises `InputError` with one line
    naming the file, the line or span, and the fix.
    """

    name: str
    sniff: Callable[[Path, bytes], bool]
    read: Callable[[Path, str, Limits], TraceFile]
