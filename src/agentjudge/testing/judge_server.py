"""A scriptable OpenAI-compatible judge server for tests, benchmarks and plumbing checks.

It speaks `/v1/chat/completions` and `/v1/models` over real HTTP on 127.0.0.1 and can be
told to be slow, to be full (429 with Retry-After beyond a concurrency capacity), to fail
(429/500/503, dropped connections, hangs) and to answer badly (non-JSON, no score, a score
out of range or a bool, an empty 200, a body over 64 KiB). Answers are deterministic: a
marker `[[score=0.25]]` or `[[category=context_loss]]` in the last message decides the
verdict (the last marker counts: a step comes after its context), otherwise a hash of the
message does, so tests know the right answer. `[[fault=503]]` (or 429, 500, drop, hang)
fails every request carrying it; `[[category_fault=...]]` only categorization requests.
Asked for several criteria, it answers `{"scores": ...}` (`[[score.NAME=X]]` sets one);
asked to derive criteria, it answers two (`[[rubric=bad]]` in the task gets an unusable one).

Faults are deterministic too: the n-th arrival of the same request body fails when a hash
of (body, n) falls under the fault's rate, so a retried request eventually gets through,
and `fail_first` fails the first n arrivals of every distinct body.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

Fault = Literal["429", "500", "503", "drop", "hang"]
Malformed = Literal["non_json", "no_score", "out_of_range", "bool_score", "empty", "huge"]

SCORE_MARKER = re.compile(r"\[\[score=([0-9.]+)\]\]")
CATEGORY_MARKER = re.compile(r"\[\[category=([a-z_]+)\]\]")
FAULT_MARKER = re.compile(r"\[\[(category_)?fault=(429|500|503|drop|hang)\]\]")
MODEL = "agentjudge-test-judge"


@dataclass
class Script:
    """How the server behaves; tests may change it while the server runs."""

    latency: float = 0.0
    capacity: int | None = None
    retry_after: float = 0.05
    faults: dict[Fault, float] = field(default_factory=dict)
    fail_first: int = 0
    fail_first_fault: Fault = "500"
    malformed: Malformed | None = None
    hang_seconds: float = 3600.0


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server saw it."""

    body_sha256: str
    arrival: int
    outcome: str
    body: dict[str, Any]


