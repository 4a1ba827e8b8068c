"""What the driver of a Ray job works out before a task runs, and what a worker does with
the driver's desk, without a cluster (the cluster end to end: tests/e2e/test_score_ray.py)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentjudge.distributed import worker
from agentjudge.distributed.desk import Batch
from agentjudge.distributed.driver import free_lane
from agentjudge.distributed.node_judges import Lane
from agentjudge.distributed.units import (
    Slots,
    Unit,
    plan_units,
    slots,
    steps_judged,
    unit_count,
)
from agentjudge.distributed.worker import ProgressReport
from agentjudge.errors import UsageError
from agentjudge.scoring.config import ScoreConfig, load_config
from tests.atif.docs import doc, write
from tests.conftest import REPO


def test_units_are_consecutive_whole_trees_of_about_equal_steps() -> None:
    assert plan_units([3, 3, 3, 3], 2) == [Unit(0, 0, 2, 6), Unit(1, 2, 4, 6)]
    # a tree larger than a share makes its unit larger, or fewer units
    assert plan_units([3, 10, 2, 2], 3) == [Unit(0, 0, 2, 13), Unit(1, 2, 3, 2), Unit(2, 3, 4, 2)]
    assert plan_units([1, 20, 1], 3) == [Unit(0, 0, 2, 21), Unit(1, 2, 3, 1)]
    assert plan_units([5, 1, 1, 1, 1, 1], 2) == [Unit(0, 0, 1, 5), Unit(1, 1, 6, 5)]
    assert plan_units([2, 2, 2, 0, 0], 3) == [Unit(0, 0, 1, 2), Unit(1, 1, 2, 2), Unit(2, 2, 5, 2)]
    assert plan_units([], 6) == []
    assert plan_units([0, 0], 6) == [Unit(0, 0, 2, 0)]
    assert plan_units([4, 4], 1) == [Unit(0, 0, 2, 8)]


def test_every_tree_is_in_exactly_one_unit_in_order() -> None:
    steps = [(i * 7) % 13 for i in range(200)]
    units = plan_units(steps, 30)
    assert [u.start for u in units[1:]] == [u.stop for u in units[:-1]]
    assert (units[0].start, units[-1].stop) == (0, 200)
    assert [u.index for u in units] == list(range(len(units)))
    assert sum(u.steps for u in units) == sum(steps)
    assert len(units) == 30
    share = sum(steps) / 30
    assert all(share - 12 < u.steps < share + 12 for u in units[:-1])


def test_the_concurrency_limit_is_shared_by_the_tasks_running_at_once() -> None:
    assert slots(2.0, 64) == Slots(2, 32)
    assert slots(8.0, 4) == Slots(4, 1)  # never more tasks than calls
    assert slots(0.0, 16) == Slots(1, 16)
    assert slots(3.0, 16) == Slots(3, 5)  # the sum stays within the limit


def test_a_unit_holds_several_rounds_of_calls_and_a_job_makes_several_units() -> None:
    spread = Slots(2, 32)
    assert unit_count(100, spread) == 1  # a small job: a unit holds at least 8 rounds
    assert unit_count(1_000, spread) == 3
    assert unit_count(12_000, spread) == 8  # four units per task
    assert unit_count(50_000, spread) == 8  # still four: 6,250 steps is within 256 rounds
    # a large job: units of at most 256 rounds, as many for each task
    assert unit_count(1_000_000, spread) == 2 * 62
    assert 1_000_000 / unit_count(1_000_000, spread) <= 256 * 32


@pytest.mark.parametrize("running", [1, 2, 3, 8])
@pytest.mark.parametrize("total", [7_000, 50_000, 333_325, 2_000_000])
def test_units_come_in_a_multiple_of_the_tasks_running_and_end_together(
    running: int, total: int
) -> None:
    spread = Slots(running, 16)
    units = plan_units([25] * (total // 25), unit_count(total, spread))
    assert len(units) % running == 0
    sizes = [u.steps for u in units]
    assert max(sizes) - min(sizes) <= 2 * 25  # about equal: trees are not split
    assert max(sizes) <= 256 * 16 + 25


def test_progress_counts_units_back_and_what_running_units_reported() -> None:
    running = [Unit(2, 10, 20, 100), Unit(3, 20, 30, 50)]
    assert steps_judged(300, running, {}) == 300
    assert steps_judged(300, running, {2: 40, 3: 10}) == 350
    # a report beyond the unit's steps, or of a unit that came back, adds nothing
    assert steps_judged(300, running, {2: 140, 3: 50, 1: 99}) == 450


class Desk:
    """Stands in for the desk's actor handle: `desk.report.remote(unit, steps)` is kept."""

    def __init__(self) -> None:
        self.reports: list[tuple[int, int]] = []
        self.report = self

    def remote(self, unit: int, steps: int) -> None:
        self.reports.append((unit, steps))


