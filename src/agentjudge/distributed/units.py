"""Units of work for the workers: consecutive whole trees, cut by steps (pure).

A unit is what one Ray task judges with its own client: consecutive trees, never a tree
split, cut where the steps so far reach the next share of the job. Units are sized so
that each keeps its client busy for many rounds of calls (its start and its tail, its last
trees' last calls, are time its share of the judge goes partly unused) while the
collection still makes several units per worker (a fast worker takes more of them). Their
number is a multiple of the tasks running at once and their sizes about equal, so the
tasks end together: a last unit running alone would leave the rest of the judge idle.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# a unit's steps per call its client makes at once: at least a few rounds of calls...
MIN_ROUNDS = 8
# ...and at most this many, so a long job is cut into many units. 64 made the 2,000 x 25
# bench 25 units, each about 1 s slower than its calls' ideal 4.7 s (its client's ramp and
# tail); 256 makes it 8, and the Ray run 5-6% slower than the local one instead of 11-12%
# (bench/ray_scoring.py, figures in docs/distributed.md).
MAX_ROUNDS = 256
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


def unit_count(total_steps: int, spread: Slots) -> int:
    """How many units a job of `total_steps` is cut into (see the module's docstring): a
    multiple of `spread.running`, at least UNITS_PER_SLOT per task, as few as keep each
    within MAX_ROUNDS; fewer (down to one) when units would hold under MIN_ROUNDS."""
    high = MAX_ROUNDS * spread.share
    per_slot = max(UNITS_PER_SLOT, math.ceil(total_steps / (spread.running * high)))
    return max(1, min(per_slot * spread.running, total_steps // (MIN_ROUNDS * spread.share)))


def plan_units(tree_steps: Sequence[int], count: int) -> list[Unit]:
    """Consecutive trees cut into `count` units of about equal steps: unit k ends with the
    tree that brings the steps so far to k + 1 shares of the total, the last unit takes
    the rest. A tree is never split, so sizes differ by up to two trees' steps, and a tree
    larger than a share makes its unit larger than the others (or fewer units)."""
    total = sum(tree_steps)
    units: list[Unit] = []
    start = steps = done = 0
    for index, tree in enumerate(tree_steps):
        steps += tree
        done += tree
        boundary = (len(units) + 1) * total
        if total and len(units) + 1 < count and done * count >= boundary:
            units.append(Unit(len(units), start, index + 1, steps))
            start, steps = index + 1, 0
    if start < len(tree_steps):
        units.append(Unit(len(units), start, len(tree_steps), steps))
    return units


def steps_judged(finished: int, running: Iterable[Unit], reported: Mapping[int, int]) -> int:
    """The job's steps judged so far: `finished` (of the units that came back) and what
    each running unit reported, never more than its own steps."""
    return finished + sum(min(reported.get(unit.index, 0), unit.steps) for unit in running)
