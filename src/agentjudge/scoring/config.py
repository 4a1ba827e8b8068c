"""Every parameter of a scoring job, validated once (flags > config file > defaults).

Names follow the eval-hub-contrib `atif` provider where it has the parameter.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from agentjudge.atif import Limits
from agentjudge.errors import UsageError
from agentjudge.files import read_text_capped
from agentjudge.judge.defaults import SCORE_CALLS, CallLimits
from agentjudge.judge.samples import MAX_SAMPLES
from agentjudge.nesting import load_yaml
from agentjudge.scoring.aggregate import AggregationMode
from agentjudge.scoring.criteria import ScoringMode
from agentjudge.scoring.decisive import DEFAULT_DECISIVE_RULE, DecisiveRule
from agentjudge.traces.formats import format_names

Unit = Annotated[float, Field(ge=0.0, le=1.0)]
Positive = Annotated[int, Field(ge=1)]
JudgeKind = Literal["openai-compatible", "openai", "azure", "anthropic", "gemini", "fake", "local"]
_LIMITS = Limits()
RAY_ADDRESS = r"^(auto|local|(ray://)?[A-Za-z0-9._-]+:[0-9]{1,5})$"


class ScoreConfig(BaseModel):
    """A scoring job's parameters. Unknown keys are errors (a typo is never ignored)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trajectory_path: list[str] = []
    # the format every input is read in (docs/formats.md); None: each file's content says
    trace_format: str | None = None
    scoring_mode: ScoringMode = "default"
    rubric: str | dict[str, Any] | None = None
    reference_registry_path: str | None = None
    reference_rubric: str = "default"
    benchmark_name: str | None = None  # scoring_mode benchmark: a built-in benchmark rubric
    scored_frames: Literal["all", "agent"] = "all"
    context_steps: Positive = 6
    subagent_aggregation: AggregationMode = "flat"
    failure_threshold: Unit = 0.5
    # judge answers per scored step (and per categorization), combined (judge/samples.py)
    samples: Annotated[int, Field(ge=1, le=MAX_SAMPLES)] = 1
    judge_temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.0
    completion_threshold: Unit = 0.5
    # how the step that made a failed root fail is found (scoring/decisive.py)
    decisive_rule: DecisiveRule = DEFAULT_DECISIVE_RULE
    # which roots get one: those that did not pass, or every root (calibrate: the labels,
    # not the judge, say which runs failed)
    decisive_roots: Literal["failed", "all"] = "failed"
    max_subagent_depth: Annotated[int, Field(ge=0)] = 3
    partial_result_policy: Literal["fail_fast", "skip_failed_trajectory"] = "fail_fast"
    concurrency_limit: Positive = 16  # judge calls in flight
    # root trees scored at once (an eval-hub job's `concurrency_limit`); None: no bound
    # but the steps planned ahead (see scoring/step_budget.py)
    trajectory_concurrency_limit: Positive | None = None
    # a judge call's limits: judge/defaults.py, where every command's are
    judge_timeout_seconds: Annotated[float, Field(gt=0)] = SCORE_CALLS.timeout
    judge_max_attempts: Positive = SCORE_CALLS.max_attempts  # rate limits spend none
    judge_retry_budget_seconds: Annotated[float, Field(ge=0)] = SCORE_CALLS.retry_budget
    # a step whose calls ran out of retries is judged once more, this long after the rest
    judge_retry_round_pause_seconds: Annotated[float, Field(ge=0)] = 5.0
    judge_initial_backoff_seconds: Annotated[float, Field(ge=0)] = SCORE_CALLS.initial_backoff
    max_judge_requests: Positive | None = None
    max_input_tokens: Positive | None = None  # of the planned calls, checked before the first
    max_file_bytes: Positive = _LIMITS.max_file_bytes
    max_trajectory_files: Positive = _LIMITS.max_trajectory_files
    max_steps_per_trajectory: Positive = _LIMITS.max_steps_per_trajectory
    max_total_steps: Positive = _LIMITS.max_total_steps
    fail_under: Unit | None = None
    # roots at or above it (complete, not failed) are eligible as training data
    training_threshold: Unit | None = None
    output: str = "agentjudge-results.json"
    # the bootstrap interval of atif_overall_score: its seed and resamples (reproducible)
    bootstrap_seed: int = 0
    bootstrap_resamples: Annotated[int, Field(ge=10, le=100_000)] = 1000
    # the verdict store (`--no-cache`, `--cache`): keys users write, kept as they were named
    cache: bool = True
    cache_path: str | None = None
    judge: JudgeKind = "openai-compatible"
    judge_url: str | None = None
    judge_model: str | None = None
    judge_api_key_file: str | None = None
    judge_api_version: str | None = None  # Azure OpenAI's api-version
    judge_reasoning_effort: str | None = None  # reasoning models: none, minimal, low, ...
    judge_ca_bundle: str | None = None  # CA certificates (PEM) of an HTTPS judge
    # score on a Ray cluster (docs/distributed.md): "auto" joins the one RAY_ADDRESS or
    # `ray start` made, "local" starts one here, else the head's HOST:PORT or ray://HOST:PORT
    ray_address: str | None = None

    @field_validator("trace_format")
    @classmethod
    def _trace_format(cls, value: str | None) -> str | None:
        if value is not None and value not in format_names():
            raise ValueError(f"{value[:100]!r}: use one of {', '.join(format_names())}")
        return value

    @field_validator("ray_address")
    @classmethod
    def _ray_address(cls, value: str | None) -> str | None:
        if value is not None and not re.match(RAY_ADDRESS, value):
            raise ValueError(
                f"{value[:100]!r} is not a Ray address: auto, local, HOST:PORT or "
                "ray://HOST:PORT (a bare --ray before the paths takes the next word: write "
                "--ray=ADDRESS, or put --ray last)"
            )
        return value

    @model_validator(mode="after")
    def _judge_named(self) -> ScoreConfig:
        if self.judge == "openai-compatible" and not (self.judge_url or self.judge_model):
            raise ValueError(
                "no judge: give --judge-url and --judge-model (an OpenAI-compatible server), "
                "--judge openai|anthropic|gemini|azure with --judge-model, "
                "or --judge local (the embedded judge)"
            )
        return self

    def limits(self) -> Limits:
        return Limits(
            self.max_file_bytes,
            self.max_trajectory_files,
            self.max_steps_per_trajectory,
            self.max_total_steps,
        )

    def call_limits(self) -> CallLimits:
        """What one judge call may take, as this job sets it (`score`'s defaults otherwise)."""
        return replace(
            SCORE_CALLS,
            timeout=self.judge_timeout_seconds,
            max_attempts=self.judge_max_attempts,
            retry_budget=self.judge_retry_budget_seconds,
            initial_backoff=self.judge_initial_backoff_seconds,
        )


def load_config(
    config_file: Path | None,
    overrides: dict[str, Any],
    where: str = "flags",
    names: dict[str, str] | None = None,
) -> ScoreConfig:
    """The config file's values, then every flag that was given (None means not given);
    an error names `where` the values came from (the file, else `where`) and the key as
    `names` (the caller's name for a key, when it has another) says it."""
    values: dict[str, Any] = {}
    if config_file is not None:
        where = str(config_file)
        try:
            loaded = load_yaml(read_text_capped(config_file, "config file"), where)
        except yaml.YAMLError:
            raise UsageError(f"{config_file}: not valid YAML") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise UsageError(f"{config_file}: must be a mapping of parameter names to values")
        values.update(loaded or {})
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return ScoreConfig.model_validate(values)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        field = ".".join(str(p) for p in first["loc"])
        field = (names or {}).get(field, field)
        message = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            known = [(names or {}).get(key, key) for key in ScoreConfig.model_fields]
            close = difflib.get_close_matches(field, known, n=1)
            message = (
                f"unknown parameter (did you mean {close[0]}?)" if close else ("unknown parameter")
            )
        raise UsageError(f"{where}: {field + ': ' if field else ''}{message}") from None
