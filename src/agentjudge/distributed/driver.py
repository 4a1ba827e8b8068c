"""The driver of a job on Ray: joins (or starts) the cluster, cuts the roots into units,
keeps a few units per worker submitted, merges what they send back, and aggregates.

Ray schedules the tasks and retries a unit whose worker died (`max_retries`); a retried
unit finds the verdicts its first attempt got at the desk. Ctrl-C cancels every unit.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentjudge.atif import Node
from agentjudge.distributed import require_ray
from agentjudge.distributed.desk import VerdictDesk
from agentjudge.distributed.node_judges import Lane, start_node_judges, stop_node_judges
from agentjudge.distributed.units import (
    Slots,
    Unit,
    plan_units,
    slots,
    steps_judged,
    unit_count,
)
from agentjudge.distributed.worker import UnitResult, UnitWork, score_unit
from agentjudge.errors import EXIT_JOB_FAILED, AgentJudgeError, UsageError
from agentjudge.judge import JudgeClient
from agentjudge.scoring.job import Failure, ScoringJob
from agentjudge.scoring.scored import JobResult, TreeResult

UNIT_RETRIES = 3  # times Ray runs a unit again after its worker died
SUBMITTED_PER_SLOT = 2  # units submitted per running task: the next one waits, shipped
# how long the driver waits for a unit before it reads the units' progress and checks for
# Ctrl-C
WAIT_SECONDS = 0.5
RAY_PROBE_SECONDS = 5.0  # how long a named head's port may take to accept a connection
# a bare --ray's cluster's address: loopback, but not 127.0.0.1, which Ray swaps for the
# machine's network address
LOCAL_NODE = "127.0.0.2"


class RayJobError(AgentJudgeError):
    """The cluster could not run the job (a worker that kept dying, a lost node)."""

    exit_code = EXIT_JOB_FAILED


def run_on_ray(
    job: ScoringJob,
    roots: Sequence[Node],
    store_path: Path | None,
    api_key: str | None,
    on_units: Callable[[int], None] = lambda _: None,
) -> JobResult:
    """Judge `roots` on the Ray cluster `job.config.ray_address` names and aggregate them
    with `job.result`; `store_path` is the verdict store (None: `--no-cache`); `on_units`
    hears the steps judged since it last heard, as the units report them."""
    ray = require_ray()
    config = job.config
    connect(ray, config.ray_address or "auto")
    desk: Any = None
    node_judges: list[Any] = []
    pending: dict[Any, tuple[Unit, Lane]] = {}
    try:
        here = ray.get_runtime_context().get_node_id()
        placement = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(here, False)
        desk = (
            ray.remote(VerdictDesk)
            .options(num_cpus=0, scheduling_strategy=placement)
            .remote(str(store_path) if store_path is not None else None)
        )
        if config.judge == "local":
            lanes, node_judges = start_node_judges(ray)
            spread = Slots(len(lanes), 1)
        else:
            spread = slots(ray.cluster_resources().get("CPU", 1), config.concurrency_limit)
            lanes = [Lane(None, None, SUBMITTED_PER_SLOT * spread.running)]
        steps = [job.tree_steps(root) for root in roots]
        units = plan_units(steps, unit_count(sum(steps), spread))
        task = ray.remote(score_unit)
        done: dict[int, UnitResult] = {}
        finished = shown = 0  # steps of the units back; steps the progress bar shows
        failure: Failure | None = None
        queue = list(reversed(units))
        while (queue and failure is None) or pending:
            while queue and failure is None and (lane := free_lane(lanes, pending)) is not None:
                unit = queue.pop()
                work = UnitWork(
                    unit.index,
                    config,
                    job.criteria,
                    list(roots[unit.start : unit.stop]),
                    shipped_files(roots[unit.start : unit.stop]),
                    spread.share,
                    api_key,
                    lane.judge,
                    str(store_path) if store_path is not None else None,
                    job.deadline,
                )
                pending[placed(ray, task, lane).remote(work, desk)] = (unit, lane)
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_SECONDS)
            for ref in ready:
                unit, _lane = pending.pop(ref)
                result = fetch(ray, ref)
                done[unit.index] = result
                merge(job, result)
                finished += unit.steps
                if result.failure is not None and failure is None:
                    failure = result.failure  # fail_fast: the other units are cancelled
                    cancel(ray, pending)
                    pending.clear()
            reported: dict[int, int] = ray.get(desk.progress.remote())
            judged = steps_judged(finished, (unit for unit, _ in pending.values()), reported)
            if judged > shown:
                on_units(judged - shown)
                shown = judged
        trees: list[TreeResult] = []
        if failure is None:
            trees = [tree for index in sorted(done) for tree in done[index].trees]
        return job.result(trees, failure)
    finally:
        cancel(ray, pending)  # Ctrl-C, an error: nothing keeps running for this job
        stop_node_judges(ray, node_judges)
        if desk is not None:
            try:  # its last verdicts committed (each was, before its worker went on)
                ray.get(desk.close.remote(), timeout=30)
            except Exception:
                logging.getLogger(__name__).debug("closing the desk", exc_info=True)
            ray.kill(desk)
        ray.shutdown()


def free_lane(lanes: Sequence[Lane], pending: dict[Any, tuple[Unit, Lane]]) -> Lane | None:
    """The first lane holding fewer units than its capacity, if any."""
    held = Counter(lane for _, lane in pending.values())
    return next((lane for lane in lanes if held[lane] < lane.capacity), None)


def placed(ray: Any, task: Any, lane: Lane) -> Any:
    """`task` as a unit runs: a CPU, retried when its worker dies, pinned to the lane's
    node when it has one."""
    if lane.node is None:
        return task.options(num_cpus=1, max_retries=UNIT_RETRIES)
    strategy = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(lane.node, False)
    return task.options(num_cpus=1, max_retries=UNIT_RETRIES, scheduling_strategy=strategy)


def connect(ray: Any, address: str) -> None:
    """Join the cluster at `address` ("auto": RAY_ADDRESS or the one `ray start` made), or
    start one on this machine ("local"); quietly (the job's own lines are on stderr)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    quiet: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address not in ("local", "auto"):
        _probe(address)
    try:
        if address == "local":
            # a cluster of this machine alone: on loopback, where nothing else can join it
            ray.init(address="local", include_dashboard=False, _node_ip_address=LOCAL_NODE, **quiet)
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError) as exc:
        raise UsageError(
            f"--ray-address {address}: cannot reach a Ray cluster ({str(exc)[:300]}); start "
            "one with `ray start --head` and give its address, or --ray to start one here"
        ) from None


