"""What a Ray worker runs: one unit of whole trees, judged by the same per-tree code as a
local run (`ScoringJob.judge_trees`), with a judge client its own `JudgeSession` builds.

The trajectory files come with the unit (the driver read them: no shared filesystem is
needed), and the verdict store is reached through the driver's desk (`desk.py`): a
verdict it holds is used instead of a call, and each verdict the judge gives is handed to
it before the step is counted as judged.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjudge.atif import Node, parse_trajectory
from agentjudge.atif.models import Trajectory
from agentjudge.distributed.desk import DeskVerdicts
from agentjudge.judge import ClientStats
from agentjudge.judge.providers.local import LocalJudge
from agentjudge.judge.session import JudgeSession
from agentjudge.judge.telemetry import RecordedMetrics
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import Criteria
from agentjudge.scoring.job import Failure, ScoringJob
from agentjudge.scoring.judge_provider import judge_provider, judge_settings
from agentjudge.scoring.scored import Accounting, TreeResult
from agentjudge.scoring.steps import FileCache

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
    store_path: str | None = None  # the driver's verdict store (None: --no-cache)
    deadline: float | None = None  # the driver's job's (--judge-timeout), as time.time()


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


def score_unit(work: UnitWork, desk: Any) -> UnitResult:
    """Judge one unit's trees (the body of the Ray task); `desk` holds the verdict store
    (when `work.store_path` names one) and hears how far the unit is."""
    config = work.config
    provider = (
        LocalJudge(Path(work.local_judge[1]), server_url=work.local_judge[0])
        if work.local_judge is not None
        else judge_provider(config, work.api_key)
    )
    verdicts = DeskVerdicts(desk, work.store_path) if work.store_path is not None else None
    measured = RecordedMetrics()
    # no labels: the driver exports the calls it is sent, with its own
    settings = judge_settings(config, work.concurrency)
    with JudgeSession(settings, use_store=False, verdicts=verdicts) as session:
        client = session.client(provider, measures=measured)
        job = ScoringJob(
            config,
            work.criteria,
            client,
            on_step=ProgressReport(desk, work.index),
            files=lambda: ShippedFiles(work.files),
            deadline=work.deadline,
        )

        async def go() -> tuple[list[TreeResult], Failure | None]:
            async with session.serving(client):
                return await job.judge_trees(work.roots)

        trees, failure = session.run(go())
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
