"""What a Ray worker runs: one unit of whole trees, judged by the same per-tree code as a
local run (`ScoringJob.judge_trees`), with a judge client of its own.

The trajectory files come with the unit (the driver read them: no shared filesystem is
needed), and the verdict store is reached through the driver's desk (`desk.py`): a
verdict it holds is used instead of a call, and each verdict the judge gives is handed to
it before the step is counted as judged.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from agentjudge.atif import Node, parse_trajectory
from agentjudge.atif.models import Trajectory
from agentjudge.distributed.desk import Stored
from agentjudge.judge import ClientStats, JudgeClient, JudgeOutcome, JudgeRequest
from agentjudge.judge.providers.local import LocalJudge
from agentjudge.judge.running import run_judging
from agentjudge.judge.telemetry import RecordedMetrics
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import Criteria
from agentjudge.scoring.job import Failure, ScoringJob
from agentjudge.scoring.judge_provider import judge_provider
from agentjudge.scoring.scored import Accounting, TreeResult
from agentjudge.scoring.steps import FileCache

T = TypeVar("T")
R = TypeVar("R")

# seconds a look-up, or a verdict handed over, waits for others to share one trip to the
# desk. Every trip is an actor call, with its CPU on both ends: 0.01 s for look-ups and a
# local client's 0.02 s commit interval for verdicts made each worker of
# bench/ray_scoring.py take about 150 trips a second; 0.05 s for both saved a tenth of the
# workers' CPU and over a quarter of the desk's (docs/distributed.md). The wait holds no
# judge slot: while calls are queued for the judge, as in any long job, it costs no
# throughput.
DESK_INTERVAL = 0.05
REPORT_INTERVAL = 0.5  # seconds between a unit's reports of its progress to the desk


@dataclass(frozen=True)
class UnitWork:
    """Everything a worker needs for one unit (pickled into its Ray task)."""

    index: int
    config: ScoreConfig
    criteria: Criteria
    roots: list[Node]
    files: dict[Path, bytes]  # every file the unit's nodes read, as the driver read it
    concurrency: int  # this unit's share of concurrency_limit
    api_key: str | None = None  # only when the caller gave one (see docs/distributed.md)
    # the embedded judge's server on the unit's node and its model (node_judges.py)
    local_judge: tuple[str, str] | None = None


@dataclass
class UnitResult:
    """What a unit sends back: its trees (or why it failed), its counts, and its calls'
    measurements (the driver exports them: see `RecordedMetrics`)."""

    index: int
    trees: list[TreeResult]
    failure: Failure | None
    stats: ClientStats
    accounting: Accounting
    measured: RecordedMetrics = field(default_factory=RecordedMetrics)
    notes: list[str] = field(default_factory=list)
    settled: dict[str, Any] = field(default_factory=dict)


class ShippedFiles(FileCache):
    """A tree's files from the bytes the driver sent, parsed once each."""

    def __init__(self, shipped: dict[Path, bytes]) -> None:
        super().__init__()
        self._shipped = shipped
        self._parsed: dict[Path, Trajectory] = {}

    def get(self, path: Path) -> Trajectory:
        doc = self._parsed.get(path)
        if doc is None:
            doc = self._parsed[path] = parse_trajectory(self._shipped[path], str(path))
        return doc


class Batch(Generic[T, R]):
    """Items handed in within `interval` of each other go in one `send`; each caller gets
    its own item's answer (or the batch's exception)."""

    def __init__(self, send: Callable[[list[T]], Awaitable[list[R]]], interval: float) -> None:
        self._send = send
        self._interval = interval
        self._items: list[T] = []
        self._done: asyncio.Future[list[R]] | None = None
        self._sending: set[asyncio.Task[list[R]]] = set()

    async def __call__(self, item: T) -> R:
        if self._done is None:
            loop = asyncio.get_running_loop()
            self._done = loop.create_future()
            loop.call_later(self._interval, self._flush)
        index = len(self._items)
        self._items.append(item)
        answers = await asyncio.shield(self._done)
        return answers[index]

    def _flush(self) -> None:
        items, done = self._items, self._done
        self._items, self._done = [], None
        assert done is not None
        task = asyncio.ensure_future(self._send(items))
        self._sending.add(task)

        def settle(sent: asyncio.Task[list[R]]) -> None:
            self._sending.discard(sent)
            if sent.cancelled():
                done.cancel()
            elif sent.exception() is not None:
                done.set_exception(sent.exception())  # type: ignore[arg-type]
                done.exception()  # retrieved: every caller re-raises it
            else:
                done.set_result(sent.result())

        task.add_done_callback(settle)


