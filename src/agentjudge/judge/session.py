"""A job's judge session: the one place that opens the verdict store, builds every judge
client and fits it to its provider, holds the provider serving, runs the job's event loop,
and closes the store.

`agentjudge score` (its dry run, the eval-hub adapter through it, each of its Ray workers)
and `agentjudge grade` all judge through a session:

    with JudgeSession(settings, use_store, store_path, on_note) as session:
        client = session.client(provider)          # before the loop, or inside it
        async def job():
            async with session.serving(client):
                ...                                 # the job's judge calls
        result = session.run(job())
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from opentelemetry.metrics import Meter

from agentjudge.judge.batch_ledger import BatchLedger
from agentjudge.judge.batching import BatchSettings
from agentjudge.judge.client import JudgeClient
from agentjudge.judge.defaults import CallLimits
from agentjudge.judge.price import Rates
from agentjudge.judge.providers import Provider
from agentjudge.judge.request import JudgeRequest
from agentjudge.judge.running import run_judging
from agentjudge.judge.store import Verdicts, VerdictStore
from agentjudge.judge.store_commits import LocalVerdicts
from agentjudge.judge.store_path import default_store_path
from agentjudge.judge.telemetry import Measures

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """What a job asks of its judge's client, before the provider has its say (see
    `JudgeSession.client`)."""

    concurrency: int
    calls: CallLimits  # the command's (judge/defaults.py), as its flags set them
    ca_bundle: str | None = None  # CA certificates (PEM) of an HTTPS judge
    max_requests: int | None = None
    metric_labels: dict[str, str] = field(default_factory=dict)  # on every metric point
    batch: BatchSettings | None = None  # batch mode (judge/batching.py); None: online
    rates: Rates | None = None  # the user's prices (--price-*), over the database's
    max_cost_usd: float | None = None  # --max-cost: no call started once spent


class JudgeSession:
    """A job's judge from start to end (a context manager): the verdict store, when
    `use_store`, is opened on entry (at `store_path`, else the default path; a damaged one
    set aside is said to `on_note`) and closed on the way out, also on an error, so a killed
    or failed job keeps every verdict it got. Without `create_store` (a dry run's look-ups)
    a store that does not exist yet is not made. A Ray worker's clients keep their verdicts
    in `verdicts` instead (the driver's desk), and the session opens no store."""

    def __init__(
        self,
        settings: JudgeSettings,
        use_store: bool,
        store_path: str | Path | None = None,
        on_note: Callable[[str], None] | None = None,
        on_wait: Callable[[str], None] | None = None,
        *,
        create_store: bool = True,
        verdicts: Verdicts | None = None,
    ) -> None:
        self.settings = settings
        self.use_store = use_store and verdicts is None
        self.store_path = Path(store_path or default_store_path())
        self.create_store = create_store
        self.on_note = on_note
        self.on_wait = on_wait  # what calls wait for while rate-limited (JudgeClient.on_wait)
        self.store: VerdictStore | None = None
        self.verdicts = verdicts  # where the clients' verdicts are looked up and kept

    def __enter__(self) -> JudgeSession:
        if self.use_store and (self.create_store or self.store_path.exists()):
            # told of a damaged store set aside, found so at opening or later in the run
            self.store = VerdictStore(self.store_path, self.on_note)
            self.verdicts = LocalVerdicts(self.store)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.store is not None:
            self.store.close()

    def stored(self, provider: Provider, request: JudgeRequest) -> bool:
        """Whether the session's verdict store already holds `provider`'s answer to
        `request` (without reading it)."""
        return self.store is not None and self.store.has(request.key(provider.identity))

    def client(
        self, provider: Provider, meter: Meter | None = None, measures: Measures | None = None
    ) -> JudgeClient:
        """A client of `provider` with the job's settings, fitted to what the provider can
        take: no more calls at once than its server usefully takes (more would only queue),
        and at least the time a call to it needs (the embedded judge's, on this machine's
        CPU). Its calls read and write the session's verdicts; they are measured by `meter`,
        or recorded in `measures` (a Ray worker's, sent to its driver)."""
        settings = self.settings
        calls = settings.calls
        concurrency, timeout = settings.concurrency, calls.timeout
        if provider.max_concurrency is not None:
            concurrency = min(concurrency, provider.max_concurrency)
        if provider.min_timeout is not None:
            timeout = max(timeout, provider.min_timeout)
        return JudgeClient(
            provider,
            concurrency=concurrency,
            timeout=timeout,
            max_attempts=calls.max_attempts,
            retry_budget=calls.retry_budget,
            initial_backoff=calls.initial_backoff,
            max_backoff=calls.max_backoff,
            max_requests=settings.max_requests,
            rates=settings.rates,
            max_cost_usd=settings.max_cost_usd,
            store=self.verdicts,
            meter=meter,
            measures=measures,
            metric_labels=settings.metric_labels,
            ca_bundle=settings.ca_bundle,
            on_note=self.on_note,
            on_wait=self.on_wait,
            batch=settings.batch,
            # the batch ids beside the verdicts, in the same file (judge/batch_ledger.py)
            batch_ledger=(
                BatchLedger(self.store.path)
                if settings.batch is not None and self.store is not None
                else None
            ),
        )

    @contextlib.asynccontextmanager
    async def serving(self, client: JudgeClient) -> AsyncIterator[JudgeClient]:
        """`client`, open for the job's calls, with its provider serving (an embedded
        judge's server, a project's own judge model) as long; both are closed on the way
        out."""
        async with client.provider.serving(), client:
            yield client

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """Run the job's event loop (`run_judging`) until `main` returns; its result."""
        return run_judging(main)
