"""Traces: graph-agents-cli traces files (and ATIF trajectories), merged by case id.

A folder merges its `*.json` files in sorted order. All files must come from one dataset
(their non-null `dataset_hash` values agree). For a case traced twice the later
`generated_at` wins, and a tie goes to the later file.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjudge.cases.loading.json_stream import compact, drain_array, expand
from agentjudge.cases.loading.project import TRACES_DIR, caller_dir, json_files, latest_traces
from agentjudge.confine import not_regular_problem, resolve_inside
from agentjudge.errors import Problem, UsageError

# Wrapper fields copied from the first file that has them (they describe the agent run).
_META_KEYS = (
    "generated_at",
    "agent_version",
    "model",
    "model_provider",
    "dataset_paths",
    "base_url",
    "target",
)


@dataclass(slots=True)
class TraceSet:
    """Every trace by case id, the run's metadata, and the cases the traces embed."""

    files: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # each trace as compact JSON text: `find` parses the one asked for
    traces: dict[str, str] = field(default_factory=dict)
    # other names a trace answers to (an ATIF run's trajectory_id, session_id, file stem)
    aliases: dict[str, str] = field(default_factory=dict)
    embedded: dict[str, str] = field(default_factory=dict)  # a trace's `case`, as compact JSON

    @property
    def dataset_hash(self) -> str | None:
        value = self.meta.get("dataset_hash")
        return value if isinstance(value, str) else None

    def find(self, case_id: str) -> dict[str, Any] | None:
        """The trace of `case_id`, by its own id or by an alias."""
        text = self.traces.get(case_id)
        if text is None and case_id in self.aliases:
            text = self.traces.get(self.aliases[case_id])
        if text is None:
            return None
        trace: dict[str, Any] = expand(text)
        return trace

    def embedded_cases(self) -> Iterator[Any]:
        """The cases the traces embed, in the traces' order, parsed one at a time."""
        for case_id in self.traces:
            if case_id in self.embedded:
                yield expand(self.embedded[case_id])


def trace_files(root: Path | None, value: str | None) -> list[Path]:
    """The files `--traces` names: a file, a folder's `*.json`, or the project's newest."""
    if value:
        path = traces_path(root, value)
        files = json_files(path, "--traces")
        return _confined(files, Path(os.path.realpath(path))) if path.is_dir() else files
    if root is None:
        raise UsageError(
            "--traces: not inside a graph-agents-cli project (no graph-agents-cli-manifest.yaml "
            "here or above); pass --traces FILE_OR_FOLDER"
        )
    newest = latest_traces(root)
    if newest is None:
        raise UsageError(
            f"--traces: no traces_*.json under {root / TRACES_DIR}; run "
            "`graph-agents-cli eval generate` first, or pass --traces FILE_OR_FOLDER"
        )
    return _confined([newest], Path(os.path.realpath(root / TRACES_DIR)))


def traces_path(root: Path | None, value: str) -> Path:
    """The file or folder `--traces VALUE` names: graph-agents-cli's order, under the
    project, else from where the user stands."""
    path = Path(value)
    if not path.is_absolute():
        under = root / path if root is not None else None
        if under is not None and under.exists():
            path = under
        elif caller_dir() != Path.cwd():  # run from the project by our extension
            path = Path(os.path.normpath(caller_dir() / path))
    return path


def _confined(files: list[Path], root: Path) -> list[Path]:
    """A folder's files, checked before any is opened: a link must lead to a regular file
    inside the folder (a file the user names is followed wherever it leads)."""
    for path in files:
        target = resolve_inside(path, root, str(path))
        if isinstance(target, Problem):
            raise UsageError(f"traces file {target}")
        if not (target.is_file() or target.is_dir()):  # a folder: `read_json` says so
            raise UsageError(f"traces file {not_regular_problem(str(path))}")
    return files


def load_traces(files: list[Path]) -> TraceSet:
    """Merge the traces of `files` (graph-agents-cli traces files or ATIF trajectories).

    A traces file is read in one streaming pass and each trace kept as compact JSON text
    (`TraceSet.find` parses the one asked for): memory follows the files' size, not ten
    times it as parsed objects."""
    merged = TraceSet(meta={"dataset_hash": None})
    stamps: dict[str, str] = {}
    for path in files:
        merged.files.append(str(path))
        # this file's traces by case id (a later one wins within a file): its
        # generated_at, which decides against other files, may come after them
        texts: dict[str, str] = {}
        embedded: dict[str, str] = {}
        counter = itertools.count()

        def take(
            trace: Any,
            path: Path = path,
            texts: dict[str, str] = texts,
            embedded: dict[str, str] = embedded,
            counter: Iterator[int] = counter,
        ) -> None:
            index = next(counter)
            if not isinstance(trace, dict) or not trace.get("case_id"):
                raise UsageError(
                    f"traces file {path}: traces[{index}].case_id is missing; every trace "
                    "names the case it answers"
                )
            case_id, text, case = _kept(trace)
            texts[case_id] = text
            if case is not None:
                embedded[case_id] = case

        data = drain_array(path, "traces", "traces file", take)
        if _is_atif(data):
            # the ATIF models load only when an ATIF file is met
            from agentjudge.cases.loading.trajectories import trace_from_atif

            trace, aliases = trace_from_atif(data, path)
            _add(merged, stamps, _kept(trace), "")
            for alias in aliases:
                merged.aliases.setdefault(alias, trace["case_id"])
            continue
        if not isinstance(data, dict) or not isinstance(data.get("traces"), list):
            raise UsageError(
                f'traces file {path}: must be an object {{"traces": [...]}} (graph-agents-cli '
                "traces) or an ATIF trajectory"
            )
        _merge_meta(merged, data, path)
        stamp = str(data.get("generated_at") or "")
        if not merged.traces:  # nothing to decide against: the file's dicts are taken whole
            merged.traces, merged.embedded = texts, embedded
            stamps = dict.fromkeys(texts, stamp)
            continue
        for case_id, text in texts.items():
            _add(merged, stamps, (case_id, text, embedded.get(case_id)), stamp)
    return merged


# A trace as `load_traces` keeps it: its case id, its text, its embedded case's text
_Kept = tuple[str, str, str | None]


def _kept(trace: dict[str, Any]) -> _Kept:
    case = trace.get("case")
    return str(trace["case_id"]), compact(trace), compact(case) if isinstance(case, dict) else None


def _merge_meta(merged: TraceSet, data: dict[str, Any], path: Path) -> None:
    digest = data.get("dataset_hash")
    known = merged.meta.get("dataset_hash")
    if digest is not None and known is not None and digest != known:
        raise UsageError(
            f"traces file {path}: dataset_hash {digest} differs from {known} of the files "
            "before it; grade the traces of one dataset at a time"
        )
    if known is None:
        merged.meta["dataset_hash"] = digest
    for key in _META_KEYS:
        if data.get(key) is not None and merged.meta.get(key) is None:
            merged.meta[key] = data[key]


def _add(merged: TraceSet, stamps: dict[str, str], kept: _Kept, stamp: str) -> None:
    case_id, text, case = kept
    if case_id in merged.traces and stamps[case_id] > stamp:
        return
    merged.traces[case_id] = text
    stamps[case_id] = stamp
    if case is not None:
        merged.embedded[case_id] = case


def _is_atif(data: Any) -> bool:
    version = data.get("schema_version") if isinstance(data, dict) else None
    return isinstance(version, str) and version.startswith("ATIF-")
