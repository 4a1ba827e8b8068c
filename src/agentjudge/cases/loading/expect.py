"""A dataset case's ``expect`` block: its keys, their defaults, and validation.

`normalise_expect` turns the raw block into a dict holding every key of `EXPECT_KEYS`: a
missing or ``null`` key takes its default, a bare ``contains``/``not_contains`` string becomes
a one-item list, a bare tool name in ``tool_calls`` becomes ``{"name": ...}``, and an
``approvals`` item gets its default ``status: gated``. It accepts and rejects exactly what
graph-agents-cli 0.3.1 does; a rejected block is a `UsageError` (exit 3) naming the case, the
key and the fix.

graph-agents-cli hashes a dataset after parsing has rewritten bare tool names in place, so the
hash (and the ``case`` copied into each trace) sees ``{"name": ...}``; `canonical_case` gives
that form.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentjudge.cases.loading.approval_match import match_problem
from agentjudge.errors import UsageError, clip

SCOPE_FINAL_TURN = "final_turn"
SCOPE_ALL_TURNS = "all_turns"
SCOPES: tuple[str, ...] = (SCOPE_FINAL_TURN, SCOPE_ALL_TURNS)

# An `expect.approvals` status: `gated` accepts a gate however it ended.
APPROVAL_STATUSES: tuple[str, ...] = ("gated", "approved", "rejected")
APPROVAL_ITEM_KEYS: tuple[str, ...] = ("match", "status")

# In graph-agents-cli's order; unknown keys are rejected.
EXPECT_KEYS: tuple[str, ...] = (
    "contains",
    "not_contains",
    "regex",
    "json_schema",
    "tool_calls",
    "ordered",
    "no_tool_calls",
    "max_latency_ms",
    "max_tokens",
    "case_insensitive",
    "scope",
    "approvals",
    "no_approvals",
)

# In the order checks run and are reported.
CHECKS: tuple[str, ...] = (
    "contains",
    "not_contains",
    "regex",
    "json_schema",
    "tool_calls",
    "no_tool_calls",
    "max_latency_ms",
    "max_tokens",
    "approvals",
    "no_approvals",
)

CHECK_DESCRIPTIONS: Mapping[str, str] = {
    "contains": "Each listed text occurs in the reply (casefolded unless case_insensitive: false).",
    "not_contains": "None of the listed texts occurs in the reply (same case rule as contains).",
    "regex": "The reply matches the regular expression (re.search, DOTALL; (?i) ignores case).",
    "json_schema": (
        "The final answer validates against the schema: the structured response if the run has "
        "one, else the reply's JSON (the whole reply, else its last JSON object or array)."
    ),
    "tool_calls": "Each listed call (name, args_subset) matches a distinct recorded tool call.",
    "no_tool_calls": "The agent called no tool.",
    "max_latency_ms": "The latency is at most this many milliseconds (each turn's with all_turns).",
    "max_tokens": "Tokens used (total, else input + output) are at most this (summed, all_turns).",
    "approvals": (
        "Each listed match (operation_id and/or method + path template, optional api) hit a "
        "distinct approval gate, ending as its status: gated (any), approved or rejected."
    ),
    "no_approvals": "No call reached an approval gate.",
}


@dataclass(frozen=True, slots=True)
class Modifier:
    """A key of ``expect`` that changes how checks read a trace, not a check itself."""

    default: object
    description: str


MODIFIERS: Mapping[str, Modifier] = {
    "ordered": Modifier(False, "tool_calls must occur in the listed order."),
    "case_insensitive": Modifier(True, "contains and not_contains compare casefolded text."),
    "scope": Modifier(
        SCOPE_FINAL_TURN,
        "final_turn reads the last turn of a multi-turn case; all_turns reads every turn "
        "(json_schema always reads the final answer).",
    ),
}


# What `normalise_expect` returns for a key the case leaves out.
_DEFAULTS: dict[str, Any] = {
    "contains": [],
    "not_contains": [],
    "regex": None,
    "json_schema": None,
    "tool_calls": None,
    "ordered": False,
    "no_tool_calls": False,
    "max_latency_ms": None,
    "max_tokens": None,
    "case_insensitive": True,
    "scope": SCOPE_FINAL_TURN,
    "approvals": None,
    "no_approvals": False,
}


def normalise_expect(raw: object, where: str) -> dict[str, Any]:
    """Validate a case's raw ``expect`` and return it with every key of `EXPECT_KEYS`.

    ``where`` names the case in errors, e.g. ``"dataset.json: cases[3] (id 'x')"``. Raises
    `UsageError` for anything graph-agents-cli rejects. The raw object is not modified.
    """
    expect = _DEFAULTS.copy()  # a copy is three times as fast as the literal
    expect["contains"], expect["not_contains"] = [], []  # each case's own lists
    if raw is None:
        return expect
    if not isinstance(raw, dict):
        raise UsageError(
            f"{where}: expect: must be an object, got {_json_kind(raw)}; "
            'write for example "expect": {"contains": ["..."]}, or leave it out'
        )
    for key, value in raw.items():
        normalise = _NORMALISERS.get(key)
        if normalise is None:
            raise UsageError(f"{where}: expect.{key}: unknown key; {_known_keys_hint(str(key))}")
        if value is None:
            continue
        try:
            expect[key] = normalise(value)
        except _Invalid as exc:
            raise UsageError(f"{where}: expect.{key}{exc.under}: {exc}") from None
    if expect["no_tool_calls"] and expect["tool_calls"]:
        raise UsageError(
            f"{where}: expect.no_tool_calls: true conflicts with a non-empty "
            "expect.tool_calls; keep only one of them"
        )
    if expect["no_approvals"] and expect["approvals"]:
        raise UsageError(
            f"{where}: expect.no_approvals: true conflicts with expect.approvals; "
            "keep only one of them"
        )
    return expect


def canonical_case(raw_case: object) -> object:
    """``raw_case`` as graph-agents-cli hashes it and copies it into traces: each bare tool
    name in ``expect.tool_calls`` rewritten to ``{"name": ...}``, nothing else changed.

    Returns ``raw_case`` itself when there is nothing to rewrite, else a copy (the input is
    not modified).
    """
    if not isinstance(raw_case, dict):
        return raw_case
    expect = raw_case.get("expect")
    if not isinstance(expect, dict):
        return raw_case
    calls = expect.get("tool_calls")
    if not isinstance(calls, list) or not any(isinstance(call, str) for call in calls):
        return raw_case
    rewritten = [{"name": call} if isinstance(call, str) else call for call in calls]
    return {**raw_case, "expect": {**expect, "tool_calls": rewritten}}


class _Invalid(ValueError):
    """A value a normaliser rejects: the message, and where under the key it is (``[2]``,
    ``[0].status``): the key's full name is put in front only when one is raised."""

    def __init__(self, message: str, under: str = "") -> None:
        super().__init__(message)
        self.under = under


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    raise _Invalid(
        f"must be a string or a list of strings, got {_json_kind(value)}; "
        'write for example ["refund issued", "ORD-1"]'
    )


