"""`agentjudge convert who-and-when`'s files: read the runs, write trajectories and labels."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjudge.calibration.labels import labels_document
from agentjudge.collisions import InputFolder, Named, check_no_collision
from agentjudge.convert.who_and_when import (
    SOURCE,
    check_run,
    reference_registry,
    to_labels,
    to_trajectory,
)
from agentjudge.errors import InputError, Problem, UsageError
from agentjudge.files import read_json, write_atomic
from agentjudge.scoring.criteria import DEFAULT_RUBRIC

TRAJECTORIES = "trajectories"  # OUT's subfolder: `validate`/`score` take it whole
LABELS = "labels.json"
REFERENCES = "references.json"


@dataclass(frozen=True)
class Converted:
    """What a conversion wrote: how many runs and steps, and where."""

    runs: int
    steps: int
    trajectories: Path
    labels: Path
    references: Path


def run_files(src: Path) -> list[Path]:
    """The Who&When files under `src` (a file, or a folder searched recursively)."""
    if src.is_file():
        return [src]
    if not src.is_dir():
        raise UsageError(f"{src}: no such file or folder; name a Who&When file or folder")
    files = sorted(p for p in src.rglob("*.json") if p.is_file())
    if not files:
        raise UsageError(f"{src}: no .json files in it; name a Who&When file or folder")
    return files


def run_id(path: Path) -> str:
    """A run's stable name: its folder's and its own (`hand-crafted/1.json` -> `hand-crafted-1`)."""
    return f"{path.parent.name}-{path.stem}" if path.parent.name else path.stem


def _check_paths(src: Path, out: Path, runs: dict[str, tuple[Path, dict[str, Any]]]) -> None:
    """Refuse (exit 3) an OUT whose files would overwrite a run read from `src`, or land
    inside the `src` folder, where the next conversion would read them."""
    outputs = [
        Named("OUT's trajectory", out / TRAJECTORIES / f"{name}.json", "OUT") for name in runs
    ]
    outputs += [
        Named("OUT's reference registry", out / REFERENCES, "OUT"),
        Named("OUT's labels", out / LABELS, "OUT"),
    ]
    inputs = [Named("the Who&When file", path) for path, _ in runs.values()]
    folders = [InputFolder("the Who&When folder", src)] if src.is_dir() else []
    check_no_collision(outputs, inputs, folders)


def convert_who_and_when(src: Path, out: Path) -> Converted:
    """Convert every run under `src` into `out`: one ATIF file per run in
    `out/trajectories/`, the labels in `out/labels.json` (keyed by the trajectory's path
    relative to `out`), the ground truths as a reference registry in `out/references.json`.
    Every file is checked first: with any bad one nothing is written (`InputError`)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: is not a folder; OUT must name a folder (or a new one)")
    runs: dict[str, tuple[Path, dict[str, Any]]] = {}
    problems: list[Problem] = []
    for path in run_files(src):
        data = read_json(path, "Who&When file")
        found = check_run(data, str(path))
        if found:
            problems.extend(found)
            continue
        name = run_id(path)
        if name in runs:
            raise UsageError(
                f"{path}: would be written as {name}.json like {runs[name][0]}; convert the "
                "two folders separately, into different OUT folders"
            )
        runs[name] = (path, data)
    if problems:
        raise InputError(problems)
    _check_paths(src, out, runs)
    labels: dict[str, dict[str, Any]] = {}
    answers: dict[str, str] = {}
    steps = 0
    for name, (_, data) in runs.items():
        trajectory = to_trajectory(data, name)
        steps += len(trajectory["steps"])
        write_atomic(out / TRAJECTORIES / f"{name}.json", trajectory, indent=2, flag="OUT")
        labels[f"{TRAJECTORIES}/{name}.json"] = to_labels(data)
        answers[name] = data["ground_truth"]
    criteria = [c.model_dump(mode="json") for c in DEFAULT_RUBRIC.criteria]
    registry = reference_registry(answers, criteria)
    write_atomic(out / REFERENCES, registry, indent=2, flag="OUT", what="the reference registry")
    document = labels_document(labels, SOURCE)
    write_atomic(out / LABELS, document, indent=2, flag="OUT", what="the labels")
    return Converted(len(runs), steps, out / TRAJECTORIES, out / LABELS, out / REFERENCES)
