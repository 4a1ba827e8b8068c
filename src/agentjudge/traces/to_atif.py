"""`agentjudge convert traces --to atif`: trace files written out as validated ATIF documents."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjudge.atif.document import parse_trajectory
from agentjudge.atif.limits import Limits
from agentjudge.collisions import inside
from agentjudge.errors import InputError, Problem, UsageError
from agentjudge.files import write_atomic
from agentjudge.traces.formats import named
from agentjudge.traces.staging import stage


@dataclass(frozen=True, slots=True)
class Converted:
    """What a conversion wrote, and per trace file what its reader left out."""

    written: tuple[Path, ...]
    ignored: tuple[str, ...]


def convert_to_atif(paths: Sequence[str | Path], out: Path, forced: str | None = None) -> Converted:
    """Read every trace file under `paths`, validate each run as ATIF, then write one
    document per run into `out` (`<file>__<run>.json`).

    Nothing is written unless every file converts: the first problems are raised as
    `InputError` (exit 1). ATIF files among the inputs are refused: they need no conversion.
    An `out` that is not a folder, or whose files would land among the inputs, is a
    `UsageError` (exit 3) before anything is read.
    """
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: is not a folder; --out must name a folder (or a new one)")
    _check_out(paths, out)
    if forced is not None and named(forced) is None:
        raise InputError([Problem("--format", "$", "convert.atif", "ATIF needs no conversion")])
    staged = stage(paths, Limits(), forced)
    problems: list[Problem] = []
    documents: list[tuple[str, dict[str, Any]]] = []
    for item in staged.inputs:
        if item.problem is not None:
            problems.append(item.problem)
            continue
        if item.path not in staged.converted:
            problems.append(
                Problem(
                    item.display,
                    "$",
                    "convert.not_a_trace",
                    "not a trace file any reader recognises (ATIF needs no conversion); "
                    "name its format with --format",
                )
            )
            continue
        data = item.path.read_bytes()
        try:
            parse_trajectory(data, item.display)
        except InputError as exc:  # a reader wrote what ATIF refuses: a bug of ours
            raise AssertionError(f"converted run is not valid ATIF: {exc}") from None
        documents.append((item.display, json.loads(data)))
    if problems:
        raise InputError(problems)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"{out}: cannot create the folder ({exc.strerror or exc}); choose another --out"
        ) from None
    written = []
    for display, document in documents:
        target = out / (display.replace("/", "__").replace(":", "__") + ".json")
        write_atomic(target, document, indent=2, flag="OUT", what="a converted trajectory")
        written.append(target)
    notes = tuple(f"{display}: {left.line()}" for display, left in staged.ignored.items())
    return Converted(tuple(written), notes)


def _check_out(paths: Sequence[str | Path], out: Path) -> None:
    """Refuse an `out` that is, or lies inside, a folder being converted: the `*.json`
    written there would be read as inputs by the same command run again (and refused:
    ATIF is no trace). Links are followed, as the folder's search follows them."""
    place = os.path.realpath(out)
    for path in paths:
        if not Path(path).is_dir():
            continue
        root = os.path.realpath(path)
        if place == root or inside(place, root):
            raise UsageError(
                f"--out {out}: is inside the trace folder {path}, whose files this command "
                "reads (run again, it would read the converted *.json as traces); choose an "
                "--out outside that folder"
            )