def test_a_unit_reports_at_once_then_at_most_once_an_interval_and_never_drops_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker, "REPORT_INTERVAL", 0.2)
    desk = Desk()

    async def go() -> None:
        report = ProgressReport(desk, 7)
        report(3)  # the first report goes at once
        report(5)
        report(9)  # within the interval: one report once it is over, with the count then
        assert desk.reports == [(7, 3)]
        await asyncio.sleep(0.5)

    asyncio.run(go())
    assert desk.reports == [(7, 3), (7, 17)]


def test_a_node_with_the_embedded_judge_holds_one_unit_at_a_time() -> None:
    a, b = (
        Lane("a", ("http://127.0.0.1:1/v1", "m"), 1),
        Lane("b", ("http://127.0.0.1:2/v1", "m"), 1),
    )
    unit = Unit(0, 0, 1, 1)
    assert free_lane([a, b], {}) == a
    assert free_lane([a, b], {"r1": (unit, a)}) == b
    assert free_lane([a, b], {"r1": (unit, a), "r2": (unit, b)}) is None
    anywhere = Lane(None, None, 4)  # a judge server: a few units per task, on any node
    assert free_lane([anywhere], {str(n): (unit, anywhere) for n in range(3)}) == anywhere
    assert free_lane([anywhere], {str(n): (unit, anywhere) for n in range(4)}) is None


def test_ray_address_is_checked_with_the_rest_of_the_configuration() -> None:
    judge = {"judge_url": "http://127.0.0.1:9/v1", "judge_model": "m"}
    for address in ("auto", "local", "127.0.0.2:6379", "ray://head.svc:10001"):
        assert load_config(None, {**judge, "ray_address": address}).ray_address == address
    with pytest.raises(UsageError, match="ray_address: not a Ray address: auto, local"):
        load_config(None, {**judge, "ray_address": "runs/"})
    assert load_config(None, {"judge": "local", "ray_address": "auto"}).ray_address == "auto"
    assert ScoreConfig(**judge).ray_address is None


def test_calls_close_together_share_one_trip() -> None:
    sent: list[list[int]] = []

    async def send(items: list[int]) -> list[int]:
        sent.append(items)
        return [i * 10 for i in items]

    async def main() -> list[int]:
        batch: Batch[int, int] = Batch(send, 0.01)
        first = await asyncio.gather(*(batch(i) for i in range(5)))
        return [*first, await batch(7)]

    assert asyncio.run(main()) == [0, 10, 20, 30, 40, 70]
    assert sent == [[0, 1, 2, 3, 4], [7]]


def test_a_failed_trip_fails_each_of_its_calls() -> None:
    async def send(items: list[int]) -> list[int]:
        raise RuntimeError("desk gone")

    async def main() -> None:
        batch: Batch[int, int] = Batch(send, 0.001)
        results = await asyncio.gather(batch(1), batch(2), return_exceptions=True)
        assert [type(r) for r in results] == [RuntimeError, RuntimeError]

    asyncio.run(main())


def test_agentjudge_imports_no_ray_unless_a_job_asks_for_it() -> None:
    code = (
        "import sys, agentjudge.cli, agentjudge.api, agentjudge.scoring.job\n"
        "import agentjudge.integrations.evalhub\n"
        "assert 'ray' not in sys.modules, 'ray imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.e2e  # runs the real CLI in a subprocess
def test_without_ray_installed_ray_is_exit_3_naming_the_extra(tmp_path: Path) -> None:
    hidden = tmp_path / "hide"
    write(tmp_path / "runs" / "a.json", doc(3))
    (hidden / "ray").mkdir(parents=True)
    (hidden / "ray" / "__init__.py").write_text("raise ImportError('no ray here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hidden), str(REPO / "src")])}
    done = subprocess.run(
        [sys.executable, "-m", "agentjudge", "score", "runs", "--judge", "fake", "--ray"],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "agentjudge[ray]" in done.stderr
    assert "Traceback" not in done.stderr
