"""Batch mode: a judge's requests sent through its provider's batch API, at half price, to
be answered within the provider's window (docs/judge.md, "Batch mode").

The client hands each request it would send online to `Batcher.outcome`, with the body the
provider built for it. Requests that come within `settle_seconds` of each other go into one
batch, cut at the provider's limits of requests and bytes. A batch the provider accepted is
kept at once in the ledger (`judge/batch_ledger.py`, in the verdict store's file) with the
keys of its requests, then polled every `poll_seconds` until it ends; its results answer
the requests waiting on it. A request that a re-run (the same command after a kill) finds
in the ledger waits on that batch again, submitted by the earlier run, and is not submitted
again. What to do with a request its batch did not answer (expired, canceled, a transient
error) is the client's: another batch, or an online call (`fallback`).

The job's requests come in waves, each after the answers of the last: the step scores,
then the categorizations of the low ones (a second batch), then the picks of where a tree
went wrong (a third).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import httpx

from agentjudge.errors import JudgeError, UsageError
from agentjudge.judge.batch_ledger import BatchLedger
from agentjudge.judge.providers.anthropic import Anthropic
from agentjudge.judge.providers.anthropic_batches import AnthropicBatches
from agentjudge.judge.providers.base import Provider
from agentjudge.judge.providers.batches import (
    NOT_RETRIED_IF_UNKNOWN,
    BatchApi,
    BatchGone,
    BatchState,
    Outcome,
    Send,
    Unfinished,
)
from agentjudge.judge.providers.openai import OpenAI
from agentjudge.judge.providers.openai_batches import OpenAIBatches
from agentjudge.judge.providers.openai_compatible import OpenAICompatible
from agentjudge.judge.retry import Retryable, RetryPolicy, retried

Fallback = Literal["batch", "online"]
# polls of one batch that may fail in a row (each after its own retries) before its
# requests fail
MAX_POLL_FAILURES = 5
# creations of one batch whose answers were lost, each looked for before the next
SUBMIT_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class BatchSettings:
    """How a job batches: seconds between polls of a batch; what a request its batches did
    not answer becomes after `rounds` batches (`batch`: an error; `online`: one online
    call, at full price); seconds without a new request before a batch is submitted; seconds
    between the lines that say where a waiting run stands."""

    poll_seconds: float = 30.0
    fallback: Fallback = "batch"
    rounds: int = 3
    settle_seconds: float = 0.5
    report_seconds: float = 60.0


class Batcher:
    """The batches of one judge in one job: submitted, polled, read (see the module)."""

    def __init__(
        self,
        api: BatchApi,
        ledger: BatchLedger,
        judge: str,
        send: Send,
        settings: BatchSettings,
        on_progress: Callable[[str], None] | None = None,
    ) -> None:
        self.api = api
        self.ledger = ledger
        self.judge = judge  # the identity of the judge whose batches these are
        self.settings = settings
        self._send = send
        self._on_progress = on_progress
        self._pending: list[tuple[str, bytes]] = []
        self._pending_bytes = 0
        self._group: asyncio.Future[str] | None = None  # the pending requests' batch id
        self._timer: asyncio.TimerHandle | None = None
        self._pollers: dict[str, asyncio.Task[None]] = {}
        self._submitting: set[asyncio.Task[None]] = set()
        self._searches: dict[str, asyncio.Future[str | None]] = {}  # by submission token
        self._results: dict[str, dict[str, Outcome]] = {}  # read this run, by custom id
        self._states: dict[str, BatchState] = {}
        self._resumed: set[str] = set()
        self.submitted = 0  # batches this run submitted
        self.done = 0  # batches whose results this run read
        self._said = ""
        self._said_at = 0.0

    async def outcome(self, key: str, built: httpx.Request, reuse: bool = True) -> Outcome:
        """What a batch made of the request `built` (its store key `key`): the batch an
        earlier run put it in when `reuse` and the ledger has one, else a new one."""
        if reuse:
            found = self.ledger.batch_of(key)
            batch_id = found[0] if found is not None else await self._recovered(key)
            if batch_id is not None:
                if batch_id not in self._pollers:
                    self._resumed.add(batch_id)
                got = await self._result(key, batch_id)
                if got is not None:
                    return got
        batch_id = await self._enqueue(key, self.api.entry(key, built))
        got = await self._result(key, batch_id)
        return got or Unfinished("batch_errored", f"batch {batch_id} reported no result for it")

    async def _recovered(self, key: str) -> str | None:
        """The batch `key` went into when an earlier run was killed between asking the
        provider and keeping the batch's id, if the provider can tell (else None: the
        request is submitted again)."""
        found = self.ledger.submission_of(key)
        if found is None:
            return None
        token, started = found
        search = self._searches.get(token)
        if search is None:
            search = self._searches[token] = asyncio.ensure_future(self._find(token, started))
        return await asyncio.shield(search)

    async def _find(self, token: str, started: float) -> str | None:
        try:
            batch_id = await self.api.find(self._send, token, started)
        except BatchGone:  # a server that lists no batches: it cannot tell
            batch_id = None
        if batch_id is None:
            self.ledger.forget_submission(token)
            return None
        self.ledger.add(batch_id, self.judge, self.ledger.submitted_keys(token), token)
        return batch_id

    async def _result(self, key: str, batch_id: str) -> Outcome | None:
        """`key`'s result in `batch_id`, once that batch has ended; None when the provider
        no longer has the batch or gave no result for it (it is submitted again)."""
        poller = self._pollers.get(batch_id)
        if poller is None:
            poller = self._pollers[batch_id] = asyncio.ensure_future(self._watch(batch_id))
        await asyncio.shield(poller)
        return self._results.get(batch_id, {}).pop(key, None)

    def _enqueue(self, key: str, entry: bytes) -> asyncio.Future[str]:
        api = self.api
        size = api.size(entry)
        if self._pending and (
            len(self._pending) >= api.max_requests
            or self._pending_bytes + size + api.overhead > api.max_bytes
        ):
            self._flush()
        loop = asyncio.get_running_loop()
        if self._group is None:
            self._group = loop.create_future()
        self._pending.append((key, entry))
        self._pending_bytes += size
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_later(self.settings.settle_seconds, self._flush)
        return self._group

    def _flush(self) -> None:
        """Submit the requests gathered so far as one batch."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending or self._group is None:
            return
        pending, group = self._pending, self._group
        self._pending, self._pending_bytes, self._group = [], 0, None
        task = asyncio.ensure_future(self._submit(pending, group))
        self._submitting.add(task)  # held until it ends
        task.add_done_callback(self._submitting.discard)

    async def _submit(self, pending: list[tuple[str, bytes]], group: asyncio.Future[str]) -> None:
        keys = [key for key, _ in pending]
        token = uuid.uuid4().hex
        try:
            # kept before the provider is asked: a run killed before it learns the batch's
            # id finds it by the token (where the API keeps one: OpenAI's metadata)
            self.ledger.submitting(token, self.judge, keys)
            batch_id = await self._created(pending, token)
        except Exception as exc:
            # every waiter hears why (a failure left unset would keep them waiting forever)
            with contextlib.suppress(sqlite3.Error):
                self.ledger.forget_submission(token)
            group.set_exception(_as_judge_error(exc))
            group.exception()  # retrieved: every waiter raises it
            return
        try:
            # kept before anything else: a kill from here on never submits these again
            self.ledger.add(batch_id, self.judge, keys, token)
        except sqlite3.Error as exc:
            # the provider has the batch (and bills it): its answers are still read in this
            # run; the submission's token stays, for a later run to find it by where it can
            self._say(
                f"batch {batch_id}: the verdict store could not keep its id ({exc}); a run "
                "stopped before its answers are read may submit its requests again"
            )
        self.submitted += 1
        self._pollers[batch_id] = asyncio.ensure_future(self._watch(batch_id))
        group.set_result(batch_id)
        self._report()

    async def _created(self, pending: list[tuple[str, bytes]], token: str) -> str:
        """The id of the batch of `pending`, submitted under `token`. A creation whose
        answer was lost (a timeout, a dropped connection, a 5xx) may have created the batch:
        where the API can tell by the token, the batch is looked for before the creation is
        sent again (at most SUBMIT_ATTEMPTS times), so it is never created twice."""
        started = time.time()
        entries = [entry for _, entry in pending]
        for attempt in range(1, SUBMIT_ATTEMPTS + 1):
            try:
                return await self.api.submit(self._send, entries, token)
            except JudgeError as exc:
                if not (self.api.findable and _transient(exc.kind)):
                    raise
                failure = exc
            self._say(
                f"a batch's creation got no answer ({failure.kind}): looking for it by its "
                "token" + (" before creating it again" if attempt < SUBMIT_ATTEMPTS else "")
            )
            found = await self.api.find(self._send, token, started)
            if found is not None:
                return found
            if attempt < SUBMIT_ATTEMPTS:
                await asyncio.sleep(self.settings.poll_seconds)
        raise failure

    async def _watch(self, batch_id: str) -> None:
        """Poll `batch_id` until it ends, then read its results."""
        failures = 0
        try:
            while True:
                try:
                    state = await self.api.state(self._send, batch_id)
                except BatchGone:
                    raise
                except JudgeError as exc:
                    # the batch goes on at the provider: a poll that failed (its own
                    # retries spent) is asked again next time, a few times in a row
                    failures += 1
                    if failures >= MAX_POLL_FAILURES or not _transient(exc.kind):
                        raise
                    self._say(f"batch {batch_id}: a poll failed ({exc.kind}): asking again")
                    await asyncio.sleep(self.settings.poll_seconds)
                    continue
                failures = 0
                self._states[batch_id] = state
                if state.ended:
                    break
                self._report()
                await asyncio.sleep(self.settings.poll_seconds)
            results = await self.api.results(self._send, state) if state.results else {}
        except BatchGone:
            self._results[batch_id] = {}
            with contextlib.suppress(sqlite3.Error):  # as below
                self.ledger.ended(batch_id)
            return
        if state.message:  # failed as a whole: each of its requests says why
            for key in self.ledger.keys_of(batch_id):
                results.setdefault(key, Unfinished("batch_failed", state.message))
        self._results[batch_id] = results
        # left open when the store cannot say so: a later run only reads it again
        with contextlib.suppress(sqlite3.Error):
            self.ledger.ended(batch_id)
        self.done += 1
        self._report()

    def _say(self, line: str) -> None:
        if self._on_progress is not None:
            self._on_progress(line)

    def _report(self) -> None:
        """Say where the job's batches stand: when that changes, and every
        `report_seconds` while the run waits (with each waiting batch's counts)."""
        if self._on_progress is None:
            return
        waiting = [s for s in self._states.values() if not s.ended]
        line = f"batches: {self.submitted} submitted, {len(waiting)} in progress, {self.done} done"
        if self._resumed:
            line += f" ({len(self._resumed)} submitted by an earlier run, polled again)"
        now = time.monotonic()
        if line == self._said and (
            not waiting or now - self._said_at < self.settings.report_seconds
        ):
            return
        shown = line
        if line == self._said:  # still waiting: where each batch stands
            for state in waiting:
                counts = ", ".join(f"{k} {v}" for k, v in state.counts.items())
                shown += f"; {state.id} {state.status}" + (f" ({counts})" if counts else "")
        self._said, self._said_at = line, now
        self._on_progress(shown)

    async def aclose(self) -> None:
        """Stop polling (the batches go on at the provider: the ledger has them), saying
        which batches are left waiting: a stopped run (Ctrl-C, a cap) does not stop them."""
        if self._timer is not None:
            self._timer.cancel()
        left = [batch_id for batch_id, task in self._pollers.items() if not task.done()]
        if left:
            self._say(
                f"{len(left)} batch(es) not ended go on at the provider, billed for what they "
                f"answer: {', '.join(left)}; the same command again polls them and submits "
                "nothing twice (or cancel them with the provider's API)"
            )
        tasks = [*self._pollers.values(), *self._submitting]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.ledger.close()


