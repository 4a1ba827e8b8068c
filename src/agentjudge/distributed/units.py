"""Units of work for the workers: consecutive whole trees, cut by steps (pure).

A unit is what one Ray task judges with its own client. Trees are taken in order while
their steps fit the unit's size, as the local job admits trees into its step budget
(`scoring/step_budget.py`); a tree larger than a unit is a unit alone. Units are sized so
that each keeps its client busy for many rounds of calls (the tail of a unit, its last
trees' last calls, is the time its share of the judge goes partly unused) while the
collection still makes several units per worker (a fast worker takes more of them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# a unit's steps per call its client makes at once: at least a few rounds of calls...
MIN_ROUNDS = 8
# ...and at most this many, so a long job is cut into many units
MAX_ROUNDS = 64
UNITS_PER_SLOT = 4  # at least this many units per task running at once, when trees allow


@dataclass(frozen=True, slots=True)
class Unit:
    """Roots `start` to `stop` (exclusive) of the job, and their steps."""

    index: int
    start: int
    stop: int
    steps: int


@dataclass(frozen=True, slots=True)
class Slots:
    """How the job spreads over the cluster: `running` tasks at once, each with a client
    of `share` calls at once (their sum is at most `concurrency_limit`)."""

    running: int
    share: int


def slots(cpus: float, concurrency_limit: int) -> Slots:
    """One task per CPU of the cluster (but never more tasks than calls), each with an
    equal share of the concurrency limit."""
    running = max(1, min(int(cpus), concurrency_limit))
    return Slots(running, max(1, concurrency_limit // running))


def unit_steps(total_steps: int, spread: Slots) -> int:
    """How many steps a unit holds (see the module's docstring)."""
    low, high = MIN_ROUNDS * spread.share, MAX_ROUNDS * spread.share
    even = math.ceil(total_steps / (UNITS_PER_SLOT * spread.running))
    return max(low, min(high, even))


def plan_units(tree_steps: Sequence[int], size: int) -> list[Unit]:
    """Consecutive trees, `size` steps a unit at most (a larger tree is a unit alone)."""
    units: list[Unit] = []
    start = steps = 0
    for index, count in enumerate(tree_steps):
        if index > start and steps + count > size:
            units.append(Unit(len(units), start, index, steps))
            start, steps = index, 0
        steps += count
    if start < len(tree_steps):
        units.append(Unit(len(units), start, len(tree_steps), steps))
    return units
