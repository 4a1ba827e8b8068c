"""Assigning expected items to recorded ones: tool calls and approval gates.

graph-agents-cli 0.3.1 hands each expected item, in turn, the first remaining recorded item
that fits (first-match). That greedy choice can fail a case that another assignment passes:
expected ``[{name: search}, {name: search, args_subset: {q: "x"}}]`` against the calls
``[search(q="x"), search(q="y")]`` fails because the first, unconstrained entry takes the only
call the second entry accepts. `assign_distinct` instead decides whether every expected item
can get its own recorded item (a bipartite matching, grown one expected item at a time with
augmenting paths), so a case fails only when no assignment exists; and it says, at no extra
cost, where first-match would have stopped, so a run can name the cases graph-agents-cli
grades differently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, TypeVar

E = TypeVar("E")
R = TypeVar("R")


def args_subset_matches(subset: Any, args: Any) -> bool:
    """Whether recorded ``args`` hold every key of ``subset`` with an equal value.

    An empty or absent subset matches any args. Otherwise ``args`` must be a dict (args
    recorded as a JSON string never match). A dict expected where a dict was recorded is
    compared the same way, recursively, so a nested ``{}`` matches any dict but no scalar;
    every other value uses Python ``==`` (lists must be equal, ``1 == 1.0 == True``).
    """
    if not subset:
        return True
    if not isinstance(args, dict):
        return False
    for key, expected in subset.items():
        if key not in args:
            return False
        actual = args[key]
        if isinstance(expected, dict) and isinstance(actual, dict):
            if not args_subset_matches(expected, actual):
                return False
        elif expected != actual:
            return False
    return True


def first_out_of_order(
    expected: Sequence[E], recorded: Sequence[R], fits: Callable[[E, R], bool]
) -> int | None:
    """The index of the first expected item with no fitting recorded item after the previous
    one's, or None when ``expected`` fits a subsequence of ``recorded``.

    Taking the earliest fitting item each time is optimal for any per-pair ``fits``: if some
    increasing positions p1 < p2 < ... fit, then by induction the greedy position g_j <= p_j
    (g_1 <= p_1 as the earliest fit; the search for item j starts after g_(j-1) <= p_(j-1)
    < p_j and p_j fits, so it stops at or before p_j). So greedy fails only when no
    subsequence exists, and the item it stops at is the first whose prefix cannot be placed.
    """
    position = 0
    for index, item in enumerate(expected):
        while position < len(recorded):
            candidate = recorded[position]
            position += 1
            if fits(item, candidate):
                break
        else:
            return index
    return None


class Assignment(NamedTuple):
    """Where giving each expected item its own recorded item stops, optimally and as
    graph-agents-cli's first-match does it (None: every expected item got one)."""

    unassigned: int | None
    first_match_unassigned: int | None


def assign_distinct(
    expected: Sequence[E], recorded: Sequence[R], fits: Callable[[E, R], bool]
) -> Assignment:
    """Give each expected item its own fitting recorded item.

    `unassigned` is the smallest ``i`` such that items ``0..i`` cannot all be matched at
    once (it does not depend on how ties are broken). `first_match_unassigned` is the item
    where first-match (each item, in turn, takes the first remaining recorded item that
    fits) finds none left. It comes for free: each item here first takes the first free
    fitting record, exactly as first-match does, and only when there is none re-seats
    earlier items along an augmenting path. So until the first such item, the records held
    are first-match's, and that item is where first-match stops; with no such item, the
    two assignments are the same one.
    """
    options: list[list[int]] = []
    holder: dict[int, int] = {}  # recorded index -> the expected index that holds it
    first_match: int | None = None
    for index, item in enumerate(expected):
        choices = [j for j, record in enumerate(recorded) if fits(item, record)]
        options.append(choices)
        free = next((j for j in choices if j not in holder), None)
        if free is not None:
            holder[free] = index
            continue
        if first_match is None:
            first_match = index
        if not _augment(index, options, holder):
            # Items 0..index-1 are all matched; no augmenting path for `index` proves the
            # prefix 0..index has no full matching (Berge).
            return Assignment(index, first_match)
    return Assignment(None, first_match)


def _augment(start: int, options: list[list[int]], holder: dict[int, int]) -> bool:
    """Give expected item ``start`` a recorded item, re-seating holders along an augmenting
    path; False when none exists. Iterative: a long path must not hit the recursion limit."""
    visited: set[int] = set()
    stack: list[tuple[int, Iterator[int]]] = [(start, iter(options[start]))]
    taken: list[int] = []  # taken[k]: the recorded item stack[k] would take from stack[k+1]
    while stack:
        item, choices = stack[-1]
        for record in choices:
            if record in visited:
                continue
            visited.add(record)
            current = holder.get(record)
            if current is None:
                holder[record] = item
                for level in range(len(taken) - 1, -1, -1):
                    holder[taken[level]] = stack[level][0]
                return True
            taken.append(record)
            stack.append((current, iter(options[current])))
            break
        else:
            stack.pop()
            if taken:
                taken.pop()
    return False
