"""Human labels of a set of ATIF trajectories, what `agentjudge calibrate` measures the judge
against (the format: docs/calibration.md). A file written by `agentjudge review` holds its
labels in a `review` section instead: labels of one results file's items, keyed by item."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentjudge.errors import UsageError
from agentjudge.files import read_json
from agentjudge.judge.taxonomy import CATEGORIES

LABELS_VERSION = 1
Category = Literal[CATEGORIES]  # type: ignore[valid-type]  # the taxonomy's tuple, spelled once
# where in the review order a label was given (review/order.py makes the order)
Part = Literal["unstable", "near_threshold", "decisive", "category_disagreement", "random"]
PARTS: tuple[Part, ...] = (
    "unstable",
    "near_threshold",
    "decisive",
    "category_disagreement",
    "random",
)


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


class ReviewedLabel(_Strict):
    """One reviewer's label of one item (a step, or a case's judge metric), as `review`
    writes it: pass/fail and/or a score on the judge's scale, a category, a note, and where
    in the review order it was given (its `part`)."""

    part: Part
    passed: bool | None = Field(default=None, alias="pass")
    score: float | None = None
    category: Category | None = None
    note: str | None = None
    reviewer: Annotated[str, Field(min_length=1)]
    at: Annotated[str, Field(min_length=1)]  # ISO 8601 UTC


class UndoEntry(_Strict):
    """One action to take back: the item's label before it (None: it had none)."""

    key: str
    previous: ReviewedLabel | None


class ReviewSection(_Strict):
    """The labels `agentjudge review` keeps: one reviewer's, on one results file (named as
    given, with its sha256), keyed by item (review/items.py: `<root>#<node>#<step_id>` for
    score results, `<case id>#<metric>` for grade results), and the actions to undo, last
    last."""

    results: Annotated[str, Field(min_length=1)]
    results_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    reviewer: Annotated[str, Field(min_length=1)]
    labels: dict[str, ReviewedLabel] = {}
    undo: tuple[UndoEntry, ...] = ()


class LabelSet(_Strict):
    """A labels file: per trajectory, keyed by its path relative to the file's folder; or,
    written by `agentjudge review`, a `review` section (then `trajectories` may be empty)."""

    version: Literal[1]
    source: str | None = None
    trajectories: dict[str, TrajectoryLabels] = {}
    review: ReviewSection | None = None

    @model_validator(mode="after")
    def _labels_somewhere(self) -> LabelSet:
        if not self.trajectories and self.review is None:
            raise ValueError("trajectories: label at least one trajectory")
        return self


def read_label_set(path: Path) -> LabelSet:
    """The labels file at `path`, checked against the format only; a bad one is one
    `UsageError` line naming the file, the field and the fix."""
    data = read_json(path, "labels file")
    try:
        return LabelSet.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        field = ".".join(str(p) for p in first["loc"]) or "$"
        message = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            message = "unknown field"
        raise UsageError(
            f"{path}: {field}: {message}; fix the labels file (docs/calibration.md)"
        ) from None


def load_labels(path: Path) -> LabelSet:
    """The labels file at `path` for scoring its trajectories, checked (`read_label_set`);
    every labelled trajectory must exist beside it. A file `review` wrote labels a results
    file's items, not trajectories: refused, naming the command that reads it."""
    labels = read_label_set(path)
    if labels.review is not None:
        raise UsageError(
            f"{path}: review: these are labels of the results {labels.review.results} "
            "(written by `agentjudge review`); run `agentjudge calibrate --labels "
            f"{path} RESULTS.json` on those results"
        )
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
