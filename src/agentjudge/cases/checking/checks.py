"""The deterministic ``expect`` checks of a case, applied to its trace.

Each check is a small function ``(expect, reading) -> CheckResult`` registered in `_CHECKS`;
`run_checks` runs the ones a case declares, in the order of `CHECKS`. Reasons are
graph-agents-cli 0.3.1's, word for word, so results files, ``analyze`` clusters and anything
users grep for stay the same.

Where we differ on purpose: ``tool_calls`` (unordered) and ``approvals`` pass whenever some
assignment gives every expected item its own recorded call or gate (`assignment`);
graph-agents-cli assigns first-match and can fail a case another assignment passes. Such a
pass says so (`CheckResult.first_match_fails`), so that the run can name the case. A failure
names the first expected item whose prefix cannot be matched, in graph-agents-cli's words.
A malformed turn (say ``tool_calls: 5``) fails the checks that read it with ``check raised``
where graph-agents-cli stops grading with a traceback.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentjudge.cases.checking.assignment import (
    Assignment,
    args_subset_matches,
    assign_distinct,
    first_out_of_order,
)
from agentjudge.cases.checking.json_answer import NoJsonFound, json_answer, schema_errors
from agentjudge.cases.loading import (
    CHECKS,
    SCOPE_ALL_TURNS,
    call_matches,
    describe_gate,
    describe_match,
)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome; ``reason`` is empty when it passed. ``first_match_fails``: it
    passed, but graph-agents-cli 0.3.1's first-match assignment of expected tool calls or
    approval gates fails it."""

    passed: bool
    reason: str = ""
    first_match_fails: bool = False

    def as_dict(self) -> dict[str, bool | str]:
        """The ``{passed, reason}`` object of a results file."""
        return {"passed": self.passed, "reason": self.reason}


PASSED = CheckResult(True)
# passed by an assignment that first-match does not find
PASSED_NOT_FIRST_MATCH = CheckResult(True, first_match_fails=True)


class Reading:
    """What the checks read from a trace under the case's scope.

    ``replies`` holds the final reply, or under ``all_turns`` every turn's reply
    (``per_turn``: reasons are worded differently). Under ``all_turns``, ``latency`` and
    ``usage`` are per-turn lists, and calls and gates are every turn's, in order. Each part
    is read when a check first asks for it, so a malformed part fails only the checks that
    read it.
    """

    __slots__ = ("_approvals", "_folded", "_replies", "_tool_calls", "_trace", "_turns")

    def __init__(self, trace: Mapping[str, Any], all_turns: bool) -> None:
        self._trace = trace
        turns = trace.get("turns") if all_turns else None
        self._turns: list[Mapping[str, Any]] | None = None
        if isinstance(turns, list) and turns:
            self._turns = [turn if isinstance(turn, dict) else {} for turn in turns]
        self._replies: list[str] | None = None
        self._folded: list[str] | None = None
        self._tool_calls: list[Any] | None = None
        self._approvals: list[Any] | None = None

    @property
    def per_turn(self) -> bool:
        return self._turns is not None

    @property
    def final_reply(self) -> str:
        return _text(self._trace.get("response"))

    @property
    def structured_response(self) -> Any:
        return self._trace.get("structured_response")

    @property
    def replies(self) -> list[str]:
        if self._replies is None:
            if self._turns is None:
                self._replies = [self.final_reply]
            else:
                self._replies = [_text(turn.get("response")) for turn in self._turns]
        return self._replies

    @property
    def folded_replies(self) -> list[str]:
        if self._folded is None:
            self._folded = [reply.casefold() for reply in self.replies]
        return self._folded

    @property
    def tool_calls(self) -> list[Any]:
        if self._tool_calls is None:
            self._tool_calls = self._gather("tool_calls")
        return self._tool_calls

    @property
    def approvals(self) -> list[Any]:
        if self._approvals is None:
            self._approvals = self._gather("approvals")
        return self._approvals

    @property
    def latency(self) -> Any:
        return self._per_turn("latency_ms")

    @property
    def usage(self) -> Any:
        return self._per_turn("usage")

    def _gather(self, key: str) -> list[Any]:
        """The final turn's list under ``key``, or every turn's concatenated."""
        if self._turns is None:
            return self._trace.get(key) or []
        return [item for turn in self._turns for item in (turn.get(key) or [])]

    def _per_turn(self, key: str) -> Any:
        if self._turns is None:
            return self._trace.get(key)
        return [turn.get(key) for turn in self._turns]


def declared_checks(expect: Mapping[str, Any]) -> list[str]:
    """The checks ``expect`` declares, in `CHECKS` order.

    ``contains``/``not_contains`` count when non-empty, ``no_tool_calls``/``no_approvals``
    when true, every other check when not null (so ``""``, ``[]``, ``0`` and ``false`` count).
    """
    return [
        name
        for name, when_truthy in _DECLARATION
        if (expect.get(name) if when_truthy else expect.get(name) is not None)
    ]


_TRUTHY = frozenset({"contains", "not_contains", "no_tool_calls", "no_approvals"})
_DECLARATION = tuple((name, name in _TRUTHY) for name in CHECKS)


def run_checks(expect: Mapping[str, Any], trace: Mapping[str, Any]) -> dict[str, CheckResult]:
    """Run every check ``expect`` (a `normalise_expect` result) declares against ``trace``.

    A check that raises fails with ``check raised <Type>: <message>``, so one malformed
    expectation or trace never stops grading.
    """
    names = declared_checks(expect)
    if not names:
        return {}
    reading = Reading(trace, expect.get("scope") == SCOPE_ALL_TURNS)
    results: dict[str, CheckResult] = {}
    for name in names:
        try:
            results[name] = _CHECKS[name](expect, reading)
        except Exception as exc:  # a malformed expectation or trace must not stop grading
            results[name] = _raised(exc)
    return results


def _raised(exc: Exception) -> CheckResult:
    message = str(exc).replace("\n", " ")
    if len(message) > 80:
        message = message[:77] + "..."
    return CheckResult(False, f"check raised {type(exc).__name__}: {message}")


def _text(value: object) -> str:
    return "" if value is None else str(value)


# --- reply texts ---------------------------------------------------------------------------


def _occurs(needle: str, texts: list[str], fold: bool) -> bool:
    if fold:
        needle = needle.casefold()
    for text in texts:  # noqa: SIM110 (a loop: any() would make a generator per needle)
        if needle in text:
            return True
    return False


def _contains(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    fold = bool(expect.get("case_insensitive", True))
    texts = reading.folded_replies if fold else reading.replies
    missing = [needle for needle in expect["contains"] if not _occurs(needle, texts, fold)]
    if not missing:
        return PASSED
    subject = "no reply in any turn contains" if reading.per_turn else "response does not contain"
    mode = "" if fold else " (exact case)"
    return CheckResult(False, f"{subject} {', '.join(map(repr, missing))}{mode}")


def _not_contains(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    fold = bool(expect.get("case_insensitive", True))
    texts = reading.folded_replies if fold else reading.replies
    present = [needle for needle in expect["not_contains"] if _occurs(needle, texts, fold)]
    if not present:
        return PASSED
    subject = "a turn's reply contains" if reading.per_turn else "response contains"
    mode = " (ignoring case)" if fold else ""
    return CheckResult(False, f"{subject} forbidden {', '.join(map(repr, present))}{mode}")


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str] | str:
    """The compiled pattern, or why it does not compile (kept too: a dataset repeats it)."""
    try:
        return re.compile(pattern, re.DOTALL)
    except re.error as exc:
        return str(exc)


def _regex(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    pattern: str = expect["regex"]
    compiled = _compiled(pattern)
    if isinstance(compiled, str):
        return CheckResult(False, f"invalid regex {pattern!r}: {compiled}")
    if any(compiled.search(reply) is not None for reply in reading.replies):
        return PASSED
    if reading.per_turn:
        return CheckResult(False, f"no reply in any turn matches /{pattern}/")
    return CheckResult(False, f"response does not match /{pattern}/")


def _json_schema(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    schema = expect["json_schema"]
    structured = reading.structured_response
    if structured is not None:
        errors = schema_errors(schema, structured)
        if errors:
            return CheckResult(
                False, "structured response: schema violation: " + "; ".join(errors[:3])
            )
        return PASSED
    try:
        answer = json_answer(reading.final_reply, schema)
    except NoJsonFound as exc:
        return CheckResult(False, f"response is not valid JSON: {exc}")
    errors = schema_errors(schema, answer)
    if errors:
        return CheckResult(False, "schema violation: " + "; ".join(errors[:3]))
    return PASSED


# --- tool calls ----------------------------------------------------------------------------


def _call_fits(expected: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    return call.get("name") == expected.get("name") and args_subset_matches(
        expected.get("args_subset"), call.get("args")
    )


def _describe_call(expected: Mapping[str, Any]) -> str:
    subset = expected.get("args_subset")
    return f"{expected.get('name')}({json.dumps(subset, sort_keys=True) if subset else ''})"


def _tool_calls(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    expected: list[Mapping[str, Any]] = expect["tool_calls"]
    calls = reading.tool_calls
    missing: int | None
    if expect.get("ordered"):
        # earliest fit is graph-agents-cli's way too, and it is exact: nothing to tell apart
        missing, where = first_out_of_order(expected, calls, _call_fits), " in order"
        if missing is None:
            return PASSED
    else:
        assignment = assign_distinct(expected, calls, _call_fits)
        missing, where = assignment.unassigned, ""
        if missing is None:
            return _assigned(assignment)
    names = [str(call.get("name")) for call in calls]
    return CheckResult(
        False,
        f"expected tool call {_describe_call(expected[missing])} not found{where}; "
        f"actual calls: {names or 'none'}",
    )


def _no_tool_calls(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    if not reading.tool_calls:
        return PASSED
    names = ", ".join(str(call.get("name")) for call in reading.tool_calls)
    return CheckResult(False, f"unexpected tool calls: {names}")


# --- budgets -------------------------------------------------------------------------------


def _latency_within(limit: float, latency: Any) -> CheckResult:
    if latency is None:
        return CheckResult(False, "trace has no latency_ms")
    if latency > limit:
        return CheckResult(False, f"latency {latency:.0f} ms exceeds {limit:.0f} ms")
    return PASSED


def _max_latency_ms(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    limit, latencies = expect["max_latency_ms"], reading.latency
    if not isinstance(latencies, list):
        return _latency_within(limit, latencies)
    for turn, latency in enumerate(latencies, start=1):
        result = _latency_within(limit, latency)
        if not result.passed:
            return CheckResult(False, f"turn {turn}: {result.reason}")
    return PASSED


def _tokens(usage: object) -> int | None:
    """``total_tokens`` when numeric, else input + output; None when neither is there."""
    if not isinstance(usage, dict):
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int | float):
        return int(total)
    parts = usage.get("input_tokens"), usage.get("output_tokens")
    if isinstance(parts[0], int | float) and isinstance(parts[1], int | float):
        return int(parts[0]) + int(parts[1])
    return None


def _max_tokens(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    limit, usage = expect["max_tokens"], reading.usage
    if not isinstance(usage, list):
        total = _tokens(usage)
        if total is None:
            return CheckResult(False, "trace has no usage.input_tokens/output_tokens")
        if total > limit:
            return CheckResult(False, f"{total} tokens exceed {limit:.0f}")
        return PASSED
    totals = [_tokens(turn) for turn in usage]
    counted = [total for total in totals if total is not None]
    if len(counted) != len(totals):
        return CheckResult(False, "a turn has no usage.input_tokens/output_tokens")
    if sum(counted) > limit:
        return CheckResult(
            False, f"{sum(counted)} tokens over {len(totals)} turns exceed {limit:.0f}"
        )
    return PASSED


# --- approval gates ------------------------------------------------------------------------


def _gate_fits(expected: Mapping[str, Any], gate: Mapping[str, Any]) -> bool:
    status = expected.get("status", "gated")
    return call_matches(expected["match"], gate) and (
        status == "gated" or gate.get("status") == status
    )


def _approvals(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    expected: list[Mapping[str, Any]] = expect["approvals"]
    assignment = assign_distinct(expected, reading.approvals, _gate_fits)
    missing = assignment.unassigned
    if missing is None:
        return _assigned(assignment)
    item = expected[missing]
    hit = ", ".join(describe_gate(gate) for gate in reading.approvals) or "none"
    return CheckResult(
        False,
        f"expected {describe_match(item['match'])} to be {item.get('status', 'gated')} "
        f"at an approval gate; gates hit: {hit}",
    )


def _assigned(assignment: Assignment) -> CheckResult:
    """The pass of a complete assignment, marked when first-match would have failed."""
    if assignment.first_match_unassigned is None:
        return PASSED
    return PASSED_NOT_FIRST_MATCH


def _no_approvals(expect: Mapping[str, Any], reading: Reading) -> CheckResult:
    if not reading.approvals:
        return PASSED
    hit = ", ".join(describe_gate(gate) for gate in reading.approvals)
    return CheckResult(False, f"calls hit an approval gate: {hit}")


_CHECKS: dict[str, Callable[[Mapping[str, Any], Reading], CheckResult]] = {
    "contains": _contains,
    "not_contains": _not_contains,
    "regex": _regex,
    "json_schema": _json_schema,
    "tool_calls": _tool_calls,
    "no_tool_calls": _no_tool_calls,
    "max_latency_ms": _max_latency_ms,
    "max_tokens": _max_tokens,
    "approvals": _approvals,
    "no_approvals": _no_approvals,
}