def _probe(address: str) -> None:
    """Fail in seconds when nothing listens at a named head: Ray itself retries an
    unreachable address for minutes, printing a warning every few seconds."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), RAY_PROBE_SECONDS).close()
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(
            f"--ray-address {address}: cannot reach a Ray cluster (nothing answers there: "
            f"{reason[:200]}); start one with `ray start --head` and give its address, or "
            "--ray to start one here"
        ) from None


def fetch(ray: Any, ref: Any) -> UnitResult:
    """A unit's result; a usage error a worker met is raised as it is, a unit whose worker
    kept dying fails the job."""
    try:
        result: UnitResult = ray.get(ref)
        return result
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, AgentJudgeError):
            raise cause from None
        raise
    except ray.exceptions.RayError as exc:
        raise RayJobError(
            f"a unit of trees could not be judged on the cluster ({type(exc).__name__}, "
            f"after {UNIT_RETRIES} retries); the verdicts got so far are in the verdict "
            "store: run the same command again to resume"
        ) from None


def cancel(ray: Any, pending: dict[Any, Any]) -> None:
    for ref in pending:
        try:
            ray.cancel(ref, force=True)
        except Exception:  # already finished, or its worker is gone
            logging.getLogger(__name__).debug("cancel", exc_info=True)


def merge(job: ScoringJob, unit: UnitResult) -> None:
    """A unit's counts added to the job's (the results document reads them there), and
    its calls' measurements to the job's metrics (exported when the job ends)."""
    client: JudgeClient = job.client
    client.add_measured(unit.measured)
    for name, value in vars(unit.stats).items():
        setattr(client.stats, name, getattr(client.stats, name) + value)
    for name, value in vars(unit.accounting).items():
        setattr(job.accounting, name, getattr(job.accounting, name) + value)
    for note in unit.notes:
        if note not in client.notes:
            client.notes.append(note)


def shipped_files(roots: Sequence[Node]) -> dict[Path, bytes]:
    """The bytes of every file the trees of `roots` read (sent with their unit)."""
    paths = {
        segment.file
        for root in roots
        for node in root.walk()
        if not node.problems
        for segment in node.segments
    }
    return {path: path.read_bytes() for path in sorted(paths)}
