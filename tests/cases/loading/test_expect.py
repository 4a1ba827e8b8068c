"""Validating and normalising a case's ``expect`` block."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from agentjudge.cases.loading.expect import (
    CHECK_DESCRIPTIONS,
    CHECKS,
    EXPECT_KEYS,
    MODIFIERS,
    canonical_case,
    normalise_expect,
)
from agentjudge.errors import EXIT_USAGE, UsageError
from tests.conftest import FIXTURES

WHERE = "dataset.json: cases[3] (id 'x')"

DEFAULTS: dict[str, Any] = {
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
    "scope": "final_turn",
    "approvals": None,
    "no_approvals": False,
}


def _hash(cases: list[Any]) -> str:
    text = json.dumps({"cases": cases}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _error(raw: object) -> str:
    with pytest.raises(UsageError) as caught:
        normalise_expect(raw, WHERE)
    assert caught.value.exit_code == EXIT_USAGE
    message = str(caught.value)
    assert message.startswith(WHERE + ": expect")
    assert "\n" not in message
    return message


@pytest.mark.parametrize("raw", [None, {}, dict.fromkeys(EXPECT_KEYS)])
def test_absent_and_null_keys_take_defaults(raw: object) -> None:
    assert normalise_expect(raw, WHERE) == DEFAULTS


def test_values_are_kept_and_bare_forms_expanded() -> None:
    schema = {"type": "object"}
    raw = {
        "contains": "hello",
        "not_contains": ["a", "b"],
        "regex": "",
        "json_schema": schema,
        "tool_calls": ["search", {"name": "get", "args_subset": {"id": 1}}],
        "ordered": True,
        "max_latency_ms": 0,
        "max_tokens": 1.5,
        "case_insensitive": False,
        "scope": "all_turns",
        "approvals": [
            {"match": {"operation_id": "c"}},
            {"match": {"operation_id": "d"}, "status": "rejected"},
        ],
    }
    before = copy.deepcopy(raw)
    expect = normalise_expect(raw, WHERE)
    assert expect == {
        **DEFAULTS,
        "contains": ["hello"],
        "not_contains": ["a", "b"],
        "regex": "",
        "json_schema": schema,
        "tool_calls": [{"name": "search"}, {"name": "get", "args_subset": {"id": 1}}],
        "ordered": True,
        "max_latency_ms": 0,
        "max_tokens": 1.5,
        "case_insensitive": False,
        "scope": "all_turns",
        "approvals": [
            {"match": {"operation_id": "c"}, "status": "gated"},
            {"match": {"operation_id": "d"}, "status": "rejected"},
        ],
    }
    assert raw == before  # the raw case is not modified
    assert normalise_expect({"json_schema": True}, WHERE)["json_schema"] is True


def test_error_text_names_case_key_and_fix() -> None:
    assert _error({"contans": ["x"]}) == (
        f"{WHERE}: expect.contans: unknown key; did you mean 'contains'? (known keys: "
        + ", ".join(EXPECT_KEYS)
        + ")"
    )
    assert _error({"ordered": 1}) == (
        f"{WHERE}: expect.ordered: must be true or false, got a number; write true or false"
    )
    assert _error(["contains"]).startswith(f"{WHERE}: expect: must be an object, got a list;")


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"zzz": None}, "expect.zzz: unknown key; use one of the known keys"),
        ({"contains": 5}, "expect.contains: must be a string or a list of strings, got a number"),
        ({"not_contains": ["a", 1]}, "expect.not_contains: must be a string or a list"),
        ({"regex": 1}, "expect.regex: must be a string"),
        ({"json_schema": "object"}, "expect.json_schema: must be a JSON schema object"),
        ({"json_schema": []}, "expect.json_schema: must be a JSON schema object"),
        ({"tool_calls": "search"}, "expect.tool_calls: must be a list, got a string"),
        ({"tool_calls": [5]}, "expect.tool_calls[0]: must be a tool name or an object"),
        ({"tool_calls": ["a", {"args_subset": {}}]}, "expect.tool_calls[1]: must be a tool"),
        ({"tool_calls": [{"name": 3}]}, "expect.tool_calls[0]: must be a tool name"),
        ({"tool_calls": [{"name": "a", "args_subset": []}]}, "expect.tool_calls[0].args_subset"),
        ({"no_tool_calls": "yes"}, "expect.no_tool_calls: must be true or false"),
        ({"case_insensitive": 0}, "expect.case_insensitive: must be true or false"),
        ({"no_approvals": "x"}, "expect.no_approvals: must be true or false"),
        ({"scope": "all"}, "expect.scope: must be one of final_turn, all_turns, got 'all'"),
        ({"max_latency_ms": "5"}, "expect.max_latency_ms: must be a number, got a string"),
        ({"max_tokens": True}, "expect.max_tokens: must be a number, got a boolean"),
        ({"tool_calls": ["a"], "no_tool_calls": True}, "expect.no_tool_calls: true conflicts"),
        ({"approvals": "x"}, "expect.approvals: must be a list of {match, status} objects"),
        ({"approvals": []}, "expect.approvals: is empty, so it would check nothing"),
        ({"approvals": ["x"]}, "expect.approvals[0]: must be an object, got a string"),
        ({"approvals": [{"match": {"operation_id": "c"}, "x": 1}]}, "unknown key(s) x"),
        ({"approvals": [{"match": {"operation_id": "c"}, "status": "ok"}]}, "[0].status"),
        ({"approvals": [{"match": {"operation_id": "c"}, "status": None}]}, "[0].status"),
        ({"approvals": [{"status": "gated"}]}, "expect.approvals[0].match: must be an object"),
        ({"approvals": [{"match": {"method": "GET"}}]}, "[0].match: method and path go together"),
        ({"approvals": [{"match": {"method": "GET", "path": "x"}}]}, "must start with /"),
        (
            {"approvals": [{"match": {"operation_id": "c"}}], "no_approvals": True},
            "expect.no_approvals: true conflicts with expect.approvals",
        ),
    ],
)
def test_rejected(raw: object, needle: str) -> None:
    assert needle in _error(raw)


@pytest.mark.parametrize(
    "raw",
    [
        {"tool_calls": [], "no_tool_calls": True},  # an empty list does not conflict
        {"tool_calls": [{"name": "", "extra": 1}]},  # graph-agents-cli accepts these too
        {"tool_calls": [{"name": "a", "args_subset": None}]},
        {"no_approvals": False, "approvals": [{"match": {"operation_id": "c"}}]},
        {"max_latency_ms": -1, "max_tokens": 0},
        {"json_schema": False},
        {"regex": "("},  # an invalid regex fails its check; it is not a usage error
    ],
)
def test_accepted(raw: dict[str, Any]) -> None:
    expect = normalise_expect(raw, WHERE)
    assert set(expect) == set(EXPECT_KEYS)


def test_catalogue_constants() -> None:
    assert list(CHECK_DESCRIPTIONS) == list(CHECKS)
    assert set(CHECKS) | set(MODIFIERS) == set(EXPECT_KEYS)
    assert not set(CHECKS) & set(MODIFIERS)
    for name, modifier in MODIFIERS.items():
        assert modifier.default == DEFAULTS[name]
        assert modifier.description


def test_canonical_case_matches_graph_agents_cli_hash() -> None:
    # graph-agents-cli 0.3.1's `load_dataset` hashed this dataset (with bare tool names)
    # to 1654310b…; the hash of the raw file, unrewritten, would be 76da9f0c….
    cases: list[Any] = [
        {
            "id": "a",
            "messages": [{"role": "user", "content": "hi"}],
            "expect": {
                "tool_calls": ["search", {"name": "get", "args_subset": {"id": 1}}],
                "contains": "x",
                "regex": None,
            },
        },
        {
            "id": "b",
            "messages": [{"role": "user", "content": "hé"}],
            "expect": {
                "tool_calls": ["a", "b"],
                "ordered": True,
                "approvals": [{"match": {"operation_id": "x"}}],
            },
        },
        {"id": "c", "messages": [{"role": "user", "content": "x"}]},
    ]
    before = copy.deepcopy(cases)
    canonical = [canonical_case(case) for case in cases]
    assert _hash(canonical) == "1654310b8c48e02ef45d0270c3f85ab77da3fc98326ba203b7de13d997794776"
    assert _hash(cases) == "76da9f0c104b47cf5745d996a277704e470532ee73806b17e69a015876e4402f"
    assert cases == before
    assert canonical[2] is cases[2]  # nothing to rewrite: the same object


def test_canonical_case_keeps_scaffold_hash() -> None:
    raw = json.loads((FIXTURES / "graph-agents-cli/scaffold/basic-dataset.json").read_text())
    canonical = [canonical_case(case) for case in raw["cases"]]
    assert _hash(canonical) == "79cbb3f2778b082bd21a7f916a4ee0fcd0406d9240cbae3e9cbc27de54cf79fd"
    for index, case in enumerate(raw["cases"]):
        normalise_expect(case.get("expect"), f"basic-dataset.json: cases[{index}]")