@dataclass
class UnitClient(JudgeClient):
    """A judge client whose verdict store is the driver's desk (a Ray actor handle):
    looked up before each call, handed every verdict the judge gives."""

    desk: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self._lookups: Batch[str, Stored | None] = Batch(self._lookup, DESK_INTERVAL)
        self._puts: Batch[tuple[str, Stored], None] = Batch(self._put, DESK_INTERVAL)

    async def _lookup(self, keys: list[str]) -> list[Stored | None]:
        found: list[Stored | None] = await self.desk.lookup.remote(keys)
        return found

    async def _put(self, records: list[tuple[str, Stored]]) -> list[None]:
        await self.desk.put.remote(records)
        return [None] * len(records)

    async def judge(self, request: JudgeRequest) -> JudgeOutcome:
        if self.desk is None:
            return await super().judge(request)
        key = self.key(request)
        stored = await self._lookups(key)
        if stored is not None:
            verdict, tokens_in, tokens_out = stored
            if request.accepts(verdict):
                self.stats.store_hits += 1
                self.stats.verdicts += 1
                return JudgeOutcome(verdict, None, tokens_in, tokens_out, from_store=True)
            self.stats.store_rejected += 1
        outcome = await super().judge(request)
        if outcome.verdict is not None:
            await self._puts((key, (outcome.verdict, outcome.input_tokens, outcome.output_tokens)))
        return outcome


class ProgressReport:
    """A unit's steps judged so far, sent to the desk (the driver's progress bar reads them
    there, instead of moving only as units end): at once, or, within REPORT_INTERVAL of the
    last report, once that interval is over, with the count as it is then."""

    def __init__(self, desk: Any, unit: int) -> None:
        self._desk = desk
        self._unit = unit
        self._sent = -REPORT_INTERVAL
        self._due = False  # a report is waiting for the interval to end
        self.judged = 0

    def __call__(self, steps: int) -> None:
        self.judged += steps
        if self._desk is None or self._due:
            return
        wait = self._sent + REPORT_INTERVAL - time.monotonic()
        if wait <= 0:
            self._send()
        else:
            self._due = True
            asyncio.get_running_loop().call_later(wait, self._send)

    def _send(self) -> None:
        self._due = False
        self._sent = time.monotonic()
        self._desk.report.remote(self._unit, self.judged)  # not waited for


def score_unit(work: UnitWork, desk: Any, progress: Any = None) -> UnitResult:
    """Judge one unit's trees (the body of the Ray task); `desk` holds the verdict store
    (None: `--no-cache`), `progress` hears how far the unit is (the desk, as a rule)."""
    config = work.config
    provider = (
        LocalJudge(Path(work.local_judge[1]), server_url=work.local_judge[0])
        if work.local_judge is not None
        else judge_provider(config, work.api_key)
    )
    concurrency, timeout = work.concurrency, config.judge_timeout_seconds
    if provider.max_concurrency is not None:
        concurrency = min(concurrency, provider.max_concurrency)
    if provider.min_timeout is not None:
        timeout = max(timeout, provider.min_timeout)
    measured = RecordedMetrics()
    client = UnitClient(
        provider,
        concurrency=concurrency,
        timeout=timeout,
        max_attempts=config.judge_max_attempts,
        retry_budget=config.judge_retry_budget_seconds,
        initial_backoff=config.judge_initial_backoff_seconds,
        max_requests=config.max_judge_requests,
        ca_bundle=config.judge_ca_bundle,
        measures=measured,
        desk=desk,
    )
    job = ScoringJob(
        config,
        work.criteria,
        client,
        on_step=ProgressReport(progress, work.index),
        files=lambda: ShippedFiles(work.files),
    )

    async def go() -> tuple[list[TreeResult], Failure | None]:
        async with provider.serving(), client:
            return await job.judge_trees(work.roots)

    trees, failure = run_judging(go())
    return UnitResult(
        work.index,
        trees,
        failure,
        client.stats,
        job.accounting,
        measured,
        client.notes,
        provider.settled(),
    )
