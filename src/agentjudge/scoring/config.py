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

    # each field's docstring is its description: `agentjudge score --help-config` lists them
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    trajectory_path: list[str] = []
    """ATIF and trace files or folders (searched recursively): the command's paths; one
    path may be given as a string."""
    trace_format: str | None = None
    """The format every input is read in (atif, otlp-genai, openinference, claude-code,
    codex, inspect: docs/formats.md); unset, each file's content says."""
    scoring_mode: ScoringMode = "default"
    """default | custom (`rubric`) | reference (`reference_registry_path`) | auto | benchmark."""
    rubric: str | dict[str, Any] | None = None
    """Custom rubric: a YAML or JSON file, or the rubric itself in a config file."""
    reference_registry_path: str | None = None
    """Registry of rubrics with reference answers (scoring_mode reference)."""
    reference_rubric: str = "default"
    """The rubric's name in the reference registry."""
    benchmark_name: str | None = None
    """scoring_mode benchmark: swe-bench-lite | terminal-bench | humaneval."""
    scored_frames: Literal["all", "agent"] = "all"
    """Which steps are judged: all, or the agent's only."""
    context_steps: Positive = 6
    """Earlier steps shown to the judge per context block."""
    judge_context_tokens: Annotated[int, Field(ge=1024)] | None = None
    """The judge's context window in tokens; unset, the price database's figure for its
    model. A step prompt that does not fit is fitted (docs/scoring.md, "Traces longer than
    the judge"); none known: prompts are not fitted."""
    subagent_aggregation: AggregationMode = "flat"
    """How subagents' scores combine into their root's."""
    failure_threshold: Unit = 0.5
    """Steps scored below it are failure candidates, categorized by the judge."""
    samples: Annotated[int, Field(ge=1, le=MAX_SAMPLES)] = 1
    """Judge answers per scored step (and per categorization); the score is their mean."""
    judge_temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.0
    """The judge's temperature (0 makes samples agree by construction)."""
    completion_threshold: Unit = 0.5
    """Nodes whose aggregate is at or above it pass."""
    decisive_rule: DecisiveRule = DEFAULT_DECISIVE_RULE
    """How the step a failed root went wrong at is found (judge_pick: one more call per
    failed root)."""
    decisive_roots: Literal["failed", "all"] = "failed"
    """Which roots get a decisive step: those that did not pass, or every root (calibrate:
    the labels, not the judge, say which runs failed)."""
    max_subagent_depth: Annotated[int, Field(ge=0)] = 3
    """Nodes deeper than this are unscored."""
    partial_result_policy: Literal["fail_fast", "skip_failed_trajectory"] = "fail_fast"
    """A node that cannot be scored fails the job (fail_fast), or only its tree."""
    concurrency_limit: Positive = 16
    """Judge calls in flight at most (--concurrency)."""
    trajectory_concurrency_limit: Positive | None = None
    """Root trees scored at once (an eval-hub job's `concurrency_limit`); none: bounded
    only by the steps planned ahead."""
    judge_timeout_seconds: Annotated[float, Field(gt=0)] = SCORE_CALLS.timeout
    """Seconds one attempt of one judge call may take (--judge-call-timeout)."""
    judge_phase_timeout_seconds: Annotated[float, Field(gt=0)] | None = None
    """Seconds the whole judging phase may take (--judge-timeout); then judging stops, what
    was judged is kept and the run is incomplete (exit 1). None: no bound."""
    judge_max_attempts: Positive = SCORE_CALLS.max_attempts
    """Failures one call may meet (5xx, drops, timeouts); rate limits spend none."""
    judge_retry_budget_seconds: Annotated[float, Field(ge=0)] = SCORE_CALLS.retry_budget
    """Seconds one call may wait out rate limits (429)."""
    judge_retry_round_pause_seconds: Annotated[float, Field(ge=0)] = 5.0
    """A step whose calls ran out of retries is judged once more, this long after the
    rest."""
    judge_initial_backoff_seconds: Annotated[float, Field(ge=0)] = SCORE_CALLS.initial_backoff
    """The first pause before a failed call is sent again (then it grows)."""
    max_judge_requests: Positive | None = None
    """Cap on judge calls: the plan is checked before the first, the run stops at it."""
    max_input_tokens: Positive | None = None
    """Refuse (exit 3) a job whose planned calls send more input tokens."""
    max_cost: Annotated[float, Field(gt=0)] | None = None
    """USD (--max-cost): refuse (exit 3) a job whose foretold cost is more, before the
    first call; during the run, no call is started once the calls' prices reach it (what
    was judged is kept, the run is incomplete: exit 1). Needs a price for the judge."""
    price_in: Annotated[float, Field(ge=0)] | None = None
    """USD per million input tokens (--price-in), over the price database's; with
    price_out."""
    price_cache_read: Annotated[float, Field(ge=0)] | None = None
    """USD per million input tokens read from the provider's prompt cache
    (--price-cache-read); none: price_in."""
    price_cache_write: Annotated[float, Field(ge=0)] | None = None
    """USD per million input tokens written to the provider's prompt cache
    (--price-cache-write); none: price_in."""
    price_out: Annotated[float, Field(ge=0)] | None = None
    """USD per million output tokens (--price-out), over the price database's; with
    price_in."""
    max_file_bytes: Positive = _LIMITS.max_file_bytes
    """Largest trajectory file accepted."""
    max_trajectory_files: Positive = _LIMITS.max_trajectory_files
    """Most trajectory files accepted."""
    max_steps_per_trajectory: Positive = _LIMITS.max_steps_per_trajectory
    """Most steps in one node."""
    max_total_steps: Positive = _LIMITS.max_total_steps
    """Most steps in one tree."""
    fail_under: Unit | None = None
    """Exit 1 when atif_overall_score is below it."""
    training_threshold: Unit | None = None
    """Also write manifests of the roots at or above it (complete, not failed: training
    data) and of the rest."""
    output: str = "agentjudge-results.json"
    """The results JSON (-o)."""
    bootstrap_seed: int = 0
    """Seed of the bootstrap interval of atif_overall_score (reproducible)."""
    bootstrap_resamples: Annotated[int, Field(ge=10, le=100_000)] = 1000
    """Resamples of that bootstrap interval."""
    # the verdict store: keys users write, kept as they were named
    cache: bool = True
    """Read and write the verdict store (false: --no-cache)."""
    cache_path: str | None = None
    """The verdict store's file (--cache) [~/.cache/agentjudge/verdicts.sqlite]."""
    batch: bool = False
    """Judge through the provider's batch API (openai, anthropic): half price, answered
    within 24 h; the batch ids are kept in the verdict store, so a re-run polls the same
    batches (--batch; docs/judge.md, "Batch mode")."""
    batch_poll_seconds: Annotated[float, Field(gt=0)] = 30.0
    """Seconds between polls of a submitted batch."""
    batch_fallback: Literal["batch", "online"] = "batch"
    """A request its batches did not answer (expired, canceled, errored), after 3 batches:
    an error (batch), or one online call at full price (online)."""
    judge: JudgeKind = "openai-compatible"
    """The judge's provider."""
    judge_url: str | None = None
    """The judge's base URL (…/v1); openai, anthropic and gemini have defaults."""
    judge_model: str | None = None
    """The judge's model name (Azure: the deployment)."""
    judge_api_key_file: str | None = None
    """File holding the judge's API key [else $AGENTJUDGE_JUDGE_API_KEY, else the provider's own
    variable]."""
    judge_api_version: str | None = None
    """Azure OpenAI's api-version."""
    judge_reasoning_effort: str | None = None
    """Reasoning models: none | minimal | low | medium | high."""
    judge_ca_bundle: str | None = None
    """CA certificates (PEM) of an HTTPS judge [the system's]."""
    ray_address: str | None = None
    """Score on a Ray cluster (docs/distributed.md): auto joins the one RAY_ADDRESS or `ray
    start` made, local starts one here, else the head's HOST:PORT or ray://HOST:PORT."""

    @field_validator("trajectory_path", mode="before")
    @classmethod
    def _one_path(cls, value: Any) -> Any:
        # one path as a string, as the eval-hub-contrib provider's `trajectory_path` is
        # written (and `--set trajectory_path=runs/`): a list of that one path
        return [value] if isinstance(value, str) else value

    @field_validator("cache_path")
    @classmethod
    def _store_path(cls, value: str | None) -> str | None:
        # an empty path would fall back to the shared default store without a word
        if value is not None and not value.strip():
            raise ValueError("an empty path: give the verdict store's file, or cache: false")
        return value

    @field_validator("trace_format")
    @classmethod
    def _trace_format(cls, value: str | None) -> str | None:
        if value is not None and value not in format_names():
            # not quoted back: a value given with --set may be a secret pasted in the wrong key
            raise ValueError(f"unknown format: use one of {', '.join(format_names())}")
        return value

    @field_validator("ray_address")
    @classmethod
    def _ray_address(cls, value: str | None) -> str | None:
        if value is not None and not re.match(RAY_ADDRESS, value):
            raise ValueError(
                # not quoted back: a value given here may hold a credential
                "not a Ray address: auto, local, HOST:PORT or ray://HOST:PORT"
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
    """The config file's values, then every override that was given (None means not
    given), validated once. An error names where the bad value came from (the config
    file, else `where`) and its key as `names` spells it (the caller's name for a key, a
    flag say, when it has another); an unknown key suggests the nearest known one."""
    values: dict[str, Any] = {}
    if config_file is not None:
        try:
            loaded = load_yaml(read_text_capped(config_file, "config file"), str(config_file))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f" (line {mark.line + 1})" if mark is not None else ""
            raise UsageError(f"{config_file}: not valid YAML{line}; fix the syntax") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise UsageError(f"{config_file}: must be a mapping of parameter names to values")
        values.update(loaded or {})
    given = {k: v for k, v in overrides.items() if v is not None}
    values.update(given)
    try:
        return ScoreConfig.model_validate(values)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        key = ".".join(str(p) for p in first["loc"])
        top = str(first["loc"][0]) if first["loc"] else ""
        # a key of the file's (or a whole-model rule with a file given) is the file's
        source = where if top in given or config_file is None else str(config_file)
        field = (names or {}).get(key, key) if top in given else key
        message = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            known = [(names or {}).get(k, k) for k in ScoreConfig.model_fields]
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]}?" if close else "see agentjudge score --help-config"
            message = f"unknown parameter ({hint})"
        raise UsageError(f"{source}: {field + ': ' if field else ''}{message}") from None
