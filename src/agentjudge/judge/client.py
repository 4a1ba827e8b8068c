"""The judge client: the one place that owns retries, backoff, concurrency, caps and accounting.

Each has its own module: the retry policy (`judge/retry.py`), the concurrency limit
(`judge/limiter.py`), the counters (`judge/stats.py`); its verdicts are looked up and kept
here, in a `Verdicts` (`judge/store.py`: the local store, or a Ray worker's desk).
Providers only build requests and read responses. One httpx transport (one connection
pool) serves every call; tests inject their own (`httpx.MockTransport`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import httpx
from opentelemetry.metrics import Meter

from agentjudge.errors import JudgeError, ProtocolError, UsageError
from agentjudge.judge.batch_ledger import BatchLedger
from agentjudge.judge.batching import Batcher, BatchSettings, batch_sender, required_batch_api
from agentjudge.judge.defaults import SCORE_CALLS
from agentjudge.judge.limiter import AdaptiveLimit, Outcome
from agentjudge.judge.price import COST_CAP, SPENDING, Pricer, Rates
from agentjudge.judge.providers import Answer, Provider
from agentjudge.judge.providers.batches import Unfinished
from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.judge.retry import Retryable, RetryPolicy, retried, retry_after
from agentjudge.judge.secrets import redact
from agentjudge.judge.stats import ClientStats
from agentjudge.judge.store import Verdicts
from agentjudge.judge.telemetry import JudgeMetrics, Measures, RecordedMetrics
from agentjudge.judge.transport import AiohttpTransport, TLSProblem, tls_context
from agentjudge.judge.verdict import Verdict, without_secrets

MAX_BODY_BYTES = 64 * 1024
# a batch API's results file holds a whole batch's answers (at most ~200-256 MB of requests)
MAX_BATCH_BODY_BYTES = 1 << 31
# what a batched request is billed of its online price: OpenAI's Batch API and Anthropic's
# Message Batches both bill half (docs/judge.md, "Batch mode")
BATCH_PRICE = 0.5
PROTOCOL_ATTEMPTS = 2  # a protocol error is retried once with the same request, then surfaced
# Times one call may be sent again because the provider adapted to a refusal (each
# adaptation moves the provider one step along a short list, so a few suffice).
MAX_ADAPTATIONS = 8
# Unusable answers that the same request would get again: not retried.
FINAL_PROTOCOL_ERRORS = frozenset({"answer_truncated", "judge_refused"})
# A 200 that is no completion of the API at all (not JSON, or JSON of another shape): a
# proxy or a server failing mid-answer, not the model's verdict, so it is met as a 5xx is
# (retried with backoff, the failures counted against `max_attempts`, a second round).
GARBLED_ANSWERS = frozenset({"empty_body", "malformed_completion"})
PREFLIGHT_PROMPT = 'Reply with this JSON object only: {"reasoning": "ready", "score": 1}'
PREFLIGHT_SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "score": {"type": "number", "enum": [1]}},
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class JudgeOutcome:
    """A verdict, or the fixed kind of error that prevented one (never both)."""

    verdict: Verdict | None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    from_store: bool = False  # answered by the verdict store, not by the judge
    protocol: bool = False  # the error was an unusable answer (not a failed call)
    message: str | None = None  # the server's own explanation of a refused call (redacted)
    # an unusable answer as graph-agents-cli's runner words it (`ProtocolError.reply_error`,
    # redacted: it quotes the reply)
    reply_error: str | None = None

    @property
    def explained(self) -> str | None:
        """The error with the server's explanation: `http_400: Unsupported parameter...`."""
        if self.error is None:
            return None
        return f"{self.error}: {self.message}" if self.message else self.error


class _Refused(Exception):
    """A refusal the provider adapted to: the same call goes again, as requests are now built."""


