"""What the driver of a Ray job works out before a task runs, and what a worker does with
the driver's desk, without a cluster (the cluster end to end: tests/e2e/test_score_ray.py)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentjudge.cli.score import bare_ray_flag
from agentjudge.distributed.driver import free_lane
from agentjudge.distributed.node_judges import Lane
from agentjudge.distributed.units import Slots, Unit, plan_units, slots, unit_steps
from agentjudge.distributed.worker import Batch
from agentjudge.errors import UsageError
from agentjudge.scoring.config import ScoreConfig, load_config
from tests.atif.docs import doc, write
from tests.conftest import REPO


def test_units_are_consecutive_whole_trees_within_their_size() -> None:
    assert plan_units([3, 3, 3, 3], 6) == [Unit(0, 0, 2, 6), Unit(1, 2, 4, 6)]
    assert plan_units([3, 10, 2, 2], 6) == [Unit(0, 0, 1, 3), Unit(1, 1, 2, 10), Unit(2, 2, 4, 4)]
    assert plan_units([], 6) == []
    assert plan_units([0, 0], 6) == [Unit(0, 0, 2, 0)]


def test_every_tree_is_in_exactly_one_unit_in_order() -> None:
    steps = [(i * 7) % 13 for i in range(200)]
    units = plan_units(steps, 40)
    assert [u.start for u in units[1:]] == [u.stop for u in units[:-1]]
    assert (units[0].start, units[-1].stop) == (0, 200)
    assert [u.index for u in units] == list(range(len(units)))
    assert all(u.steps <= 40 or u.stop - u.start == 1 for u in units)


def test_the_concurrency_limit_is_shared_by_the_tasks_running_at_once() -> None:
    assert slots(2.0, 64) == Slots(2, 32)
    assert slots(8.0, 4) == Slots(4, 1)  # never more tasks than calls
    assert slots(0.0, 16) == Slots(1, 16)
    assert slots(3.0, 16) == Slots(3, 5)  # the sum stays within the limit


def test_a_unit_holds_several_rounds_of_calls_and_a_job_makes_several_units() -> None:
    spread = Slots(2, 32)
    assert unit_steps(50_000, spread) == 64 * 32  # a large job: many units of 64 rounds
    assert unit_steps(100, spread) == 8 * 32  # a small one: at least 8 rounds
    assert unit_steps(12_000, spread) == 1_500  # four units per task


def test_a_bare_ray_flag_starts_a_local_cluster() -> None:
    assert bare_ray_flag(["score", "runs", "--ray"]) == ["score", "runs", "--ray=local"]
    assert bare_ray_flag(["score", "--ray", "runs"]) == ["score", "--ray=local", "runs"]
    assert bare_ray_flag(["score", "--ray", "--quiet"]) == ["score", "--ray=local", "--quiet"]
    assert bare_ray_flag(["score", "--ray", "auto", "r"]) == ["score", "--ray", "auto", "r"]
    assert bare_ray_flag(["score", "--ray", "10.0.0.5:6379"])[-1] == "10.0.0.5:6379"
    assert bare_ray_flag(["score", "--ray", "ray://head:10001"])[-1] == "ray://head:10001"
    assert bare_ray_flag(["score", "--", "--ray"]) == ["score", "--", "--ray"]


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
    with pytest.raises(UsageError, match="ray_address: 'runs/' is not a Ray address"):
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
