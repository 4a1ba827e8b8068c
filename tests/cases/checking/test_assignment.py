"""Assignment of expected items to recorded ones (tool calls, approval gates), and args_subset."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentjudge.cases.checking.assignment import (
    args_subset_matches,
    assign_distinct,
    first_out_of_order,
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


def first_unassigned(expected: list[Any], recorded: list[Any], fits: Any) -> int | None:
    return assign_distinct(expected, recorded, fits).unassigned


def test_assignment_passes_where_greedy_fails() -> None:
    # Expected "any search", then "search with q=x"; calls: search(q=x), search(q=y).
    # Greedy gives the first call to the first item and then fails the second.
    expected = [("search", None), ("search", "x")]
    recorded = [("search", "x"), ("search", "y")]

    def fits(item: tuple[str, str | None], call: tuple[str, str]) -> bool:
        return item[0] == call[0] and item[1] in (None, call[1])

    assert assign_distinct(expected, recorded, fits) == (None, 1)  # first-match stops at 1


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

    assert assign_distinct(list(range(n)), list(range(n)), fits) == (None, n - 1)
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


def _first_match(expected: list[int], recorded: list[int], fits: Any) -> int | None:
    """graph-agents-cli 0.3.1's unordered matching, as its checks.py does it: each expected
    item, in turn, removes the first remaining recorded item that fits; the first item that
    finds none fails the check."""
    remaining = list(recorded)
    for index, item in enumerate(expected):
        taken = next((i for i, record in enumerate(remaining) if fits(item, record)), None)
        if taken is None:
            return index
        del remaining[taken]
    return None


@given(
    n_expected=st.integers(0, 5),
    n_recorded=st.integers(0, 6),
    edges=st.sets(st.tuples(st.integers(0, 4), st.integers(0, 5))),
)
def test_first_match_is_where_graph_agents_cli_stops(
    n_expected: int, n_recorded: int, edges: set[tuple[int, int]]
) -> None:
    expected, recorded = list(range(n_expected)), list(range(n_recorded))

    def fits(e: int, r: int) -> bool:
        return (e, r) in edges

    assignment = assign_distinct(expected, recorded, fits)
    assert assignment.first_match_unassigned == _first_match(expected, recorded, fits)
    # first-match never passes what no assignment passes
    if assignment.first_match_unassigned is None:
        assert assignment.unassigned is None


def test_first_match_agrees_when_no_item_competes() -> None:
    assert assign_distinct(["a", "b"], ["b", "a"], _same) == (None, None)
    assert assign_distinct(["a", "a"], ["a"], _same) == (1, 1)


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