def _as_judge_error(exc: Exception) -> Exception:
    """What the requests of a batch that could not be submitted fail with: a `JudgeError`
    for a failure of the provider, the disk or the verdict store; anything else (a bug)
    as it is."""
    if isinstance(exc, JudgeError):
        return exc
    if isinstance(exc, OSError | sqlite3.Error):
        return JudgeError("batch_error", str(exc))
    return exc


def _transient(kind: str) -> bool:
    """Whether a failure of this kind may pass: a timeout, a dropped connection, 429, 5xx."""
    return kind in ("timeout", "transport_error", "http_429") or kind.startswith("http_5")


def batch_api_for(provider: Provider) -> BatchApi | None:
    """The batch API of `provider`'s server: OpenAI's Batch API for the `openai` judge, and
    for `openai-compatible` (a server that serves it beside its chat completions: an
    eval-hub job's model); Anthropic's Message Batches for `anthropic`; None for the others
    (Azure's batches need a Global-Batch deployment and paths of their own, Gemini's batch
    API is another: not supported yet)."""
    if type(provider) in (OpenAI, OpenAICompatible):
        assert isinstance(provider, OpenAICompatible)
        return OpenAIBatches(provider)
    if isinstance(provider, Anthropic):
        return AnthropicBatches(provider)
    return None


