"""A scriptable judge server for tests, benchmarks and plumbing checks.

It serves over real HTTP on 127.0.0.1 and can be told to be slow, to be full (429 with
Retry-After beyond a concurrency capacity), to fail (429/500/503/529, dropped connections,
hangs, a 200 that is no completion at all: "garbage") and to answer badly (non-JSON, no
score, a score out of range or a bool, an empty 200, a body over 64 KiB). Its verdicts are
scripted by markers in the request (`agentjudge.testing.scripted`), so tests know the
right answer.

By default it speaks a permissive OpenAI-compatible `/v1/chat/completions` and
`/v1/models`. Told to mimic an API (`mimic="openai"`, "azure", "anthropic", "gemini",
"vllm", "ollama"), it serves that API's paths, refuses requests where that API documents a
refusal, with that API's error, and answers in that API's shape, usage included
(`agentjudge.testing.mimic`): a judge client that works against it speaks the API as its
provider documents it.

Faults are deterministic: the n-th arrival of the same request body fails when a hash of
(body, n) falls under the fault's rate, so a retried request eventually gets through, and
`fail_first` fails the first n arrivals of every distinct body (the preflight's too, unless
told to spare it).
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import ssl
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from agentjudge.judge.client import PREFLIGHT_PROMPT
from agentjudge.testing.agent_model import AgentScript, ScriptError, agent_reply
from agentjudge.testing.batch_desk import BatchDesk
from agentjudge.testing.mimic import Dialect, Refusal, dialect_for
from agentjudge.testing.mimic.base import MODEL
from agentjudge.testing.scripted import (
    ASKED_CRITERIA,
    CATEGORY_MARKER,
    CRITERION_MARKER,
    FAULT_MARKER,
    SCORE_MARKER,
    Answer,
    Fault,
    Malformed,
    Prompt,
    answer,
    expected_score,
    marked_fault,
)

__all__ = [
    "ASKED_CRITERIA",
    "CATEGORY_MARKER",
    "CRITERION_MARKER",
    "FAULT_MARKER",
    "MODEL",
    "SCORE_MARKER",
    "Fault",
    "JudgeServer",
    "LoggedRequest",
    "Malformed",
    "Script",
    "expected_score",
]


@dataclass
class Script:
    """How the server behaves; tests may change it while the server runs."""

    latency: float = 0.0
    capacity: int | None = None
    retry_after: float = 0.05  # the Retry-After of a 429 (a scripted one, or over capacity)
    # the Retry-After of a scripted 5xx (most servers send none; some 503s do)
    retry_after_5xx: float | None = None
    faults: dict[Fault, float] = field(default_factory=dict)
    fail_first: int = 0
    fail_first_fault: Fault = "500"
    # False: `fail_first` spares the preflight (the small call a job makes before its real
    # ones), so a test waits out the real calls' failures only, not the preflight's first
    fail_first_preflight: bool = True
    malformed: Malformed | None = None
    hang_seconds: float = 3600.0
    # prompts estimated (at four characters a token) over this many tokens are refused as
    # the mimicked API refuses them (Ollama cuts them down and answers)
    max_context_tokens: int | None = None
    # a score for any request whose last message holds the text (the first that matches;
    # markers still win): for prompts written by others, such as graph-agents-cli's
    scores: dict[str, float] = field(default_factory=dict)
    retry_after_date: bool = False  # a 429's Retry-After as an HTTP date, not in seconds
    redirect_to: str = "http://127.0.0.1:9"  # where a "redirect" fault sends the client
    dribble_seconds: float = 0.5  # between the bytes of a "dribble" fault's body
    # every verdict's reasoning quotes the credentials the request came with (its key
    # headers and its URL's query), as a judge tricked into echoing them would
    echo_credentials: bool = False
    # steps scored in the shape the eval-hub-contrib provider asks of their job, not the
    # one asked (see `scripted.contrib_criteria`): a judge endpoint that serves its jobs
    contrib: bool = False
    # the server also plays an agent's model (OpenAI chat completions, `agent_model`): a
    # conversation whose first user message holds a script's phrase gets that script's
    # turns, tool calls then an answer; every other request is judged as before
    agent: tuple[AgentScript, ...] = ()
    # the OpenAI and Anthropic mimics' batches (testing/batch_desk.py): seconds a batch
    # takes to process, and how many of the first batches submitted expire unprocessed
    batch_delay: float = 0.0
    batch_expire_first: int = 0
    # seconds the OpenAI mimic waits, once a batch is created, before it answers its creator
    batch_create_delay: float = 0.0
    # the first polls of each batch answered 503
    batch_poll_failures: int = 0


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server saw it, and how it went."""

    body_sha256: str
    arrival: int  # the n-th arrival of this body the server took up (0: refused)
    # "ok", "agent" (a scripted agent turn), "refused", "429_capacity", a fault or a
    # malformed answer
    outcome: str
    body: dict[str, Any]  # {} when the body is not a JSON object
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    status: int  # the HTTP status answered; 0 when the connection was dropped instead


