"""Rubrics: what the judge scores each step against (`scoring_mode`), validated up front.

- `default`: the built-in general rubric (versioned with the prompts);
- `custom`: an inline object or a YAML/JSON file (1-32 unique criteria, 16 KiB at most);
- `reference`: a registry file of named rubrics whose reference answers are chosen by
  `extra.reference_id`, then `trajectory_id`, then `default`;
- `auto`: the judge derives criteria from each distinct task instruction, once (the verdict
  store keeps them across runs); an unusable answer falls back to the default rubric;
- `benchmark`: the built-in rubric of a well-known benchmark (`benchmark_name`, see
  `benchmarks.py`).

What the judge answers per step follows the mode, as the eval-hub-contrib `atif` provider
asks it (`Criteria.answer_shape`): one `score` for the step against all the criteria in
every mode but `custom`, one score per criterion in `custom`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentjudge.errors import UsageError, clip
from agentjudge.nesting import load_yaml

MAX_RUBRIC_BYTES = 16 * 1024
M = TypeVar("M", bound=BaseModel)
Aggregation = Literal["weighted_mean", "mean", "minimum"]
ScoringMode = Literal["default", "custom", "reference", "auto", "benchmark"]
# What the judge is asked for per step: the key of its JSON answer
AnswerShape = Literal["score", "scores"]


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=2000)]
    description: Annotated[str, Field(min_length=1, max_length=2000)]
    weight: float = 1.0

    @field_validator("weight")
    @classmethod
    def _positive(cls, value: float) -> float:
        if not math.isfinite(value) or value <= 0:
            raise ValueError("weight must be a finite number above 0")
        return value


class Rubric(BaseModel):
    """Named criteria and how one step's criterion scores combine into its score."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "custom"
    aggregation: Aggregation = "weighted_mean"
    criteria: Annotated[tuple[Criterion, ...], Field(min_length=1, max_length=32)]

    @field_validator("criteria")
    @classmethod
    def _unique(cls, value: tuple[Criterion, ...]) -> tuple[Criterion, ...]:
        names = [c.name for c in value]
        if len(set(names)) != len(names):
            raise ValueError("criterion names must be unique")
        return value

    def combine(self, scores: dict[str, float]) -> float:
        """The step score from its per-criterion scores."""
        values = [scores[c.name] for c in self.criteria]
        if self.aggregation == "minimum":
            return min(values)
        if self.aggregation == "mean":
            return sum(values) / len(values)
        total = sum(c.weight for c in self.criteria)
        return sum(scores[c.name] * c.weight for c in self.criteria) / total


DEFAULT_RUBRIC = Rubric(
    name="agentjudge-default",
    criteria=(
        Criterion(
            name="step_quality",
            description=(
                "How well this step advances the task: it is correct, uses the right tool "
                "with sensible arguments, builds on the evidence so far, respects the task's "
                "constraints and any policy, and its reasoning supports its action. For a "
                "user or system step, how clear and well-formed the input it gives is."
            ),
        ),
    ),
)


