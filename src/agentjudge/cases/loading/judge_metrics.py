"""Judge metrics of eval cases: the built-in judges, the prompt template, `judges.<name>` entries.

A judge is a rubric, a scale and a `str.format` template filled per case (see
`agentjudge.cases.judging.transcript`). graph-agents-cli projects override or add judges in
`eval_config.yaml` under `judges:`; templates there may use exactly the placeholders in
`PLACEHOLDERS`, and any other one is rejected when the config loads, before any agent or
judge call is spent.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from agentjudge.errors import UsageError

DEFAULT_SCALE = 5.0

# The template variables, in the order the docs list them. The names are graph-agents-cli's:
# its users' custom templates use them.
PLACEHOLDERS: tuple[str, ...] = (
    "metric",
    "rubric",
    "scale",
    "conversation",
    "transcript",
    "response",
    "reference",
    "context",
    "reference_section",
    "context_section",
    "tool_calls_section",
)
_ALLOWED = frozenset(PLACEHOLDERS)
_ALLOWED_TEXT = ", ".join("{" + p + "}" for p in PLACEHOLDERS)

# Same layout as graph-agents-cli's default (so scores stay comparable); our own wording.
# The answer asks for `reasoning` before `score`: small judges score better that way.
DEFAULT_TEMPLATE = """You are a strict and impartial judge of one reply from an AI agent.

Rubric ({metric}):
{rubric}