def required_batch_api(provider: Provider) -> BatchApi:
    """`provider`'s batch API (`batch_api_for`), or the `UsageError` that refuses `--batch`
    for a judge without one: a real run and a dry run refuse it alike, before any call."""
    api = batch_api_for(provider)
    if api is None:
        raise UsageError(
            f"--batch: the {provider.name} judge has no batch API that agentjudge "
            "speaks: use the openai, anthropic or openai-compatible judge, or drop --batch"
        )
    return api


def batch_sender(
    transport: httpx.AsyncBaseTransport, policy: Callable[[], RetryPolicy], timeout: float
) -> Send:
    """How a batch API's requests are sent: through `transport`, each under `timeout`
    seconds, retried on 429, 5xx and transport errors as `policy` says."""

    async def send(request: httpx.Request) -> tuple[int, bytes]:
        request.read()  # a multipart upload's body, made once: a retry sends the same bytes

        async def attempt() -> tuple[int, bytes]:
            try:
                async with asyncio.timeout(timeout):
                    response = await transport.handle_async_request(request)
                    body = await response.aread()
            except (httpx.TimeoutException, TimeoutError):
                raise unless_unknown(Retryable("timeout")) from None
            except httpx.TransportError as exc:
                raise unless_unknown(Retryable("transport_error", message=str(exc))) from None
            status = response.status_code
            if status == 429:
                raise Retryable("http_429", rate_limited=True)
            if status >= 500:
                raise unless_unknown(Retryable(f"http_{status}"))
            return status, body

        def unless_unknown(failure: Retryable) -> Exception:
            # a failure that leaves the request's fate unknown: the caller looks first
            if request.extensions.get(NOT_RETRIED_IF_UNKNOWN):
                return JudgeError(failure.kind, failure.message)
            return failure

        return await retried(attempt, policy, lambda: None)

    return send
