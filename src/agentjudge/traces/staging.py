"""Trace files handed to the ATIF loader: each run converted into a work folder.

`validate` and `score` take trace files (and folders holding them) beside ATIF files.
Each named file is recognised by its content (or `--format`); a trace file's runs are
written as ATIF documents into a work folder of this process (removed when it exits),
one folder per trace file, and given to the ATIF loader under the original file's name
plus the run's (`spans.jsonl:<trace id>`), so every message and result names what the user
named. Nothing after loading knows a trace format; the steps' `extra.source` point back to
the spans.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentjudge.atif.discover import InputFile, discover
from agentjudge.atif.limits import Limits
from agentjudge.atif.node import Node
from agentjudge.atif.tree import load_inputs
from agentjudge.errors import InputError, Problem, clip
from agentjudge.traces.formats import HEAD_BYTES, detect, format_names, named
from agentjudge.traces.otlp_spans import is_otlp_export
from agentjudge.traces.read import Format, TraceFile

# Names of files a folder is searched for: ATIF documents, OTLP/JSON documents and lines,
# session logs, Inspect's zipped eval logs.
LINE_FILES = (".jsonl", ".ndjson")
SUFFIXES = (".json", *LINE_FILES, ".eval")


# What `Left.line` shows of the kinds a file names: enough to tell them apart
KIND_CHARS = 60
KINDS_SHOWN = 12


@dataclass(frozen=True, slots=True)
class Left:
    """What a trace file's reader did not map: counts by kind, of `unit` (spans, lines)."""

    counts: Mapping[str, int]
    unit: str

    def line(self) -> str:
        """`ignored 12 spans: 10 embedding, 2 retriever` (largest first).

        The kinds come from the file (a span's name, a line's `type`), so the line is
        bounded: each kind cut to `KIND_CHARS`, at most `KINDS_SHOWN` of them, then how
        many more; a file of a million distinct kinds, or one of megabytes, prints one
        short line."""
        total = sum(self.counts.values())
        ordered = sorted(self.counts.items(), key=lambda pair: -pair[1])
        unit = self.unit.removesuffix("s") if total == 1 else self.unit
        shown = [f"{n} {clip(kind, KIND_CHARS)}" for kind, n in ordered[:KINDS_SHOWN]]
        if len(ordered) > KINDS_SHOWN:
            shown.append(f"and {len(ordered) - KINDS_SHOWN} more kinds")
        return f"ignored {total} {unit}: " + ", ".join(shown)

    def as_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "counts": dict(self.counts)}


@dataclass
class Staged:
    """The files to load, and per trace file (by display name) what its reader left out."""

    inputs: list[InputFile] = field(default_factory=list)
    ignored: dict[str, Left] = field(default_factory=dict)
    converted: set[Path] = field(default_factory=set)  # the runs written from trace files


def load_runs(
    paths: Sequence[str | Path], limits: Limits | None = None, forced: str | None = None
) -> tuple[Iterator[Node], Staged]:
    """The trees of `paths` (ATIF and trace files alike), and what was staged for them."""
    limits = limits or Limits()
    staged = stage(paths, limits, forced)
    return load_inputs(staged.inputs, limits), staged


def stage(paths: Sequence[str | Path], limits: Limits, forced: str | None = None) -> Staged:
    """Find the files under `paths`, convert trace files' runs to ATIF in a work folder.

    `forced` names the format every file is read in (`--format`); else each file's first
    bytes decide, and a file no trace format recognises goes to the ATIF loader as it is.
    """
    fixed = named(forced) if forced is not None else None
    staged = Staged()
    work: Path | None = None
    for index, item in enumerate(discover(paths, limits.max_trajectory_files, SUFFIXES)):
        if item.problem is not None:
            staged.inputs.append(item)
            continue
        fmt, otlp = (fixed, False) if forced is not None else _detected(item)
        if fmt is None:
            staged.inputs.append(item if forced is not None else _atif_or_problem(item, otlp))
            continue
        work = work or _work_folder()
        try:
            read = fmt.read(item.path, item.display, limits)
            runs = _written(read, item, work / str(index))
        except InputError as exc:  # the span readers read the file while runs are taken
            staged.inputs.append(_refused(item, exc.problems[0]))
            continue
        staged.inputs.extend(runs)
        _check_count(staged, limits, paths)  # before the next file is read
        staged.converted.update(run.path for run in runs)
        if read.ignored:
            staged.ignored[item.display] = Left(read.ignored, read.unit)
    _check_count(staged, limits, paths)
    return staged


def _check_count(staged: Staged, limits: Limits, paths: Sequence[str | Path]) -> None:
    if len(staged.inputs) > limits.max_trajectory_files:
        raise InputError(
            [
                Problem(
                    str(paths[0]),
                    "$",
                    "limit.max_trajectory_files",
                    f"{len(staged.inputs)} trajectories (runs of trace files counted), more "
                    f"than max_trajectory_files={limits.max_trajectory_files}; raise the limit "
                    "(--max-trajectory-files) or name fewer paths",
                )
            ]
        )


def _detected(item: InputFile) -> tuple[Format | None, bool]:
    """The format `item`'s first bytes show, and whether they are an OTLP export at all."""
    try:
        with item.path.open("rb") as stream:
            head = stream.read(HEAD_BYTES)
    except OSError:
        return None, False  # the ATIF loader says why it cannot be read
    return detect(item.path, head), is_otlp_export(item.path, head)


def _atif_or_problem(item: InputFile, otlp: bool) -> InputFile:
    """A file no trace reader knows is read as ATIF, unless it is an OTLP export (whose
    first spans carry no GenAI or OpenInference attribute) or named as a line file."""
    if not otlp and not item.display.endswith(LINE_FILES):  # a link's own name counts
        return item
    names = ", ".join(format_names())
    what = (
        f"an OTLP export whose first {HEAD_BYTES // 1024} KiB hold no GenAI or OpenInference span"
        if otlp
        else "not a trace format agentjudge recognises"
    )
    return _refused(
        item,
        Problem(
            item.display,
            "$",
            "traces.unknown_format",
            f"{what}; name its format with --format ({names})",
        ),
    )


def _refused(item: InputFile, problem: Problem) -> InputFile:
    return InputFile(item.path, item.root, item.display, problem)


def _written(read: TraceFile, item: InputFile, folder: Path) -> list[InputFile]:
    folder.mkdir()
    inputs = []
    for number, run in enumerate(read.runs, start=1):
        path = folder / f"run-{number}.json"
        path.write_bytes(_json(run.document))
        inputs.append(InputFile(path, folder, f"{item.display}:{run.name}"))
    return inputs


def _json(document: dict[str, Any]) -> bytes:
    """A run as JSON: orjson's, or json's ASCII where orjson refuses (a lone surrogate a
    trace escaped stays escaped, and the loader says if it is bad; an integer past 64 bits)."""
    try:
        return orjson.dumps(document)
    except orjson.JSONEncodeError:
        return json.dumps(document).encode("ascii")


def _work_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="agentjudge-traces-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder
