"""Assignment of expected items to recorded ones, args_subset, and approval-gate matching."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentjudge.cases.checking.assignment import (
    args_subset_matches,
    first_out_of_order,
    first_unassigned,
)
from agentjudge.cases.loading.approval_match import (
    call_matches,
    describe_gate,
    describe_match,
    match_problem,
    normalise_path,
    path_matches,
)

# --- args_subset -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subset", "args", "expected"),
    [
        (None, None, True),
        ({}, "not even a dict", True),  # empty subset: anything
        ({"q": "x"}, {"q": "x", "n": 2}, True),
        ({"q": "x"}, {"q": "y"}, False),
        ({"q": "x"}, {}, False),
        ({"q": None}, {}, False),  # the key must be there, even for null
        ({"q": None}, {"q": None}, True),
        ({"q": "x"}, '{"q": "x"}', False),  # args recorded as a string never match
        ({"q": "x"}, None, False),
        ({"n": 1}, {"n": 1.0}, True),  # Python ==: 1 == 1.0 == True
        ({"n": 1}, {"n": True}, True),
        ({"n": True}, {"n": 1.0}, True),
        ({"n": 1}, {"n": "1"}, False),
        ({"l": [1, 2]}, {"l": [1, 2]}, True),
        ({"l": [1]}, {"l": [1, 2]}, False),  # lists must be equal, not subsets
        ({"l": [{"a": 1}]}, {"l": [{"a": 1, "b": 2}]}, False),  # no recursion into lists
        ({"o": {"p": 1}}, {"o": {"p": 1, "q": 2}}, True),  # dicts recurse
        ({"o": {"p": 1}}, {"o": {"p": 2}}, False),
        ({"o": {}}, {"o": {"any": "thing"}}, True),  # nested {} matches any dict
        ({"o": {}}, {"o": 5}, False),  # ... but no scalar
        ({"o": {}}, {"o": "text"}, False),
        ({"o": {"p": {"r": [1]}}}, {"o": {"p": {"r": [1], "s": 0}}}, True),
    ],
)
def test_args_subset(subset: Any, args: Any, expected: bool) -> None:
    assert args_subset_matches(subset, args) is expected


# --- unordered assignment --------------------------------------------------------------------


def _same(a: str, b: str) -> bool:
    return a == b


def test_assignment_passes_where_greedy_fails() -> None:
    # Expected "any search", then "search with q=x"; calls: search(q=x), search(q=y).
    # Greedy gives the first call to the first item and then fails the second.
    expected = [("search", None), ("search", "x")]
    recorded = [("search", "x"), ("search", "y")]

    def fits(item: tuple[str, str | None], call: tuple[str, str]) -> bool:
        return item[0] == call[0] and item[1] in (None, call[1])

    assert first_unassigned(expected, recorded, fits) is None


def test_assignment_reports_first_item_whose_prefix_cannot_be_matched() -> None:
    assert first_unassigned(["a", "b", "a", "c"], ["a", "b", "c"], _same) == 2
    assert first_unassigned(["z"], [], _same) == 0
    assert first_unassigned([], ["a"], _same) is None
    # Each recorded item serves one expected item only.
    assert first_unassigned(["a", "a"], ["a"], _same) == 1


def test_assignment_follows_a_long_augmenting_path_without_recursion() -> None:
    # Item i (i < n-1) prefers record i, then i+1; the last item fits only record 0, so
    # seating it moves every other item one place along: a path through all n items.
    n = 3000

    def fits(item: int, record: int) -> bool:
        return record == 0 if item == n - 1 else record in (item, item + 1)

    assert first_unassigned(list(range(n)), list(range(n)), fits) is None
    assert first_unassigned(list(range(n)), list(range(n - 1)), fits) == n - 1


def _matchable(expected: list[int], recorded: list[int], edges: set[tuple[int, int]]) -> bool:
    """Brute force: some injective choice of recorded items fits every expected item."""
    return any(
        all((e, r) in edges for e, r in zip(expected, chosen, strict=True))
        for chosen in itertools.permutations(recorded, len(expected))
    )


@given(
    n_expected=st.integers(0, 4),
    n_recorded=st.integers(0, 5),
    edges=st.sets(st.tuples(st.integers(0, 3), st.integers(0, 4))),
)
def test_assignment_agrees_with_brute_force(
    n_expected: int, n_recorded: int, edges: set[tuple[int, int]]
) -> None:
    expected, recorded = list(range(n_expected)), list(range(n_recorded))

    def fits(e: int, r: int) -> bool:
        return (e, r) in edges

    result = first_unassigned(expected, recorded, fits)
    assert (result is None) == _matchable(expected, recorded, edges)
    if result is not None:
        assert _matchable(expected[:result], recorded, edges)
        assert not _matchable(expected[: result + 1], recorded, edges)


# --- ordered subsequence ---------------------------------------------------------------------


def test_subsequence_in_order() -> None:
    assert first_out_of_order(["a", "c"], ["a", "b", "c"], _same) is None
    assert first_out_of_order(["c", "a"], ["a", "b", "c"], _same) == 1
    assert first_out_of_order(["a", "a"], ["a"], _same) == 1
    assert first_out_of_order([], [], _same) is None


def _in_order(expected: list[int], recorded: list[int], edges: set[tuple[int, int]]) -> bool:
    return any(
        all((e, r) in edges for e, r in zip(expected, chosen, strict=True))
        for chosen in itertools.combinations(recorded, len(expected))
    )


@given(
    n_expected=st.integers(0, 4),
    n_recorded=st.integers(0, 6),
    edges=st.sets(st.tuples(st.integers(0, 3), st.integers(0, 5))),
)
def test_greedy_subsequence_is_optimal(
    n_expected: int, n_recorded: int, edges: set[tuple[int, int]]
) -> None:
    expected, recorded = list(range(n_expected)), list(range(n_recorded))

    def fits(e: int, r: int) -> bool:
        return (e, r) in edges

    result = first_out_of_order(expected, recorded, fits)
    assert (result is None) == _in_order(expected, recorded, edges)
    if result is not None:
        assert not _in_order(expected[: result + 1], recorded, edges)


# --- approval gates --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "path", "expected"),
    [
        ("/orders/{id}/cancel", "/orders/ORD-1/cancel", True),
        ("/orders/{id}/cancel", "/orders/a/b/cancel", False),  # one segment only
        ("/orders/{id}/cancel", "/orders//cancel", False),  # a non-empty one
        ("/orders/{id}", "/orders/7/", True),  # one trailing slash is dropped
        ("/orders/{id}/", "/orders/7", True),
        ("/orders/ORD-{n}", "/orders/ORD-7", True),  # a placeholder inside a segment
        ("/orders/ORD-{n}", "/orders/X-7", False),
        ("/orders/{id}", "/Orders/7", False),  # case counts
        ("/admin", "/%61dmin", True),  # unreserved escapes are decoded
        ("/a%2fb", "/a%2Fb", True),  # other escapes compare upper-cased
        ("/a/b", "/a%2Fb", False),  # an encoded slash is not a separator
        ("/items/{x}", "/items/{x}", True),  # the template itself
        ("/a.b", "/aXb", False),  # literal text is literal, not a regex
        ("/orders/{id}/cancel", "/orders/7/cancel.json", False),  # no suffix matching
        ("/", "/", True),
    ],
)
def test_path_matches(template: str, path: str, expected: bool) -> None:
    assert path_matches(template, path) is expected


def test_normalise_path() -> None:
    assert normalise_path("/a%7e/%2f/x/") == "/a~/%2F/x"
    assert normalise_path("/") == "/"


def test_call_matches_every_given_key() -> None:
    gate = {"api": "orders", "operation_id": "cancelOrder", "method": "post", "path": "/o/1"}
    assert call_matches({"operation_id": "cancelOrder"}, gate)
    assert call_matches({"method": "POST", "path": "/o/{id}"}, gate)  # method ignores case
    assert call_matches({"api": "orders", "operation_id": "cancelOrder"}, gate)
    assert not call_matches({"api": "billing", "operation_id": "cancelOrder"}, gate)
    assert not call_matches({"operation_id": "refund"}, gate)
    assert not call_matches({"method": "GET", "path": "/o/{id}"}, gate)
    assert not call_matches({"method": "POST", "path": "/o/{id}"}, {"method": "POST"})
    assert not call_matches({"method": "POST", "path": "/o/{id}"}, {**gate, "path": 5})


@pytest.mark.parametrize(
    ("match", "problem"),
    [
        ({"operation_id": "x"}, None),
        ({"method": "post", "path": "/orders/{id}/"}, None),
        ({"api": "orders", "operation_id": "x", "method": "GET", "path": "/"}, None),
        ({}, "must be an object like"),
        ("cancelOrder", "must be an object like"),
        ({"operation_id": "x", "verb": "GET"}, "unknown key(s) verb"),
        ({"operation_id": " "}, "operation_id must be a non-empty string"),
        ({"api": "orders"}, "needs operation_id, or method and path"),
        ({"method": "GET"}, "method and path go together"),
        ({"operation_id": "x", "path": "/a"}, "method and path go together"),
        ({"method": "FETCH", "path": "/a"}, "unknown HTTP method 'FETCH'"),
        ({"method": "GET", "path": "a"}, "path must start with /"),
        ({"method": "GET", "path": "/a//b"}, "path must not have empty"),
        ({"method": "GET", "path": "/a/../b"}, "path must not have empty, '.' or '..'"),
        ({"method": "GET", "path": "/a/%2e%2E"}, "percent-encoded ones included"),
        ({"method": "GET", "path": "/a?x=1"}, "path segments hold literal characters"),
        ({"method": "GET", "path": "/a/{1x}"}, "path segments hold literal characters"),
        ({"method": "GET", "path": "/a%00"}, "control character"),
        ({"method": "GET", "path": "/a%20"}, "starts or ends with whitespace"),
        ({"method": "GET", "path": "/a%20.json"}, "whitespace beside a dot"),
        ({"method": "GET", "path": "/a%2Fb"}, "encoded slash"),
        ({"method": "GET", "path": "/a;b"}, "holds ';'"),
    ],
)
def test_match_problem(match: object, problem: str | None) -> None:
    found = match_problem(match)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


def test_descriptions() -> None:
    assert describe_match({"operation_id": "cancelOrder"}) == "cancelOrder"
    assert describe_match({"method": "post", "path": "/o/{id}"}) == "POST /o/{id}"
    assert (
        describe_match({"api": "orders", "operation_id": "c", "method": "GET", "path": "/o"})
        == "orders: c GET /o"
    )
    assert describe_gate({"method": "POST", "path": "/o/1", "status": "approved"}) == (
        "POST /o/1 (approved)"
    )
    assert describe_gate({"operation_id": "c"}) == "c ? ? (undecided)"