@dataclass
class JudgeClient:
    """Send `JudgeRequest`s to a provider with every safeguard a large job needs."""

    provider: Provider
    concurrency: int = 16
    # a bare client's limits are `score`'s (judge/defaults.py)
    timeout: float = SCORE_CALLS.timeout
    max_attempts: int = SCORE_CALLS.max_attempts
    retry_budget: float = SCORE_CALLS.retry_budget
    initial_backoff: float = SCORE_CALLS.initial_backoff
    max_backoff: float = SCORE_CALLS.max_backoff
    max_requests: int | None = None
    rates: Rates | None = None  # the user's prices (--price-*), over the price database's
    # no call is started once the calls' prices add up to this (USD; --max-cost)
    max_cost_usd: float | None = None
    transport: httpx.AsyncBaseTransport | None = None
    store: Verdicts | None = None  # where verdicts are looked up and kept
    meter: Meter | None = None
    metric_labels: dict[str, str] = field(default_factory=dict)  # on every metric point
    # where calls are measured instead of `meter` (a Ray worker's client records them)
    measures: Measures | None = None
    ca_bundle: str | None = None  # CA certificates for the judge's TLS (else the system's)
    stats: ClientStats = field(default_factory=ClientStats)
    # what the provider adapted to, each said once (the console shows them as they come)
    notes: list[str] = field(default_factory=list)
    on_note: Callable[[str], None] | None = None
    # told, while the judge keeps refusing calls with rate limits, what they wait for: once
    # a call has waited `wait_note_after` seconds (or is asked to wait that long), then at
    # most every `wait_note_every` seconds (a console line, not a kept note)
    on_wait: Callable[[str], None] | None = None
    wait_note_after: float = 10.0
    wait_note_every: float = 30.0
    # batch mode: requests go through the provider's batch API, their batch ids kept in
    # `batch_ledger` (docs/judge.md, "Batch mode"); None: every request is a call
    batch: BatchSettings | None = None
    batch_ledger: BatchLedger | None = None

    def __post_init__(self) -> None:
        self.pricer = Pricer(self.provider.name, self.provider.model, self.rates)
        self._limit = AdaptiveLimit(self.concurrency, self.provider.keeps_last_prompt)
        # The transport is the one connection pool. aiohttp's keeps per-call cost flat as
        # concurrency grows (httpcore's pool scans every connection on every request).
        # httpx.AsyncClient's redirects, cookies and auth are not needed, so requests go
        # straight to the transport, each under one hard deadline.
        self._transport = (
            self.transport
            or self.provider.transport()
            # room for the calls the limit sets aside as overdue (see AdaptiveLimit)
            or AiohttpTransport(2 * self.concurrency, MAX_BODY_BYTES, tls_context(self.ca_bundle))
        )
        self._timeouts = {"timeout": httpx.Timeout(self.timeout).as_dict()}
        self._metrics = JudgeMetrics(self.meter, self.metric_labels)
        self._measures: Measures = self.measures or self._metrics
        self._in_flight: dict[str, asyncio.Future[JudgeOutcome]] = {}
        self._secrets = self.provider.secrets
        self._next_wait_note = 0.0
        self.batcher = self._batcher()

    def _batcher(self) -> Batcher | None:
        if self.batch is None:
            return None
        api = required_batch_api(self.provider)
        if self.batch_ledger is None:
            raise UsageError(
                "--batch keeps its batch ids in the verdict store, so that a re-run polls the "
                "same batches: drop --no-cache"
            )
        # its own pool, read without the 64 KiB cap: a batch's results file is large
        self._batch_transport = self.transport or AiohttpTransport(
            4, MAX_BATCH_BODY_BYTES, tls_context(self.ca_bundle)
        )
        send = batch_sender(self._batch_transport, self._retry_policy, self.timeout)
        return Batcher(
            api, self.batch_ledger, self.provider.identity, send, self.batch, self.on_wait
        )

    async def aclose(self) -> None:
        if self.batcher is not None:
            await self.batcher.aclose()
            if self._batch_transport is not self._transport:
                await self._batch_transport.aclose()
        await self._transport.aclose()

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def add_measured(self, measured: RecordedMetrics) -> None:
        """Calls measured by another client (a Ray worker's) added to this client's
        metrics, as if it had made them."""
        measured.replay(self._metrics)

    def key(self, request: JudgeRequest) -> str:
        """The verdict-store key of `request` for this judge (provider, model, server)."""
        return request.key(self.provider.identity)

    async def judge(self, request: JudgeRequest) -> JudgeOutcome:
        """One verdict for `request`: from the store if it has it, else from the judge,
        retried on 429/5xx/transport errors and once on a protocol error. A failure comes
        back as `JudgeOutcome.error`, never as a score. Identical requests in flight at the
        same time share one call."""
        key = self.key(request)
        if self.store is not None:
            found = await self.store.get(key)
            if isinstance(found, tuple) and request.accepts(found[0]):
                self.stats.store_hits += 1
                self.stats.verdicts += 1
                verdict, tokens_in, tokens_out = found
                # a store written before verdicts were redacted may hold a key
                verdict = without_secrets(verdict, self._secrets)
                return JudgeOutcome(verdict, None, tokens_in, tokens_out, from_store=True)
            if found is not None:
                self._store_rejected(self.store)
        pending = self._in_flight.get(key)
        if pending is not None:
            shared = await asyncio.shield(pending)
            self.stats.verdicts += shared.verdict is not None
            return shared
        future: asyncio.Future[JudgeOutcome] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            outcome = await self._judge(request)
            if outcome.verdict is not None:
                self.stats.verdicts += 1
                if self.store is not None:
                    kept = (outcome.verdict, outcome.input_tokens, outcome.output_tokens)
                    self.store.put(key, kept)
                    await self.store.flush()
            future.set_result(outcome)
            return outcome
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: sharers re-raise it, nobody logs it as lost
            raise
        finally:
            del self._in_flight[key]

    async def preflight(self) -> None:
        """One small call the judge must answer before a job's real calls: an unreachable
        server, a refused key or an unknown model raises `JudgeError` (with the server's
        explanation) before anything is judged. It goes the way every call goes, so a
        server's refusals are adapted to here, once, too. Its answer is not kept."""
        request = JudgeRequest(
            (Message("user", PREFLIGHT_PROMPT),),
            "agentjudge-preflight-v1",
            response_schema=PREFLIGHT_SCHEMA,
            max_tokens=32,
            answer="scaled",
            scale=1.0,
        )
        # answered: whatever it said, the judge can be reached and is willing
        with contextlib.suppress(ProtocolError):
            await self._send(request)

    async def _judge(self, request: JudgeRequest) -> JudgeOutcome:
        kind, detail, reply_error = "protocol_error", "", ""
        for attempt in range(PROTOCOL_ATTEMPTS):
            try:
                if self.batcher is None:
                    answer = await self._send(request)
                else:  # a second try is a new request: not the answer of the same batch
                    answer = await self._batched(self.batcher, request, reuse=attempt == 0)
                # redacted here, once: everything after (the store, the console, the
                # results, the report) sees the verdict as it is kept
                verdict = without_secrets(_verdict(request, answer), self._secrets)
            except ProtocolError as exc:
                self.stats.protocol_errors += 1
                self._measures.protocol_error(exc.kind)
                kind, detail, reply_error = exc.kind, exc.detail, exc.reply_error
                if kind in FINAL_PROTOCOL_ERRORS:
                    break
                continue
            except JudgeError as exc:
                return JudgeOutcome(None, exc.kind, message=exc.detail or None)
            return JudgeOutcome(verdict, None, answer.input_tokens, answer.output_tokens)
        # the detail is ours (the number refused); the judge's own text is only ever quoted
        # in graph-agents-cli's words, with any secret it echoes masked
        said = redact(reply_error, self._secrets) or None
        return JudgeOutcome(None, kind, protocol=True, message=detail or None, reply_error=said)

    async def _send(self, request: JudgeRequest) -> Answer:
        """One answer, sent again (with no attempt spent) each time the provider adapts to
        a refusal, at most MAX_ADAPTATIONS times."""
        for _ in range(MAX_ADAPTATIONS):
            try:
                return await retried(
                    partial(self._attempt, request), self._retry_policy, self._retry, self._waiting
                )
            except _Refused:
                continue
        raise JudgeError("adaptations_exhausted")

    async def _batched(self, batcher: Batcher, request: JudgeRequest, reuse: bool) -> Answer:
        """One answer through batches: a request its batch did not answer (expired,
        canceled, a 429/5xx, a garbled answer) goes into a later batch, at most
        `rounds` batches in all, then online if the job says so, else it is an error. A
        refusal the provider adapts to spends no round (at most MAX_ADAPTATIONS)."""
        key = self.key(request)
        failure = JudgeError("batch_errored")
        adapted = 0
        for round_ in range(batcher.settings.rounds + MAX_ADAPTATIONS):
            if round_ - adapted >= batcher.settings.rounds:
                break
            over = self._over_a_cap()  # a batch bills what it answers only once it ends
            if over is not None:
                raise over
            built = self.provider.build(request)
            self.stats.calls += 1
            self._measures.call()
            started = time.perf_counter()
            outcome = await batcher.outcome(key, built, reuse and round_ == 0)
            # a batched call's latency: from its batching to its answer (minutes, hours)
            elapsed = time.perf_counter() - started
            self.stats.latency_seconds += elapsed
            self._measures.latency(elapsed * 1000)
            if isinstance(outcome, Unfinished):
                self._count_error(outcome.kind)
                failure = JudgeError(outcome.kind, outcome.message)
                continue
            if not 200 <= outcome.status < 300:
                kind = f"http_{outcome.status}"
                self._count_error(kind)
                message = self.provider.error_message(outcome.body)
                failure = JudgeError(kind, message)
                # a refusal the provider adapts to, as online: rebuilt for a later batch
                note = self.provider.adapt(outcome.status, message, built)
                if note is not None and adapted < MAX_ADAPTATIONS:
                    adapted += 1
                    if note:
                        self._note(f"{note} ({kind}: {message})" if message else note)
                    continue
                if self.provider.should_retry(outcome.status) == "no":
                    raise failure
                continue
            try:
                answer = self.provider.parse(outcome.status, outcome.body)
            except ProtocolError as exc:
                if exc.kind not in GARBLED_ANSWERS:
                    self._count_success(built)
                    raise
                self._count_error(exc.kind)
                failure = JudgeError(exc.kind)
                continue
            self._count_success(built)
            self._account(answer, BATCH_PRICE)
            return answer
        if batcher.settings.fallback == "online":
            self.stats.batch_fallbacks += 1
            return await self._send(request)
        raise failure

    def _retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            self.max_attempts, self.retry_budget, self.initial_backoff, self.max_backoff
        )

    def _retry(self) -> None:
        self.stats.retries += 1

    def _waiting(self, failure: Retryable, policy: RetryPolicy) -> None:
        """Say, now and then, that calls are waiting out the judge's rate limits."""
        if self.on_wait is None or not failure.rate_limited:
            return
        if max(policy.limited_for, policy.delay) < self.wait_note_after:
            return
        now = time.monotonic()
        if now < self._next_wait_note:
            return
        self._next_wait_note = now + self.wait_note_every
        self.on_wait(
            f"judge {self.provider.name}/{self.provider.model} is rate-limiting calls "
            f"({failure.kind}, for {policy.limited_for:.0f} s): waiting {policy.delay:.1f} s "
            f"to ask again; a call waits {policy.retry_budget:.0f} s at most"
        )

    def _over_a_cap(self) -> JudgeError | None:
        """The error a call may not start with: `max_judge_requests` or `--max-cost` reached
        (online and batched calls alike)."""
        if self.max_requests is not None and self.stats.calls >= self.max_requests:
            return JudgeError("request_cap", f"max_judge_requests={self.max_requests} reached")
        if self.max_cost_usd is not None and self.pricer.reason is not None:
            # the calls lost their price mid-run: a budget is never checked against a guess
            return JudgeError(
                COST_CAP,
                f"--max-cost {self.max_cost_usd:g} USD cannot be checked: {self.pricer.reason}",
            )
        if self.max_cost_usd is not None and self.stats.cost_usd >= self.max_cost_usd:
            return JudgeError(
                COST_CAP,
                f"--max-cost {self.max_cost_usd:g} USD reached "
                f"(${self.stats.cost_usd:.6f} spent by the calls made)",
            )
        return None

    async def _attempt(self, request: JudgeRequest) -> Answer:
        key = "\n".join(m.content for m in request.messages) if self._limit.prefix_order else ""
        call = await self._limit.start(key)
        over = self._over_a_cap()
        if over is not None:
            self._limit.release("other", call)
            raise over
        outcome: Outcome = "other"
        started = time.perf_counter()
        self.stats.calls += 1
        self._measures.call()
        http_request = self.provider.build(request)
        http_request.extensions.update(self._timeouts)
        try:
            async with asyncio.timeout(self.timeout):
                response = await self._transport.handle_async_request(http_request)
                try:
                    body = await _read_capped(response)
                finally:
                    await response.aclose()
            status = response.status_code
            if 200 <= status < 300:
                outcome = "ok"
            elif status == 429:
                outcome = "rate_limited"
        except (httpx.TimeoutException, TimeoutError):
            self._count_error("timeout")
            raise Retryable("timeout") from None
        except TLSProblem as exc:
            self._count_error("tls_error")
            raise JudgeError("tls_error", str(exc)) from None
        except httpx.TransportError as exc:
            self._count_error("transport_error")
            said = str(exc) if str(exc) != "cannot connect" else ""
            raise Retryable("transport_error", message=said) from None
        finally:
            elapsed = time.perf_counter() - started
            self.stats.latency_seconds += elapsed
            self._measures.latency(elapsed * 1000)
            self._limit.release(outcome, call, elapsed)
        if outcome != "ok":
            kind = f"http_{status}"
            self._count_error(kind)
            message = self.provider.error_message(body or b"")
            # before any retry: some servers refuse a request they cannot parse with a 500
            # (llama-cpp-python's), which sending it again would not change
            note = self.provider.adapt(status, message, http_request)
            if note is not None:
                if note:
                    self._note(f"{note} ({kind}: {message})" if message else f"{note} ({kind})")
                raise _Refused(kind)
            if self.provider.should_retry(status) == "no":
                raise JudgeError(kind, message)
            wait = retry_after(response.headers)
            # a 503 that says when to come back is a rate limit as much as a 429 is
            limited = status == 429 or (status == 503 and wait is not None)
            raise Retryable(kind, wait, message, rate_limited=limited)
        if body is None:
            self._count_success(http_request)
            raise ProtocolError("body_too_large")
        try:
            answer = self.provider.parse(status, body)
        except ProtocolError as exc:
            if exc.kind not in GARBLED_ANSWERS:
                self._count_success(http_request)
                raise
            self._count_error(exc.kind)
            raise Retryable(exc.kind) from None
        self._count_success(http_request)
        self._account(answer)
        return answer

    def _account(self, answer: Answer, share: float = 1.0) -> None:
        """Count an answer's tokens and cost (`share`: the share of the online price it is
        billed, half in a batch)."""
        self.stats.input_tokens += answer.input_tokens
        self.stats.output_tokens += answer.output_tokens
        self.stats.cache_read_tokens += answer.cache_read_tokens
        self.stats.cache_write_tokens += answer.cache_write_tokens
        self.stats.reasoning_tokens += answer.reasoning_tokens
        usd = share * self.pricer.price(
            answer.input_tokens,
            answer.cache_read_tokens,
            answer.cache_write_tokens,
            answer.output_tokens,
        )
        self.stats.cost_usd += usd
        spending = SPENDING.get()
        if spending is not None:  # the root whose tree this call judges (scoring/job.py)
            spending.usd += usd
        self._measures.tokens(answer.input_tokens, answer.output_tokens)

    def _store_rejected(self, store: Verdicts) -> None:
        self.stats.store_rejected += 1
        if self.stats.store_rejected == 1:  # said once; the results count them all
            self._say(
                f"verdict store {store.where}: a stored verdict could not be used (unreadable, "
                "or not an answer the judge could give): it is judged again, as is every "
                "other such one (counted in the results as judge.store_rejected)"
            )

    def _say(self, line: str) -> None:
        self.notes.append(line)
        if self.on_note is not None:
            self.on_note(line)

    def _note(self, text: str) -> None:
        self._say(f"judge {self.provider.name}/{self.provider.model}: {text}")

    def _count_success(self, built: httpx.Request) -> None:
        self.stats.successes += 1
        self._measures.success()
        note = self.provider.accepted(built)
        if note:
            self._note(note)

    def _count_error(self, kind: str) -> None:
        self.stats.errors += 1
        self._measures.error(kind)


def _verdict(request: JudgeRequest, answer: Answer) -> Verdict:
    """The verdict in `answer`; a refusal, or an answer cut off by its token budget that
    does not parse, is a protocol error of its own kind."""
    if answer.stop == "refused":
        raise ProtocolError("judge_refused")
    try:
        return request.parse(answer.content, answer.tokens)
    except ProtocolError:
        if answer.stop == "truncated":
            raise ProtocolError("answer_truncated") from None
        raise


async def _read_capped(response: httpx.Response) -> bytes | None:
    """The body, or None when it passes MAX_BODY_BYTES (reading stops there)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