Conversation up to the reply (each earlier turn in full: the user's message, every tool \
call the agent made with its result, and the agent's reply; then the user's latest message):
{conversation}

Reply to score (the agent's answer to the latest message):
{response}
{reference_section}{context_section}{tool_calls_section}
Score the reply from 1 to {scale} against the rubric ({scale} is the best score), taking the \
earlier turns into account.
Answer with JSON only, on one line: {{"reasoning": "<one or two sentences>", "score": <number>}}"""

_FORMATTER = string.Formatter()
# Values the template is tried with: every placeholder empty (graph-agents-cli's load-time
# rule, so we reject what it rejects), then the number types `{scale}` really takes, so a
# format spec such as `{scale:s}` cannot fail later, in the middle of a grading run.
_TRIAL_VALUES: tuple[dict[str, object], ...] = (
    dict.fromkeys(PLACEHOLDERS, ""),
    {**dict.fromkeys(PLACEHOLDERS, ""), "scale": 5},
    {**dict.fromkeys(PLACEHOLDERS, ""), "scale": 2.5},
)


def check_template(template: str) -> str | None:
    """What is wrong with a judge prompt template, or None when it can be used.

    Fields must be exactly one of `PLACEHOLDERS` (no positional `{}`/`{0}`, no attribute
    or index access), braces must balance (`{{`/`}}` are literal braces), and the template
    must format with every placeholder empty, as graph-agents-cli requires at load time.
    """
    try:
        problem = _field_problem(template)
    except ValueError as exc:
        return f"unbalanced braces ({exc})"
    if problem is not None:
        return problem
    for values in _TRIAL_VALUES:
        try:
            template.format(**values)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            return f"a placeholder cannot be formatted ({exc})"
    return None


def _field_problem(template: str) -> str | None:
    for _literal, field_name, format_spec, _conversion in _FORMATTER.parse(template):
        if field_name is None:
            continue
        if field_name == "":
            return "unnamed placeholder {}"
        if field_name not in _ALLOWED:
            return f"unknown placeholder {{{field_name}}}"
        # A format spec may itself hold fields, e.g. `{scale:>{width}}`.
        if format_spec and "{" in format_spec:
            problem = _field_problem(format_spec)
            if problem is not None:
                return problem
    return None


JudgeSource = Literal["builtin", "config"]

_ENTRY_FIELDS = ("scale", "rubric", "prompt_template", "description", "threshold")


@dataclass(frozen=True)
class JudgeSpec:
    """One judge metric: how its prompt is built and on what scale it scores.

    `source` is `builtin` for the three built-in judges, overridden or not, and `config`
    for a judge an `eval_config.yaml` defines.
    """

    name: str
    scale: float
    rubric: str
    prompt_template: str
    description: str
    threshold: float | None
    source: JudgeSource

    def __post_init__(self) -> None:
        # Rendering trusts the template; a user's template is checked by `merge_judge`
        # first, so reaching this is a bug in the caller.
        problem = check_template(self.prompt_template)
        if problem is not None:
            raise ValueError(f"judge {self.name!r}: prompt_template: {problem}")


def scale_value(scale: float) -> int | float:
    """`{scale}` as a prompt shows it: `5`, not `5.0`, when the scale is whole."""
    return int(scale) if float(scale).is_integer() else scale


def _builtin(name: str, description: str, rubric: str) -> JudgeSpec:
    return JudgeSpec(
        name=name,
        scale=DEFAULT_SCALE,
        rubric=rubric,
        prompt_template=DEFAULT_TEMPLATE,
        description=description,
        threshold=None,
        source="builtin",
    )


BUILTIN_JUDGES: dict[str, JudgeSpec] = {
    spec.name: spec
    for spec in (
        _builtin(
            "response_quality",
            "How accurate, relevant and clear the final reply is.",
            "Judge how accurate the reply is, how directly it addresses what the user asked, "
            "and how clearly it is written. 5: correct, answers exactly what was asked, easy "
            "to follow and free of padding. 3: broadly right but incomplete, imprecise or "
            "longer than it needs to be. 1: incorrect, beside the point or unusable. When a "
            "reference answer is given, count any factual conflict with it against the reply.",
        ),
        _builtin(
            "task_success",
            "Whether the agent got done what the user asked for.",
            "Decide whether the agent carried the user's task through from start to finish, "
            "calling tools where the task needed them. In a conversation of several turns the "
            "task is the latest request read together with the earlier turns: work the agent "
            "already did or said in an earlier turn counts and need not be repeated. 5: the "
            "task is done and the outcome is correct. 3: done in part, or the user has to "
            "follow up to finish it. 1: not attempted, given up, or done wrongly. When a "
            "reference answer is given, it is the outcome the task should reach: an outcome "
            "that conflicts with it is not a correct one.",
        ),
        _builtin(
            "groundedness",
            "Whether each claim is backed by the supplied context or the tool results.",
            "Check each factual claim of the reply against the supplied context and against "
            "the tool results of every turn, earlier turns included. A tool result marked "
            "TRUNCATED was shortened for length: a claim its hidden part could support is "
            "not unsupported. 5: every claim is supported. 3: mostly supported, with small "
            "unsupported details. 1: contradicts the context or makes facts up.",
        ),
    )
}


def merge_judge(name: str, entry: object, where: str) -> JudgeSpec:
    """The judge `judges.<name>` of an eval_config defines, merged over a built-in of that name.

    A null entry or field keeps the built-in's value; a judge that is not built in needs a
    `rubric`. Raises `UsageError` with one line `"{where}: judges.{name}.{field}: ...; fix"`.
    """
    prefix = f"{where}: judges.{name}"
    if entry is None:
        entry = {}
    if not isinstance(entry, Mapping):
        raise UsageError(
            f"{prefix}: expected a mapping, got {_kind(entry)}; "
            f'write e.g. judges.{name}: {{rubric: "...", scale: 5}}'
        )
    for key in entry:
        if key not in _ENTRY_FIELDS:
            raise UsageError(f"{prefix}.{key}: unknown field; use only {', '.join(_ENTRY_FIELDS)}")
    base = BUILTIN_JUDGES.get(name)
    scale = _number(entry.get("scale"), f"{prefix}.scale", minimum=1.0)
    threshold = _number(entry.get("threshold"), f"{prefix}.threshold", minimum=None)
    rubric = _text(entry.get("rubric"), f"{prefix}.rubric")
    template = _text(entry.get("prompt_template"), f"{prefix}.prompt_template")
    description = _text(entry.get("description"), f"{prefix}.description")

    rubric = rubric if rubric is not None else (base.rubric if base else "")
    if not rubric:
        raise UsageError(
            f"{prefix}.rubric: a judge needs a non-empty rubric; "
            f"add judges.{name}.rubric with the scoring instructions"
        )
    template = template if template is not None else DEFAULT_TEMPLATE
    problem = check_template(template)
    if problem is not None:
        raise UsageError(
            f"{prefix}.prompt_template: {problem}; use only {_ALLOWED_TEXT} "
            "and write {{ and }} for literal braces"
        )
    return JudgeSpec(
        name=name,
        scale=scale if scale is not None else (base.scale if base else DEFAULT_SCALE),
        rubric=rubric,
        prompt_template=template,
        description=description if description is not None else (base.description if base else ""),
        threshold=threshold if threshold is not None else (base.threshold if base else None),
        source="builtin" if base is not None else "config",
    )


def _number(value: object, where: str, minimum: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{where}: expected a number, got {_kind(value)}; write e.g. 4")
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise UsageError(f"{where}: expected a finite number; write e.g. 4")
    if minimum is not None and number < minimum:
        # Scores run from 1 to the scale, so a scale under 1 leaves no valid score.
        raise UsageError(f"{where}: {value!r} is below {minimum:g}; use a number >= {minimum:g}")
    return number


def _text(value: object, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise UsageError(f"{where}: expected a string, got {_kind(value)}; quote the text in YAML")


def _kind(value: object) -> str:
    return "a bool" if isinstance(value, bool) else f"{type(value).__name__} {value!r:.40}"
