"""Human labels of a set of ATIF trajectories, what `agentjudge calibrate` measures the judge
against (the format: docs/calibration.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentjudge.errors import UsageError
from agentjudge.files import read_json
from agentjudge.judge.taxonomy import CATEGORIES

LABELS_VERSION = 1
Category = Literal[CATEGORIES]  # type: ignore[valid-type]  # the taxonomy's tuple, spelled once


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class StepLabel(_Strict):
    """One step's label; `node` None means the root."""

    node: str | None = None
    step_id: Annotated[int, Field(ge=1)]
    passed: bool | None = Field(default=None, alias="pass")
    category: Category | None = None


class DecisiveLabel(_Strict):
    """The step that made the run fail (`node` None: the root) and the agent that took it."""

    node: str | None = None
    step_id: Annotated[int | None, Field(ge=1)] = None
    agent: Annotated[str | None, Field(min_length=1)] = None

    @model_validator(mode="after")
    def _something(self) -> DecisiveLabel:
        if self.step_id is None and self.agent is None:
            raise ValueError("give step_id, agent or both")
        return self


class TrajectoryLabels(_Strict):
    """What the labeller said of one trajectory (every part optional)."""

    outcome: Literal["pass", "fail"] | None = None
    steps: tuple[StepLabel, ...] = ()
    decisive: DecisiveLabel | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _once_each(self) -> TrajectoryLabels:
        seen: set[tuple[str | None, int]] = set()
        for step in self.steps:
            key = (step.node, step.step_id)
            if key in seen:
                raise ValueError(f"step {step.step_id} of node {step.node or 'root'} twice")
            seen.add(key)
        return self


class LabelSet(_Strict):
    """A labels file: per trajectory, keyed by its path relative to the file's folder."""

    version: Literal[1]
    source: str | None = None
    trajectories: Annotated[dict[str, TrajectoryLabels], Field(min_length=1)]


def load_labels(path: Path) -> LabelSet:
    """The labels file at `path`, checked; a bad one is one `UsageError` line naming the
    file, the field and the fix. Every labelled trajectory must exist beside it."""
    data = read_json(path, "labels file")
    try:
        labels = LabelSet.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        field = ".".join(str(p) for p in first["loc"]) or "$"
        message = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            message = "unknown field"
        raise UsageError(
            f"{path}: {field}: {message}; fix the labels file (docs/calibration.md)"
        ) from None
    for name in labels.trajectories:
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise UsageError(
                f"{path}: trajectories.{name}: must be a path inside the labels file's folder "
                "(relative, no ..); move the trajectory there"
            )
        target = trajectory_file(path, name)
        if not target.is_file():
            raise UsageError(
                f"{path}: trajectories.{name}: no such file {target}; keys are trajectory "
                "paths relative to the labels file's folder"
            )
    return labels


def trajectory_file(labels_path: Path, name: str) -> Path:
    """Where the trajectory a labels file names as `name` is."""
    return labels_path.parent / name


def labels_document(labels: dict[str, dict[str, Any]], source: str | None) -> dict[str, Any]:
    """A labels file's JSON, checked by the model (a converter's output must load)."""
    document = {"version": LABELS_VERSION, "source": source, "trajectories": labels}
    LabelSet.model_validate(document)
    return document