class JudgeServer:
    """Run the judge server on 127.0.0.1 in a background thread (a context manager)."""

    def __init__(self, script: Script | None = None, port: int = 0, keep_log: bool = True) -> None:
        self.script = script or Script()
        self.port = port
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

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def outcomes(self) -> Counter[str]:
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
        self._loop.close()

    async def start(self) -> None:
        """Bind and start serving on the current event loop (used by `agentjudge judge-server`)."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=1024)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        digest = hashlib.sha256(raw).hexdigest()
        try:
            body = json.loads(raw)
        except ValueError:
            return web.json_response({"error": {"message": "body is not JSON"}}, status=400)
        script = self.script
        with self._lock:
            self._arrivals[digest] += 1
            arrival = self._arrivals[digest]
            full = script.capacity is not None and self._in_flight >= script.capacity
            if not full:
                self._in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
        if full:
            self._record(digest, arrival, "429_capacity", body)
            return _error(429, "server at capacity", retry_after=script.retry_after)
        try:
            fault = _marked_fault(body) or _fault_for(script, digest, arrival)
            if fault is not None:
                return await self._fail(request, fault, digest, arrival, body)
            if script.latency:
                await asyncio.sleep(script.latency)
            content, outcome = _answer(body, script.malformed)
            self._record(digest, arrival, outcome, body)
            if script.malformed == "empty":
                return web.Response(status=200, body=b"", content_type="application/json")
            return web.json_response(_completion(body, content))
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _fail(
        self, request: web.Request, fault: Fault, digest: str, arrival: int, body: dict[str, Any]
    ) -> web.StreamResponse:
        self._record(digest, arrival, fault, body)
        if fault == "hang":
            await asyncio.sleep(self.script.hang_seconds)
        if fault in ("drop", "hang"):
            if request.transport is not None:
                request.transport.abort()
            # nothing reaches the client: the connection is gone
            return web.Response(status=499)
        return _error(int(fault), f"scripted {fault}", retry_after=self.script.retry_after)

    def _record(self, digest: str, arrival: int, outcome: str, body: dict[str, Any]) -> None:
        if not self.keep_log:
            return
        with self._lock:
            self.log.append(LoggedRequest(digest, arrival, outcome, body))


def _marked_fault(body: dict[str, Any]) -> Fault | None:
    """`[[fault=503]]` in the last message fails every such request; `[[category_fault=503]]`
    only categorization requests (their system message asks for a category)."""
    marker = FAULT_MARKER.search(_last_text(body))
    if marker is None:
        return None
    if marker.group(1) and not _is_category_request(body):
        return None
    return marker.group(2)  # type: ignore[return-value]


def _is_category_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return '"category"' in str(messages[0].get("content", ""))


def _fault_for(script: Script, digest: str, arrival: int) -> Fault | None:
    if arrival <= script.fail_first:
        return script.fail_first_fault
    for fault, rate in script.faults.items():
        draw = int(hashlib.sha256(f"{fault}:{digest}:{arrival}".encode()).hexdigest()[:8], 16)
        if draw / 0xFFFFFFFF < rate:
            return fault
    return None


def _last_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "")
    return content if isinstance(content, str) else json.dumps(content)


def expected_score(text: str) -> float:
    """The score the server gives a request whose last message is `text`: its last
    `[[score=X]]` marker (the step comes after its context), else a hash."""
    markers = SCORE_MARKER.findall(text)
    if markers:
        return float(markers[-1])
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 1001 / 1000


CRITERION_MARKER = re.compile(r"\[\[score\.([a-z_0-9]+)=([0-9.]+)\]\]")
ASKED_CRITERIA = re.compile(r'"([a-z_0-9]+)": <0\.0 to 1\.0>')
DERIVED = [
    {"name": "correctness", "description": "The step is right for the task.", "weight": 3},
    {"name": "efficiency", "description": "The step wastes no effort.", "weight": 1},
]


def _system_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    return str(messages[0].get("content", ""))


def _answer(body: dict[str, Any], malformed: Malformed | None) -> tuple[str, str]:
    text = _last_text(body)
    system = _system_text(body)
    if '{"criteria": [' in system and malformed is None:
        # a request to derive criteria (auto scoring mode); `[[rubric=bad]]` gets a bad one
        criteria: Any = "not a list" if "[[rubric=bad]]" in text else DERIVED
        return json.dumps({"criteria": criteria}), "ok"
    if malformed == "non_json":
        return "I think this step is fine, maybe 0.7.", "non_json"
    if malformed == "no_score":
        return json.dumps({"reasoning": "looks fine"}), "no_score"
    if malformed == "out_of_range":
        return json.dumps({"reasoning": "great", "score": 7}), "out_of_range"
    if malformed == "bool_score":
        return json.dumps({"reasoning": "yes", "score": True}), "bool_score"
    if malformed == "huge":
        return json.dumps({"reasoning": "x" * 100_000, "score": 0.5}), "huge"
    if malformed == "empty":
        return "", "empty"
    verdict: dict[str, Any] = {"reasoning": "scripted verdict", "score": expected_score(text)}
    asked = ASKED_CRITERIA.findall(system) if '"scores": {' in system else []
    if asked:
        # per-criterion scores: `[[score.NAME=X]]` markers, else the step's score
        marked = dict(CRITERION_MARKER.findall(text))
        scores = {n: float(marked[n]) if n in marked else verdict["score"] for n in asked}
        verdict = {"reasoning": "scripted verdict", "scores": scores}
    categories = CATEGORY_MARKER.findall(text)
    if categories:
        verdict.update(category=categories[-1], confidence=0.9, rationale="scripted category")
    return json.dumps(verdict), "ok"


def _completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    prompt_tokens, completion_tokens = max(1, prompt_chars // 4), max(1, len(content) // 4)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", MODEL),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _error(status: int, message: str, retry_after: float | None = None) -> web.Response:
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return web.json_response({"error": {"message": message}}, status=status, headers=headers)
