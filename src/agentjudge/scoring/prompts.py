"""Judge prompts: versioned template files, and how a step's request is laid out.

Layout: the system message (instructions and criteria) is the same for every step of a
job; the user message starts with the task, then the earlier steps of the current context
block, then the step. Steps of one block therefore share a long common prefix, which
providers cache. Trajectory content is always JSON-encoded inside tags: quoted data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

import orjson

from agentjudge.scoring.criteria import Rubric

PROMPT_VERSION = "agentjudge-atif-v1"
COMPACT_CHARS = 300  # per text field of a context step
MAX_CONTEXT_OBSERVATIONS = 2


def _template(name: str) -> Template:
    return Template(resources.files("agentjudge.scoring").joinpath("prompts", name).read_text())


STEP_TEMPLATE = _template("step.v1.txt")
CATEGORIZE_SYSTEM = _template("categorize.v1.txt").substitute()
DERIVE_SYSTEM = _template("derive.v1.txt").substitute()


@dataclass(frozen=True, slots=True)
class StepPrompt:
    system: str
    user: str


def system_prompt(rubric: Rubric) -> str:
    """The system message for a rubric (identical for every step scored with it)."""
    criteria = "\n".join(f"- {c.name}: {c.description}" for c in rubric.criteria)
    if len(rubric.criteria) == 1:
        answer = '{"reasoning": "<why>", "score": <0.0 to 1.0>}'
    else:
        names = ", ".join(f'"{c.name}": <0.0 to 1.0>' for c in rubric.criteria)
        answer = '{"reasoning": "<why>", "scores": {' + names + "}}"
    return STEP_TEMPLATE.substitute(criteria=criteria, answer_format=answer)


def user_prompt(task: str, reference: str | None, context: list[str], step: str) -> str:
    """Task, reference, context and step, each already quoted (see `quote`, `quote_context`)."""
    parts = [f"<task>{task}</task>"]
    if reference is not None:
        parts.append(f"<reference>{reference}</reference>")
    parts.append(_context(context))
    parts.append(f"<step>{step}</step>")
    parts.append("Score the step in <step> as instructed. Answer with the JSON object only.")
    return "\n".join(parts)


def category_prompt(task: str, context: list[str], step: str, score: float) -> str:
    """The user message asking for the failure category of a low-scoring step."""
    return "\n".join(
        [
            f"<task>{task}</task>",
            _context(context),
            f"<step>{step}</step>",
            f"This step scored {score:.3f} out of 1. Classify its failure.",
        ]
    )


def _context(lines: list[str]) -> str:
    return "<context>\n" + "\n".join(lines) + "\n</context>" if lines else "<context></context>"


def quote(value: Any) -> str:
    """Trajectory content as a JSON literal: data, never prompt text."""
    if isinstance(value, str):
        # the common case, on every request: orjson writes a string exactly as json does
        # (ensure_ascii=False), only faster; lone surrogates, which it refuses, go to json
        try:
            return orjson.dumps(value).decode()
        except TypeError:
            pass
    return json.dumps(value, ensure_ascii=False)


def quote_context(data: dict[str, Any]) -> str:
    """A context step, compacted and quoted (computed once per step, reused per request)."""
    return quote(compact(data))


def compact(data: dict[str, Any]) -> dict[str, Any]:
    """A context step: shorter texts and at most two observations."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, str):
            out[key] = _cut(value)
        elif key == "observation":
            out[key] = [_cut(v) for v in value[:MAX_CONTEXT_OBSERVATIONS]]
        elif key == "tool_calls":
            out[key] = [
                {"name": c["name"], "arguments": _cut(json.dumps(c["arguments"]))} for c in value
            ]
        else:
            out[key] = value
    return out


def _cut(text: str) -> str:
    return text if len(text) <= COMPACT_CHARS else text[:COMPACT_CHARS] + "…"
