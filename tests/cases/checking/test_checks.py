"""The deterministic checks: what each one passes, and its reason (graph-agents-cli's words)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjudge.cases.checking import CheckResult, declared_checks, run_checks
from agentjudge.cases.checking.json_answer import MAX_JSON_STARTS
from agentjudge.cases.loading import CHECKS, normalise_expect
from tests.conftest import FIXTURES

GOLDEN = FIXTURES / "graph-agents-cli" / "golden" / "basic"


def check(raw_expect: dict[str, Any], trace: dict[str, Any]) -> dict[str, CheckResult]:
    return run_checks(normalise_expect(raw_expect, "test"), trace)


def one(raw_expect: dict[str, Any], trace: dict[str, Any]) -> CheckResult:
    (result,) = check(raw_expect, trace).values()
    return result


def fail(reason: str) -> CheckResult:
    return CheckResult(False, reason)


OK = CheckResult(True, "")
# passed, by an assignment graph-agents-cli's first-match does not find
OK_NOT_FIRST_MATCH = CheckResult(True, "", first_match_fails=True)


def call(name: str, args: Any = None) -> dict[str, Any]:
    return {"id": "c", "name": name, "args": args, "result": "r", "is_error": False}


def gate(status: str | None, **fields: str) -> dict[str, Any]:
    return {"approval_id": "a", **fields, "status": status}


# --- which checks a case declares ------------------------------------------------------------


def test_declared_checks_follow_spec_rules_and_order() -> None:
    everything = normalise_expect(
        {
            "no_approvals": True,
            "max_tokens": 0,  # falsy values count for the not-null checks
            "max_latency_ms": 0,
            "no_tool_calls": True,
            "tool_calls": [],
            "json_schema": False,
            "regex": "",
            "not_contains": ["x"],
            "contains": ["y"],
        },
        "test",
    )
    assert declared_checks(everything) == [c for c in CHECKS if c != "approvals"]
    assert declared_checks(normalise_expect({"contains": [], "not_contains": []}, "t")) == []
    assert declared_checks(normalise_expect({"no_tool_calls": False}, "t")) == []
    assert declared_checks(normalise_expect(None, "t")) == []
    assert run_checks(normalise_expect(None, "t"), {"response": "x"}) == {}


# --- reply texts -----------------------------------------------------------------------------


def test_contains() -> None:
    assert one({"contains": ["HELLO"]}, {"response": "well, hello"}) == OK
    assert one({"contains": ["ss"]}, {"response": "Straße"}) == OK  # casefold, not lower
    assert one({"contains": ["hello", "x", "y"]}, {"response": "hello"}) == fail(
        "response does not contain 'x', 'y'"
    )
    assert one({"contains": ["HELLO"], "case_insensitive": False}, {"response": "hello"}) == fail(
        "response does not contain 'HELLO' (exact case)"
    )
    assert one({"contains": [""]}, {"response": None}) == OK  # a null reply reads as ""
    assert one({"contains": ["42"]}, {"response": 42}) == OK


def test_not_contains() -> None:
    assert one({"not_contains": ["deleted"]}, {"response": "kept"}) == OK
    assert one({"not_contains": ["deleted", "x"]}, {"response": "Deleted ORD-1"}) == fail(
        "response contains forbidden 'deleted' (ignoring case)"
    )
    assert (
        one({"not_contains": ["deleted"], "case_insensitive": False}, {"response": "Deleted"}) == OK
    )
    assert one({"not_contains": ["Del"], "case_insensitive": False}, {"response": "Del"}) == fail(
        "response contains forbidden 'Del'"
    )


def test_regex() -> None:
    assert one({"regex": r"ORD-\d+"}, {"response": "it is ORD-12."}) == OK
    assert one({"regex": "a.b"}, {"response": "a\nb"}) == OK  # DOTALL
    assert one({"regex": "^b"}, {"response": "a\nb"}) == fail("response does not match /^b/")
    assert one({"regex": ""}, {"response": ""}) == OK
    assert one({"regex": "(?i)HELLO"}, {"response": "hello"}) == OK
    invalid = fail("invalid regex '(': missing ), unterminated subpattern at position 0")
    assert one({"regex": "("}, {"response": "("}) == invalid
    assert one({"regex": "("}, {"response": "x"}) == invalid  # still failing when cached


# --- json_schema -----------------------------------------------------------------------------

SCHEMA = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}


def test_json_schema_reads_the_whole_reply_first() -> None:
    assert one({"json_schema": SCHEMA}, {"response": ' {"a": 1} '}) == OK
    assert one({"json_schema": {"type": "integer"}}, {"response": "42"}) == OK
    assert one({"json_schema": SCHEMA}, {"response": "42"}) == fail(
        "schema violation: $: 42 is not of type 'object'"
    )


def test_json_schema_takes_the_last_value_of_the_root_type() -> None:
    reply = 'For example {"a": "x"}; the answer: {"a": 2} [1, 2] and done'
    assert one({"json_schema": SCHEMA}, {"response": reply}) == OK
    # No root type: the last value of any kind, here the list.
    assert one({"json_schema": {"required": ["a"]}}, {"response": reply}) == OK
    assert one({"json_schema": {"type": "object", "required": ["z"]}}, {"response": reply}) == (
        fail("schema violation: $: 'z' is a required property")
    )
    # No value of the root type: fall back to all values.
    assert one({"json_schema": {"type": "array"}}, {"response": 'x {"a": 1} y'}) == fail(
        "schema violation: $: {'a': 1} is not of type 'array'"
    )
    fenced = 'Here:\n```json\n{"a": 5}\n```'
    assert one({"json_schema": SCHEMA}, {"response": fenced}) == OK


def test_json_schema_prose_fails_even_for_true() -> None:
    not_json = fail("response is not valid JSON: no JSON object or array found")
    assert one({"json_schema": True}, {"response": "just prose"}) == not_json
    assert one({"json_schema": {}}, {"response": ""}) == not_json
    assert one({"json_schema": True}, {"response": "[1]"}) == OK
    assert one({"json_schema": False}, {"response": "[1]"}) == fail(
        "schema violation: $: False schema does not allow [1]"
    )


def test_json_schema_tries_a_bounded_number_of_starts() -> None:
    late = "{" * (MAX_JSON_STARTS - 1) + ' {"a": 1}'
    assert one({"json_schema": SCHEMA}, {"response": late}) == OK
    too_late = "{" * MAX_JSON_STARTS + ' {"a": 1}'
    assert not one({"json_schema": SCHEMA}, {"response": too_late}).passed


def test_json_schema_validates_structured_response_as_is() -> None:
    trace = {"response": "prose", "structured_response": {"a": "x"}}
    assert one({"json_schema": SCHEMA}, trace) == fail(
        "structured response: schema violation: $.a: 'x' is not of type 'integer'"
    )
    assert one({"json_schema": SCHEMA}, {"response": "", "structured_response": {"a": 1}}) == OK


def test_json_schema_errors_sorted_by_path_at_most_three() -> None:
    schema = {
        "type": "object",
        "properties": {k: {"type": "string"} for k in "abcd"},
        "required": ["z"],
    }
    reply = json.dumps({"d": 1, "c": 1, "b": 1, "a": {"x": 1}})
    assert one({"json_schema": schema}, {"response": reply}) == fail(
        "schema violation: $: 'z' is a required property; "
        "$.a: {'x': 1} is not of type 'string'; $.b: 1 is not of type 'string'"
    )
    nested = {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}}
    assert one({"json_schema": nested}, {"response": '[{"n": "ok"}, {"n": 2}]'}) == fail(
        "schema violation: $.1.n: 2 is not of type 'string'"
    )


# --- tool calls ------------------------------------------------------------------------------


def test_tool_calls_unordered() -> None:
    calls = [call("search", {"q": "x", "n": 1}), call("get", {"id": 7})]
    trace = {"response": "r", "tool_calls": calls}
    assert one({"tool_calls": ["get", "search"]}, trace) == OK
    assert one({"tool_calls": [{"name": "search", "args_subset": {"n": True}}]}, trace) == OK
    assert one({"tool_calls": []}, trace) == OK
    assert one({"tool_calls": ["get", "get"]}, trace) == fail(
        "expected tool call get() not found; actual calls: ['search', 'get']"
    )
    assert one({"tool_calls": [{"name": "get", "args_subset": {"id": 8, "b": "é"}}]}, trace) == (
        fail(
            'expected tool call get({"b": "\\u00e9", "id": 8}) not found; '
            "actual calls: ['search', 'get']"
        )
    )
    assert one({"tool_calls": ["get"]}, {"response": "r"}) == fail(
        "expected tool call get() not found; actual calls: none"
    )


def test_tool_calls_find_an_assignment_greedy_misses() -> None:
    # graph-agents-cli fails this case: its first item takes the only call the second accepts.
    trace = {
        "response": "r",
        "tool_calls": [call("search", {"q": "x"}), call("search", {"q": "y"})],
    }
    expect = {"tool_calls": ["search", {"name": "search", "args_subset": {"q": "x"}}]}
    assert one(expect, trace) == OK_NOT_FIRST_MATCH
    # the same entries the other way round: first-match finds the assignment too
    assert one({"tool_calls": expect["tool_calls"][::-1]}, trace) == OK
    crowded = {"tool_calls": [*expect["tool_calls"], "search"]}
    assert one(crowded, trace) == fail(
        "expected tool call search() not found; actual calls: ['search', 'search']"
    )


def test_tool_calls_ordered() -> None:
    trace = {"response": "r", "tool_calls": [call("a"), call("b"), call("a")]}
    assert one({"tool_calls": ["b", "a"], "ordered": True}, trace) == OK
    assert one({"tool_calls": ["a", "b", "a"], "ordered": True}, trace) == OK
    assert one({"tool_calls": ["b", "b"], "ordered": True}, trace) == fail(
        "expected tool call b() not found in order; actual calls: ['a', 'b', 'a']"
    )


def test_tool_calls_with_string_args_never_match_a_subset() -> None:
    trace = {"response": "r", "tool_calls": [call("get", '{"id": 1}')]}
    assert not one({"tool_calls": [{"name": "get", "args_subset": {"id": 1}}]}, trace).passed
    assert one({"tool_calls": [{"name": "get", "args_subset": {}}]}, trace) == OK


def test_no_tool_calls() -> None:
    assert one({"no_tool_calls": True}, {"response": "r", "tool_calls": []}) == OK
    assert one({"no_tool_calls": True}, {"response": "r", "tool_calls": None}) == OK
    trace = {"response": "r", "tool_calls": [call("a"), call("b")]}
    assert one({"no_tool_calls": True}, trace) == fail("unexpected tool calls: a, b")


# --- budgets ---------------------------------------------------------------------------------


def test_max_latency_ms() -> None:
    assert one({"max_latency_ms": 100}, {"response": "r", "latency_ms": 100}) == OK
    assert one({"max_latency_ms": 100}, {"response": "r", "latency_ms": 100.6}) == fail(
        "latency 101 ms exceeds 100 ms"
    )
    assert one({"max_latency_ms": 0}, {"response": "r", "latency_ms": None}) == fail(
        "trace has no latency_ms"
    )
    assert one({"max_latency_ms": 5}, {"response": "r"}) == fail("trace has no latency_ms")


def test_max_tokens() -> None:
    usage = {"input_tokens": 10, "output_tokens": 20}
    assert one({"max_tokens": 30}, {"response": "r", "usage": usage}) == OK
    assert one({"max_tokens": 29}, {"response": "r", "usage": usage}) == fail("30 tokens exceed 29")
    # total_tokens wins when numeric, even below input + output.
    assert one({"max_tokens": 5}, {"response": "r", "usage": {**usage, "total_tokens": 5}}) == OK
    assert one({"max_tokens": 29}, {"response": "r", "usage": {**usage, "total_tokens": "5"}}) == (
        fail("30 tokens exceed 29")
    )
    missing = fail("trace has no usage.input_tokens/output_tokens")
    assert one({"max_tokens": 1000}, {"response": "r", "usage": {"input_tokens": 1}}) == missing
    assert one({"max_tokens": 1000}, {"response": "r"}) == missing


# --- approval gates --------------------------------------------------------------------------


def test_approvals_each_entry_takes_a_distinct_gate() -> None:
    gates = [
        gate("approved", operation_id="cancelOrder", method="POST", path="/orders/1/cancel"),
        gate("rejected", operation_id="cancelOrder", method="post", path="/orders/2/cancel/"),
    ]
    trace = {"response": "r", "approvals": gates}
    by_path = {"method": "POST", "path": "/orders/{id}/cancel"}
    # Greedy would give the rejected-only entry nothing: the gated entry takes gate 1 first.
    expect = {
        "approvals": [
            {"match": {"operation_id": "cancelOrder"}},
            {"match": by_path, "status": "approved"},
        ]
    }
    assert one(expect, trace) == OK_NOT_FIRST_MATCH
    assert one({"approvals": expect["approvals"][::-1]}, trace) == OK
    twice = {"approvals": [{"match": by_path, "status": "approved"}] * 2}
    assert one(twice, trace) == fail(
        "expected POST /orders/{id}/cancel to be approved at an approval gate; gates hit: "
        "cancelOrder POST /orders/1/cancel (approved), cancelOrder post /orders/2/cancel/ "
        "(rejected)"
    )
    wrong_api = {"approvals": [{"match": {"api": "billing", "operation_id": "cancelOrder"}}]}
    assert one(wrong_api, {"response": "r"}) == fail(
        "expected billing: cancelOrder to be gated at an approval gate; gates hit: none"
    )


def test_no_approvals() -> None:
    assert one({"no_approvals": True}, {"response": "r", "approvals": []}) == OK
    trace = {"response": "r", "approvals": [gate(None, method="DELETE", path="/items/4")]}
    assert one({"no_approvals": True}, trace) == fail(
        "calls hit an approval gate: DELETE /items/4 (undecided)"
    )


# --- scope -----------------------------------------------------------------------------------


def _turn(response: str, *calls: dict[str, Any], latency: Any = 10, usage: Any = None) -> Any:
    return {
        "response": response,
        "tool_calls": list(calls),
        "latency_ms": latency,
        "usage": usage if usage is not None else {"input_tokens": 1, "output_tokens": 2},
        "approvals": [gate("approved", operation_id=f"op-{response}")],
    }


MULTI = {
    "response": "final",
    "tool_calls": [call("b")],
    "latency_ms": 10,
    "usage": {"total_tokens": 3},
    "approvals": [],
    "turns": [_turn("first", call("a")), "not a turn", _turn("final", call("b"))],
}


def test_final_turn_scope_reads_top_level_fields() -> None:
    expect = {"contains": ["first"], "tool_calls": ["a"], "no_approvals": True}
    assert check(expect, MULTI) == {
        "contains": fail("response does not contain 'first'"),
        "tool_calls": fail("expected tool call a() not found; actual calls: ['b']"),
        "no_approvals": OK,
    }


def test_all_turns_scope_reads_every_turn() -> None:
    expect = {
        "scope": "all_turns",
        "contains": ["first", "final"],
        "regex": "^fir",
        "tool_calls": ["a", "b"],
        "ordered": True,
        "not_contains": ["zzz"],
        "approvals": [{"match": {"operation_id": "op-first"}, "status": "approved"}],
    }
    results = check(expect, MULTI)
    assert all(result == OK for result in results.values()), results
    assert list(results) == ["contains", "not_contains", "regex", "tool_calls", "approvals"]
    fails = check(
        {
            "scope": "all_turns",
            "contains": ["zzz"],
            "not_contains": ["FIRST"],
            "regex": "^x",
            "tool_calls": ["b", "a"],
            "ordered": True,
            "no_tool_calls": False,
            "max_latency_ms": 10,
            "max_tokens": 100,
            "no_approvals": True,
        },
        MULTI,
    )
    assert fails == {
        "contains": fail("no reply in any turn contains 'zzz'"),
        "not_contains": fail("a turn's reply contains forbidden 'FIRST' (ignoring case)"),
        "regex": fail("no reply in any turn matches /^x/"),
        "tool_calls": fail("expected tool call a() not found in order; actual calls: ['a', 'b']"),
        "max_latency_ms": fail("turn 2: trace has no latency_ms"),  # the non-dict turn
        "max_tokens": fail("a turn has no usage.input_tokens/output_tokens"),
        "no_approvals": fail(
            "calls hit an approval gate: op-first ? ? (approved), op-final ? ? (approved)"
        ),
    }


def test_all_turns_budgets_per_turn_and_summed() -> None:
    trace = {
        "response": "b",
        "turns": [_turn("a", latency=5), _turn("b", latency=50, usage={"total_tokens": 7})],
    }
    expect = {"scope": "all_turns", "max_latency_ms": 20, "max_tokens": 9}
    assert check(expect, trace) == {
        "max_latency_ms": fail("turn 2: latency 50 ms exceeds 20 ms"),
        "max_tokens": fail("10 tokens over 2 turns exceed 9"),
    }
    assert check({**expect, "max_latency_ms": 50, "max_tokens": 10}, trace) == {
        "max_latency_ms": OK,
        "max_tokens": OK,
    }


def test_all_turns_without_turns_reads_the_final_turn() -> None:
    trace = {"response": "only", "turns": [], "latency_ms": 1}
    assert check({"scope": "all_turns", "contains": ["x"], "max_latency_ms": 0}, trace) == {
        "contains": fail("response does not contain 'x'"),
        "max_latency_ms": fail("latency 1 ms exceeds 0 ms"),
    }


# --- a check that raises ---------------------------------------------------------------------


def test_check_raised_is_a_failure_with_the_message_cut_to_80() -> None:
    results = check(
        {"max_latency_ms": 100, "json_schema": {"type": "foo"}, "contains": ["x"]},
        {"response": "{}", "latency_ms": "120"},
    )
    assert results == {
        "contains": fail("response does not contain 'x'"),
        # graph-agents-cli's exact text: newlines become spaces, the message is cut to 80.
        "json_schema": fail(
            "check raised UnknownType: Unknown type 'foo' for validator with schema:     "
            "{'type': 'foo'}  While chec..."
        ),
        "max_latency_ms": fail(
            "check raised TypeError: '>' not supported between instances of 'str' and 'int'"
        ),
    }
    long = one({"json_schema": {"type": "t" * 100}}, {"response": "{}"})
    assert long.reason == "check raised UnknownType: " + ("Unknown type '" + "t" * 100)[:77] + "..."


def test_malformed_trace_fails_checks_instead_of_stopping() -> None:
    trace = {"response": "r", "turns": [{"tool_calls": 5}]}
    assert check({"scope": "all_turns", "tool_calls": ["a"], "contains": [""]}, trace) == {
        "contains": OK,
        "tool_calls": fail("check raised TypeError: 'int' object is not iterable"),
    }
    assert one({"tool_calls": ["a"]}, {"response": "r", "tool_calls": ["a"]}) == fail(
        "check raised AttributeError: 'str' object has no attribute 'get'"
    )


def test_result_as_dict() -> None:
    assert fail("why").as_dict() == {"passed": False, "reason": "why"}


# --- golden results of graph-agents-cli 0.3.1 ------------------------------------------------


@pytest.mark.parametrize("name", ["all_pass", "error", "fail_and_missing"])
def test_golden_checks_blocks(name: str) -> None:
    dataset = json.loads((GOLDEN / "dataset.json").read_text())
    cases = {case["id"]: case for case in dataset["cases"]}
    traces = json.loads((GOLDEN / "traces" / f"{name}.json").read_text())["traces"]
    by_id = {trace["case_id"]: trace for trace in traces}
    results = json.loads(Path(GOLDEN / "results" / f"{name}.results.json").read_text())
    for graded in results["cases"]:
        trace = by_id.get(graded["id"])
        # The gate runs checks only on a trace that is neither missing nor an error.
        if trace is None or trace.get("status") in ("missing", "error") or not trace["response"]:
            assert graded["checks"] == {}
            continue
        expect = normalise_expect(cases[graded["id"]].get("expect"), "golden")
        ours = {name: result.as_dict() for name, result in run_checks(expect, trace).items()}
        assert ours == graded["checks"], graded["id"]
        assert list(ours) == list(graded["checks"])
