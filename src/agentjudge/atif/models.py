"""Pydantic models of ATIF (Agent Trajectory Interchange Format), versions 1.0 to 1.8.

One set of models covers every version, as harbor's does: objects forbid unknown keys, and
the few differences between versions (the shape of a subagent reference, which keys a
reference needs, whether `session_id` is required) are checked by `atif.rules`, which knows
the document's `schema_version`. Structural errors come from here; semantic ones from there.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from agentjudge.errors import clip

SCHEMA_VERSIONS: tuple[str, ...] = tuple(f"ATIF-v1.{minor}" for minor in range(9))
SchemaVersion = Literal[
    "ATIF-v1.0",
    "ATIF-v1.1",
    "ATIF-v1.2",
    "ATIF-v1.3",
    "ATIF-v1.4",
    "ATIF-v1.5",
    "ATIF-v1.6",
    "ATIF-v1.7",
    "ATIF-v1.8",
]
LATEST_VERSION: SchemaVersion = "ATIF-v1.8"

IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def version_minor(version: str) -> int:
    """The minor number of an `ATIF-v1.N` string (validated by the models before this runs)."""
    return int(version.rsplit(".", 1)[1])


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MediaSource(_Strict):
    """Where an image or audio part lives; which media types fit is checked by ContentPart."""

    media_type: str
    path: str
    duration_sec: Annotated[float, Field(ge=0)] | None = None


class ContentPart(_Strict):
    """One part of multimodal content: text, or an image or audio source (never both)."""

    type: Literal["text", "image", "audio"]
    text: str | None = None
    source: MediaSource | None = None

    @model_validator(mode="after")
    def _text_xor_source(self) -> ContentPart:
        if (self.text is None) == (self.source is None):
            raise ValueError("a content part sets exactly one of 'text' and 'source'")
        if self.type == "text" and self.text is None:
            raise ValueError("a 'text' content part needs 'text'")
        if self.type != "text" and self.source is None:
            raise ValueError(f"an '{self.type}' content part needs 'source'")
        if self.source is not None:
            media = self.source.media_type
            if self.type == "image" and media not in IMAGE_MEDIA_TYPES:
                raise ValueError(
                    f"image media_type {clip(repr(media))} is not one of "
                    f"{sorted(IMAGE_MEDIA_TYPES)}"
                )
            if self.type == "audio" and not media.startswith("audio/"):
                raise ValueError(f"audio media_type {clip(repr(media))} must start with 'audio/'")
            if self.type == "image" and self.source.duration_sec is not None:
                raise ValueError("an image source has no 'duration_sec'")
        return self


def _content_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    return None


# A callable discriminator gives one clear error ("must be a string or a list of content
# parts") instead of one error per union branch.
Content = Annotated[
    Annotated[str, Tag("str")] | Annotated[list[ContentPart], Tag("list")],
    Discriminator(
        _content_kind,
        custom_error_type="content_type",
        custom_error_message="must be a string or a list of content parts",
    ),
]


class ToolCall(_Strict):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]
    extra: dict[str, Any] | None = None


class SubagentRef(_Strict):
    """A reference from an observation result to a subagent trajectory.

    v1.0-1.6: `session_id` (required) and an optional `trajectory_path`.
    v1.7+: `trajectory_id` (embedded) and/or `trajectory_path` (file); `session_id` informational.
    """

    session_id: str | None = None
    trajectory_id: str | None = None
    trajectory_path: str | None = None
    extra: dict[str, Any] | None = None


def _ref_kind(value: Any) -> str | None:
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return None


RefField = Annotated[
    Annotated[list[SubagentRef], Tag("list")] | Annotated[SubagentRef, Tag("object")],
    Discriminator(
        _ref_kind,
        custom_error_type="ref_type",
        custom_error_message="must be a list of subagent references (a single object before v1.2)",
    ),
]


class ObservationResult(_Strict):
    source_call_id: str | None = None
    content: Content | None = None
    subagent_trajectory_ref: RefField | None = None
    extra: dict[str, Any] | None = None

    def refs(self) -> tuple[SubagentRef, ...]:
        """The references as a tuple, whichever shape the document used."""
        ref = self.subagent_trajectory_ref
        if ref is None:
            return ()
        if isinstance(ref, SubagentRef):
            return (ref,)
        return tuple(ref)


class Observation(_Strict):
    results: list[ObservationResult]


class Metrics(_Strict):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float | None] | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(_Strict):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: Annotated[int, Field(ge=0)] | None = None
    extra: dict[str, Any] | None = None


class Agent(_Strict):
    name: str
    version: str
    model_name: str | None = None
    tool_definitions: list[dict[str, Any]] | None = None
    extra: dict[str, Any] | None = None


class Step(_Strict):
    # strict: `true` or "1" as a step id is a producer bug, not a number
    step_id: Annotated[int, Field(ge=1, strict=True)]
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    message: Content
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    llm_call_count: Annotated[int, Field(ge=0, strict=True)] | None = None
    is_copied_context: bool | None = None
    extra: dict[str, Any] | None = None


class Trajectory(_Strict):
    """One ATIF document, or one entry of a parent's `subagent_trajectories`."""

    schema_version: SchemaVersion = LATEST_VERSION
    session_id: str | None = None
    trajectory_id: str | None = None
    agent: Agent
    steps: Annotated[list[Step], Field(min_length=1)]
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    extra: dict[str, Any] | None = None
    subagent_trajectories: list[Trajectory] | None = None

    @model_validator(mode="before")
    @classmethod
    def _schema_version_alias(cls, data: Any) -> Any:
        """`atif_schema_version`, as the eval-hub-contrib provider reads it: the document's
        schema_version when that is not given, and an error when the two differ."""
        if not isinstance(data, dict) or "atif_schema_version" not in data:
            return data
        data = dict(data)
        alias = data.pop("atif_schema_version")
        if "schema_version" in data and data["schema_version"] != alias:
            raise ValueError(
                f"schema_version {clip(repr(data['schema_version']))} and atif_schema_version "
                f"{clip(repr(alias))} differ: keep one"
            )
        data["schema_version"] = alias
        return data