def _regex(value: object) -> str:
    if isinstance(value, str):
        return value
    raise _Invalid(
        f"must be a string, got {_json_kind(value)}; write a Python regular expression "
        'such as "ORD-\\\\d+"'
    )


def _json_schema(value: object) -> dict[str, Any] | bool:
    if isinstance(value, dict | bool):
        return value
    raise _Invalid(
        f"must be a JSON schema object (or true/false), got {_json_kind(value)}; "
        'write for example {"type": "object", "required": ["answer"]}'
    )


def _tool_calls(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise _Invalid(
            f"must be a list, got {_json_kind(value)}; write for example "
            '["search", {"name": "get_order", "args_subset": {"id": "ORD-1"}}]'
        )
    calls: list[dict[str, Any]] = []
    for index, call in enumerate(value):
        if isinstance(call, str):
            calls.append({"name": call})
            continue
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise _Invalid(
                "must be a tool name or an object with a string name; write for example "
                '{"name": "get_order", "args_subset": {"id": "ORD-1"}}',
                f"[{index}]",
            )
        subset = call.get("args_subset")
        if subset is not None and not isinstance(subset, dict):
            raise _Invalid(
                f"must be an object, got {_json_kind(subset)}; write the argument names and "
                'values to expect, e.g. {"id": "ORD-1"}',
                f"[{index}].args_subset",
            )
        calls.append(call)
    return calls


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise _Invalid(f"must be true or false, got {_json_kind(value)}; write true or false")


def _scope(value: object) -> str:
    if isinstance(value, str) and value in SCOPES:
        return value
    raise _Invalid(f"must be one of {', '.join(SCOPES)}, got {clip(repr(value))}; pick one of them")


def _limit(value: object) -> int | float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    raise _Invalid(f"must be a number, got {_json_kind(value)}; write for example 5000")


def _approvals(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise _Invalid(
            f"must be a list of {{match, status}} objects, got {_json_kind(value)}; "
            'write for example [{"match": {"operation_id": "cancelOrder"}, "status": "approved"}]'
        )
    if not value:
        raise _Invalid(
            'is empty, so it would check nothing; list the gated calls, or write "no_approvals": '
            "true"
        )
    items: list[dict[str, Any]] = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise _Invalid(
                f"must be an object, got {_json_kind(item)}; "
                'write for example {"match": {"operation_id": "cancelOrder"}}',
                f"[{index}]",
            )
        unknown = sorted(str(key) for key in item if key not in APPROVAL_ITEM_KEYS)
        if unknown:
            raise _Invalid(
                f"unknown key(s) {', '.join(unknown)}; use only {', '.join(APPROVAL_ITEM_KEYS)}",
                f"[{index}]",
            )
        # An explicit `"status": null` is rejected, as graph-agents-cli does.
        status = item.get("status", "gated")
        if status not in APPROVAL_STATUSES:
            raise _Invalid(
                f"must be one of {', '.join(APPROVAL_STATUSES)}, got {clip(repr(status))}; "
                "pick one of them (gated accepts any outcome)",
                f"[{index}].status",
            )
        problem = match_problem(item.get("match"))
        if problem:
            raise _Invalid(
                f"{problem}; name the call by operation_id, or by method and path (with {{name}} "
                "for a variable segment)",
                f"[{index}].match",
            )
        items.append({"match": item["match"], "status": status})
    return items


_NORMALISERS: dict[str, Callable[[Any], Any]] = {
    "contains": _texts,
    "not_contains": _texts,
    "regex": _regex,
    "json_schema": _json_schema,
    "tool_calls": _tool_calls,
    "ordered": _flag,
    "no_tool_calls": _flag,
    "max_latency_ms": _limit,
    "max_tokens": _limit,
    "case_insensitive": _flag,
    "scope": _scope,
    "approvals": _approvals,
    "no_approvals": _flag,
}


def _known_keys_hint(key: str) -> str:
    close = difflib.get_close_matches(key, EXPECT_KEYS, n=1)
    known = f"known keys: {', '.join(EXPECT_KEYS)}"
    return f"did you mean {close[0]!r}? ({known})" if close else f"use one of the {known}"


def _json_kind(value: object) -> str:
    """The JSON name of a value's type, as a user wrote it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