class ReferenceEntry(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    answer: str


class ReferenceRubric(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    aggregation: Aggregation = "weighted_mean"
    criteria: Annotated[tuple[Criterion, ...], Field(min_length=1, max_length=32)]
    references: Annotated[dict[str, ReferenceEntry], Field(min_length=1)]


class Registry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1]
    rubrics: dict[str, ReferenceRubric]


class Criteria(BaseModel):
    """The resolved criteria for a job: one rubric, plus reference answers in reference mode."""

    model_config = ConfigDict(frozen=True)

    mode: ScoringMode
    rubric: Rubric
    references: dict[str, str] = {}
    registry_version: str | None = None  # of the built-in benchmark rubrics, when used

    @property
    def answer_shape(self) -> AnswerShape:
        """What the judge answers per step: `scores`, one per criterion, combined by the
        rubric's aggregation, for a custom rubric only; else one `score` for the step
        against all the criteria. The eval-hub-contrib provider asks so, and a judge
        endpoint that serves its jobs answers no other shape."""
        return "scores" if self.mode == "custom" else "score"

    def reference_for(self, reference_id: str | None, trajectory_id: str | None) -> str | None:
        """The reference answer: by `extra.reference_id`, then `trajectory_id`, then
        `default`; None outside reference mode."""
        if self.mode != "reference":
            return None
        for key in (reference_id, trajectory_id, "default"):
            if key is not None and key in self.references:
                return self.references[key]
        return None


def resolve_criteria(
    mode: ScoringMode,
    rubric: Path | str | dict[str, Any] | None = None,
    registry: Path | str | None = None,
    reference_rubric: str = "default",
    benchmark_name: str | None = None,
) -> Criteria:
    """Validate and resolve the criteria before any judge call; `UsageError` names the fix."""
    if benchmark_name is not None and mode != "benchmark":
        raise UsageError(
            f"benchmark_name was given but scoring_mode is {mode!r}: use scoring_mode benchmark"
        )
    if mode == "benchmark":
        from agentjudge.scoring.benchmarks import BENCHMARK_REGISTRY_VERSION, BENCHMARK_RUBRICS

        names = ", ".join(BENCHMARK_RUBRICS)
        if benchmark_name is None:
            raise UsageError(f"scoring_mode 'benchmark' needs benchmark_name: one of {names}")
        chosen = BENCHMARK_RUBRICS.get(benchmark_name)
        if chosen is None:
            raise UsageError(
                f"benchmark_name {clip(repr(benchmark_name))} is not built in: use one of {names}"
            )
        return Criteria(mode=mode, rubric=chosen, registry_version=BENCHMARK_REGISTRY_VERSION)
    if mode in ("default", "auto"):
        if rubric is not None:
            raise UsageError(
                f"a rubric was given but scoring_mode is {mode!r}: use --scoring-mode custom"
            )
        return Criteria(mode=mode, rubric=DEFAULT_RUBRIC)
    if mode == "custom":
        if rubric is None:
            raise UsageError("scoring_mode 'custom' needs a rubric: --rubric FILE (YAML or JSON)")
        data, where = _document(rubric, "rubric")
        return Criteria(mode=mode, rubric=_model(Rubric, data, where))
    if registry is None:
        raise UsageError(
            "scoring_mode 'reference' needs reference_registry_path "
            "(--set reference_registry_path=FILE)"
        )
    data, where = _document(registry, "reference registry")
    parsed = _model(Registry, data, where)
    entry = parsed.rubrics.get(reference_rubric)
    if entry is None:
        names = ", ".join(sorted(parsed.rubrics)) or "none"
        raise UsageError(
            f"{where}: no rubric named {clip(repr(reference_rubric))} (it has: {names}); "
            "choose one with --reference-rubric"
        )
    chosen = Rubric(name=reference_rubric, aggregation=entry.aggregation, criteria=entry.criteria)
    answers = {key: ref.answer for key, ref in entry.references.items()}
    return Criteria(mode=mode, rubric=chosen, references=answers)


def derived_rubric(criteria: Any) -> Rubric | None:
    """A rubric from criteria the judge derived (auto mode), or None if they are not valid."""
    try:
        return Rubric.model_validate({"name": "auto", "criteria": criteria})
    except ValidationError:
        return None


def _document(source: Path | str | dict[str, Any], what: str) -> tuple[Any, str]:
    if isinstance(source, dict):
        text = json.dumps(source)
        where = f"inline {what}"
    else:
        path = Path(source)
        where = str(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"{path}: cannot read the {what} ({exc.strerror})") from None
        if len(raw) > MAX_RUBRIC_BYTES and what == "rubric":
            raise UsageError(f"{path}: the rubric is {len(raw)} bytes, more than 16 KiB")
        text = raw.decode("utf-8", errors="replace")
    if len(text.encode()) > MAX_RUBRIC_BYTES and what == "rubric":
        raise UsageError(f"{where}: the rubric is more than 16 KiB")
    try:
        return load_yaml(text, where), where
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{where}: not valid YAML or JSON{at}") from None


def _model(model: type[M], data: Any, where: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        path = ".".join(str(p) for p in first["loc"]) or "(top)"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise UsageError(f"{where}: {path}: {message}") from None