@dataclass(frozen=True)
class _Call:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    digest: str
    body: dict[str, Any] | None


class JudgeServer:
    """Run the judge server on 127.0.0.1 in a background thread (a context manager).

    `mimic` names the API to mimic (a key of `agentjudge.testing.mimic.DIALECTS`; None is
    the permissive OpenAI-compatible server); `api_key` is the only key the dialects that
    check one accept (None: any key, but one must be given where the API requires it);
    `reasoning_models` are model (or Azure deployment) names the OpenAI-style dialects treat
    as reasoning models and Gemini as thinking ones, beyond those their names give away;
    `models`, when given, are the only models it serves (another is refused as the API
    refuses an unknown model).
    """

    def __init__(
        self,
        script: Script | None = None,
        port: int = 0,
        keep_log: bool = True,
        mimic: str | None = None,
        api_key: str | None = None,
        reasoning_models: Iterable[str] = (),
        models: Iterable[str] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.script = script or Script()
        self.port = port
        self.mimic = mimic
        self.dialect: Dialect = dialect_for(mimic, api_key, reasoning_models, models)
        self.tls = tls  # HTTPS with this context (its certificate), else plain HTTP
        # Tests read every request back; a long-running server (`agentjudge judge-server`)
        # keeps none, or it would grow by each request's body for as long as it runs.
        self.keep_log = keep_log
        self.log: list[LoggedRequest] = []
        self._arrivals: Counter[str] = Counter()
        self._in_flight = 0
        self.peak_in_flight = 0  # most requests being answered at once
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        # the batch API of the OpenAI and Anthropic mimics (counted: `batches.submissions`)
        self.batches = (
            BatchDesk(
                self.dialect,
                self._answer_batched,
                lambda: self.script.batch_delay,
                lambda: self.script.batch_expire_first,
                lambda: self.script.batch_create_delay,
                lambda: self.script.batch_poll_failures,
            )
            if mimic in ("openai", "anthropic")
            else None
        )

    @property
    def base_url(self) -> str:
        """The base URL a client of the mimicked API is given: ends in /v1 for OpenAI-style
        servers, /v1beta/openai for Gemini, and is the bare host for Anthropic and Azure."""
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}{self.dialect.base_path}"

    def outcomes(self) -> Counter[str]:
        """How many logged requests had each outcome."""
        with self._lock:
            return Counter(r.outcome for r in self.log)

    def __enter__(self) -> JudgeServer:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("judge server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def _serve(self, ready: threading.Event) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self.start())
        ready.set()
        self._loop.run_forever()
        # calls still hanging when the server stops end here, not as "Task was destroyed"
        pending = asyncio.all_tasks(self._loop)
        for task in pending:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.close()

    async def start(self) -> None:
        """Bind and start serving on the current event loop (used by `agentjudge judge-server`)."""
        app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=[self._unknown_paths])
        for route in self.dialect.routes:
            handler = self._chat if route.kind == "chat" else self._models
            if route.method == "GET":
                app.router.add_get(route.path, handler)
            else:
                app.router.add_route(route.method, route.path, handler)
        if self.batches is not None:
            self.batches.add_routes(app)
        # stopping does not wait for calls scripted to hang: they are dropped
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=1024, ssl_context=self.tls)
        await site.start()
        self.port = self._runner.addresses[0][1]

    @web.middleware
    async def _unknown_paths(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        # a path (or method) the API does not serve gets the API's own 404 where it has one
        try:
            return await handler(request)
        except (web.HTTPNotFound, web.HTTPMethodNotAllowed):
            refusal = self.dialect.not_found(request.method, request.path)
            if refusal is None:
                raise
            call = await _call_of(request)
            self._record(call, 0, "refused", refusal.status)
            return _respond(refusal)

    async def _models(self, request: web.Request) -> web.StreamResponse:
        call = await _call_of(request)
        refusal = self.dialect.check_access(call.path, call.query, call.headers)
        if refusal is not None:
            self._record(call, 0, "refused", refusal.status)
            return _respond(refusal)
        return web.json_response(self.dialect.models())

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        call = await _call_of(request)
        script = self.script
        admitted = self._admit(call)
        if isinstance(admitted, Refusal):
            # refused before it reached the model: no arrival for faults to count
            self._record(call, 0, "refused", admitted.status)
            return _respond(admitted)
        if script.agent:
            played = self._play_agent(script.agent, call)
            if played is not None:
                return played
        with self._lock:
            self._arrivals[call.digest] += 1
            arrival = self._arrivals[call.digest]
            full = script.capacity is not None and self._in_flight >= script.capacity
            if not full:
                self._in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
        if full:
            self._record(call, arrival, "429_capacity", 429)
            busy = self.dialect.error(429, "server at capacity")
            return _respond(busy, retry_after=script.retry_after)
        try:
            fault = marked_fault(admitted) or _fault_for(script, admitted, call.digest, arrival)
            if fault is not None:
                return await self._fail(request, fault, call, arrival)
            if script.latency:
                await asyncio.sleep(script.latency)
            reply = answer(admitted, script.malformed, script.scores, arrival, script.contrib)
            if script.echo_credentials:
                reply = _echoing(reply, call)
            self._record(call, arrival, reply.outcome, 200)
            if script.malformed == "empty":
                return web.Response(status=200, body=b"", content_type="application/json")
            if script.malformed == "html":
                return web.Response(status=200, text=reply.text, content_type="text/html")
            return web.json_response(self.dialect.reply(admitted, call.body or {}, reply))
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _answer_batched(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """A request of a batch answered as `_chat` would answer it (its status and JSON
        body); a fault that drops or garbles a connection is a 500 in a batch."""
        raw = json.dumps(body, sort_keys=True).encode()
        call = _Call(path, {}, {}, hashlib.sha256(raw).hexdigest(), body)
        refusal = self.dialect.check_body(path, body)
        if refusal is not None:
            self._record(call, 0, "refused", refusal.status)
            return refusal.status, refusal.body
        prompt = self.dialect.read(path, body)
        with self._lock:
            self._arrivals[call.digest] += 1
            arrival = self._arrivals[call.digest]
        fault = marked_fault(prompt) or _fault_for(self.script, prompt, call.digest, arrival)
        if fault is not None:
            status = int(fault) if fault.isdigit() else 500
            self._record(call, arrival, fault, status)
            failure = self.dialect.error(status, f"scripted {fault}")
            return failure.status, failure.body
        reply = answer(prompt, None, self.script.scores, arrival, self.script.contrib)
        self._record(call, arrival, reply.outcome, 200)
        return 200, self.dialect.reply(prompt, body, reply)

    def _play_agent(
        self, scripts: tuple[AgentScript, ...], call: _Call
    ) -> web.StreamResponse | None:
        """The scripted agent model's reply to an agent's request, None for any other."""
        try:
            reply = agent_reply(scripts, call.body or {})
        except ScriptError as error:
            self._record(call, 0, "refused", 400)
            return _respond(self.dialect.error(400, str(error)))
        if reply is None:
            return None
        self._record(call, 1, "agent", 200)
        return web.json_response(reply)

    def _admit(self, call: _Call) -> Prompt | Refusal:
        """The request read for the scripted judge, or the mimicked API's refusal of it."""
        refusal = self.dialect.check(call.path, call.query, call.headers, call.body)
        if refusal is not None:
            return refusal
        prompt = self.dialect.read(call.path, call.body or {})
        limit = self.script.max_context_tokens
        if limit is not None and prompt.tokens() > limit:
            return self.dialect.too_long(prompt.tokens(), limit) or prompt
        return prompt

    async def _fail(
        self, request: web.Request, fault: Fault, call: _Call, arrival: int
    ) -> web.StreamResponse:
        dropped = fault in ("drop", "hang")
        status = {"dribble": 200, "garbage": 200, "redirect": 307}.get(
            fault, 0 if dropped else None
        )
        self._record(call, arrival, fault, int(fault) if status is None else status)
        if fault == "hang":
            await asyncio.sleep(self.script.hang_seconds)
        if dropped:
            if request.transport is not None:
                request.transport.abort()
            # nothing reaches the client: the connection is gone
            return web.Response(status=499)
        if fault == "dribble":
            return await self._dribble(request)
        if fault == "garbage":
            return _garbage(call.digest, arrival)
        if fault == "redirect":
            target = self.script.redirect_to + request.path
            raise web.HTTPTemporaryRedirect(target)
        failure = self.dialect.error(int(fault), f"scripted {fault}")
        wait = self.script.retry_after if fault == "429" else self.script.retry_after_5xx
        if fault == "429" and self.script.retry_after_date:
            return _respond(failure, retry_after=wait, as_date=True)
        return _respond(failure, retry_after=wait)

    async def _dribble(self, request: web.Request) -> web.StreamResponse:
        """A 200 whose headers come at once and whose body then comes a byte at a time."""
        body = b'{"choices": [{"message": {"content": "{\\"score\\": 0.5}"}}]}'
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.content_length = len(body)
        await response.prepare(request)
        for byte in body:
            await response.write(bytes([byte]))
            await asyncio.sleep(self.script.dribble_seconds)
        await response.write_eof()
        return response

    def _record(self, call: _Call, arrival: int, outcome: str, status: int) -> None:
        if not self.keep_log:
            return
        entry = LoggedRequest(
            call.digest,
            arrival,
            outcome,
            call.body or {},
            call.path,
            call.query,
            call.headers,
            status,
        )
        with self._lock:
            self.log.append(entry)


async def _call_of(request: web.Request) -> _Call:
    raw = await request.read()
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    return _Call(
        request.path,
        dict(request.query),
        {name.lower(): value for name, value in request.headers.items()},
        hashlib.sha256(raw).hexdigest(),
        body if isinstance(body, dict) else None,
    )


def _fault_for(script: Script, prompt: Prompt, digest: str, arrival: int) -> Fault | None:
    if arrival <= script.fail_first and (
        script.fail_first_preflight or prompt.last != PREFLIGHT_PROMPT
    ):
        return script.fail_first_fault
    for fault, rate in script.faults.items():
        draw = int(hashlib.sha256(f"{fault}:{digest}:{arrival}".encode()).hexdigest()[:8], 16)
        if draw / 0xFFFFFFFF < rate:
            return fault
    return None


def _echoing(reply: Answer, call: _Call) -> Answer:
    """`reply` whose texts (reasoning, rationale, reason) quote the call's credentials."""
    if reply.verdict is None:
        return reply
    sent = [f"{name}: {call.headers[name]}" for name in _KEY_HEADERS if name in call.headers]
    sent += [f"{name}={value}" for name, value in call.query.items()]
    quoted = f" (I was sent {'; '.join(sent)})"
    verdict = {
        name: value + quoted if name in _TEXTS and isinstance(value, str) else value
        for name, value in reply.verdict.items()
    }
    return Answer(json.dumps(verdict), verdict, reply.outcome)


_KEY_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key")
_TEXTS = frozenset({"reasoning", "rationale", "reason"})


def _garbage(digest: str, arrival: int) -> web.Response:
    """A 200 that is no chat completion, of one of two kinds (by a hash, like the faults):
    JSON cut off mid-way, or JSON of another shape (a proxy's own status object)."""
    if hashlib.sha256(f"garbage:{digest}:{arrival}".encode()).digest()[0] % 2:
        body = b'{"id": "chatcmpl-1", "choices": [{"message": {"content": "{\\"sco'
    else:
        body = b'{"status": "ok", "upstream": "pending"}'
    return web.Response(status=200, body=body, content_type="application/json")


def _respond(
    refusal: Refusal, retry_after: float | None = None, as_date: bool = False
) -> web.Response:
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    if retry_after is not None and as_date:
        headers["Retry-After"] = email.utils.formatdate(time.time() + retry_after, usegmt=True)
    if isinstance(refusal.body, str):
        return web.Response(text=refusal.body, status=refusal.status, headers=headers)
    return web.json_response(refusal.body, status=refusal.status, headers=headers)
