"""The batch endpoints of the OpenAI and Anthropic mimics, as each provider documents them
(docs/judge.md, "Batch mode"), processed in the background after a scripted delay.

OpenAI: `POST /v1/files` (multipart, purpose `batch`, a JSONL file of at most 50,000
lines and 200 MB), `GET /v1/files/{id}/content`, `POST /v1/batches` (`input_file_id`,
`endpoint`, `completion_window` `24h`), `GET /v1/batches/{id}`, `POST
/v1/batches/{id}/cancel`. A file whose lines do not validate fails its batch (`failed`,
`errors.data`); the results are an output file (2xx responses) and an error file.
Anthropic: `POST /v1/messages/batches` (`requests`: 1 to 100,000 of `{custom_id, params}`,
at most 256 MB, custom ids unique and matching `^[a-zA-Z0-9_-]{1,64}$`), `GET
/v1/messages/batches/{id}`, `.../results` (JSONL, once ended), `.../cancel`.

Each request of a batch is answered as the chat endpoint would answer it (`answer_one`);
the desk counts every batch and every request body submitted (`submissions`), so a test
can tell whether anything was submitted twice. `Script.batch_expire_first` batches expire
with none of their requests run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from agentjudge.testing.mimic import Dialect, Refusal

# a batch request answered: its HTTP status and JSON body
AnswerOne = Callable[[str, dict[str, Any]], Awaitable[tuple[int, Any]]]
OPENAI_MAX_LINES = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024
OPENAI_ENDPOINTS = ("/v1/responses", "/v1/chat/completions", "/v1/embeddings", "/v1/completions")
ANTHROPIC_MAX_REQUESTS = 100_000
ANTHROPIC_MAX_BYTES = 256 * 1024 * 1024
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}


@dataclass
class _Batch:
    id: str
    requests: list[tuple[str, dict[str, Any]]]  # custom id, body
    status: str
    created: float
    problems: list[dict[str, Any]] = field(default_factory=list)  # a failed validation's
    results: list[dict[str, Any]] = field(default_factory=list)
    output_file: str | None = None
    error_file: str | None = None
    cancel: bool = False
    task: asyncio.Task[None] | None = None
    metadata: dict[str, str] | None = None


class BatchDesk:
    """The batches of one mimic server (OpenAI's or Anthropic's shape)."""

    def __init__(
        self,
        dialect: Dialect,
        answer_one: AnswerOne,
        delay: Callable[[], float],
        expire_first: Callable[[], int],
        create_delay: Callable[[], float] = lambda: 0.0,
        poll_failures: Callable[[], int] = lambda: 0,
    ) -> None:
        self.dialect = dialect
        self.kind = "anthropic" if dialect.title == "Anthropic" else "openai"
        self._answer_one = answer_one
        self._delay = delay
        self._expire_first = expire_first
        # seconds between a batch's creation and the answer to its creator (a test kills
        # the client in that window)
        self._create_delay = create_delay
        # the first polls of each batch (GET) answered 503, as a provider having a bad minute
        self._poll_failures = poll_failures
        self._polls: Counter[str] = Counter()
        self._batches: dict[str, _Batch] = {}
        self._files: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.batches_submitted = 0
        # each request body submitted in a batch, by its sha256: how many times
        self.submissions: Counter[str] = Counter()
        self._serial = 0

    def ids(self) -> list[str]:
        """The ids of the batches submitted, oldest first."""
        return list(self._batches)

    def add_routes(self, app: web.Application) -> None:
        """Serve the batch endpoints of this desk's API."""
        router = app.router
        if self.kind == "openai":
            router.add_post("/v1/files", self._upload)
            router.add_get("/v1/files/{id}/content", self._file_content)
            router.add_post("/v1/batches", self._openai_create)
            router.add_get("/v1/batches", self._openai_list)
            router.add_get("/v1/batches/{id}", self._openai_get)
            router.add_post("/v1/batches/{id}/cancel", self._cancel)
        else:
            router.add_post("/v1/messages/batches", self._anthropic_create)
            router.add_get("/v1/messages/batches/{id}", self._anthropic_get)
            router.add_get("/v1/messages/batches/{id}/results", self._anthropic_results)
            router.add_post("/v1/messages/batches/{id}/cancel", self._cancel)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._serial += 1
            serial = self._serial
        return prefix + hashlib.sha256(f"{self.kind}:{serial}".encode()).hexdigest()[:24]

    def _refused(self, request: web.Request) -> web.Response | None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        refusal = self.dialect.check_access(request.path, dict(request.query), headers)
        return _respond(refusal) if refusal is not None else None

    def _error(self, status: int, message: str) -> web.Response:
        return _respond(self.dialect.error(status, message))

    # OpenAI

    async def _upload(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return self._error(400, "purpose must be 'batch' and a file must be given")
        content = upload.file.read()
        if len(content) > OPENAI_MAX_BYTES:
            return self._error(400, "File exceeds the maximum size of 200 MB for batch files.")
        file_id = self._next_id("file-")
        self._files[file_id] = content
        return web.json_response(
            {"id": file_id, "object": "file", "bytes": len(content), "purpose": "batch"}
        )

    async def _file_content(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        content = self._files.get(request.match_info["id"])
        if content is None:
            return self._error(404, "No such File object")
        return web.Response(body=content, content_type="application/octet-stream")

    async def _openai_create(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        body = await _json(request)
        if body.get("completion_window") != "24h":
            return self._error(400, "completion_window must be '24h'")
        endpoint = body.get("endpoint")
        if endpoint not in OPENAI_ENDPOINTS:
            return self._error(400, f"Invalid endpoint: {endpoint!r}")
        content = self._files.get(str(body.get("input_file_id")))
        if content is None:
            return self._error(404, "No such File object")
        metadata = body.get("metadata")
        if metadata is not None and (
            not isinstance(metadata, dict)
            or len(metadata) > 16
            or any(len(str(k)) > 64 or len(str(v)) > 512 for k, v in metadata.items())
        ):
            return self._error(400, "metadata: at most 16 pairs, keys of 64 and values of 512")
        requests, problems = _openai_lines(content, str(endpoint))
        batch = self._start(requests, problems)
        batch.metadata = metadata
        await asyncio.sleep(self._create_delay())
        return web.json_response(self._openai_object(batch, str(body.get("input_file_id"))))

    async def _openai_list(self, request: web.Request) -> web.Response:
        """`GET /v1/batches`: newest first, `limit` (1 to 100, 20), `after` an id."""
        refused = self._refused(request)
        if refused is not None:
            return refused
        try:
            limit = int(request.query.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            return self._error(400, "limit must be between 1 and 100")
        newest = list(reversed(self._batches.values()))
        after = request.query.get("after")
        ids = [b.id for b in newest]
        start = ids.index(after) + 1 if after in ids else 0
        page = newest[start : start + limit]
        return web.json_response(
            {
                "object": "list",
                "data": [self._openai_object(b, "") for b in page],
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None,
                "has_more": start + limit < len(newest),
            }
        )

    def _unavailable(self, batch_id: str) -> web.Response | None:
        with self._lock:
            self._polls[batch_id] += 1
            failing = self._polls[batch_id] <= self._poll_failures()
        return self._error(503, "The server is overloaded, try again later.") if failing else None

    async def _openai_get(self, request: web.Request) -> web.Response:
        refused = self._refused(request) or self._unavailable(request.match_info["id"])
        if refused is not None:
            return refused
        batch = self._batches.get(request.match_info["id"])
        if batch is None:
            return self._error(404, "No batch found")
        return web.json_response(self._openai_object(batch, ""))

    def _openai_object(self, batch: _Batch, input_file: str) -> dict[str, Any]:
        failed = sum(1 for r in batch.results if r.get("error") or _status(r) >= 300)
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": input_file,
            "completion_window": "24h",
            "status": batch.status,
            "output_file_id": batch.output_file,
            "error_file_id": batch.error_file,
            "created_at": int(batch.created),
            "metadata": batch.metadata,
            "errors": {"object": "list", "data": batch.problems} if batch.problems else None,
            "request_counts": {
                "total": len(batch.requests),
                "completed": len(batch.results) - failed,
                "failed": failed,
            },
        }

    # Anthropic

    async def _anthropic_create(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        raw = await request.read()
        if len(raw) > ANTHROPIC_MAX_BYTES:
            return self._error(413, "Request exceeds the maximum size of 256 MB")
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        items = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(items, list) or not 1 <= len(items) <= ANTHROPIC_MAX_REQUESTS:
            return self._error(400, "requests: must hold 1 to 100000 items")
        seen: set[str] = set()
        requests = []
        for item in items:
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            params = item.get("params") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id):
                return self._error(400, "requests.custom_id: must match ^[a-zA-Z0-9_-]{1,64}$")
            if custom_id in seen:
                return self._error(400, f"Duplicate custom_id: {custom_id}")
            if not isinstance(params, dict):
                return self._error(400, "requests.params: Field required")
            seen.add(custom_id)
            requests.append((custom_id, params))
        batch = self._start(requests, [])
        return web.json_response(self._anthropic_object(batch, request))

    async def _anthropic_get(self, request: web.Request) -> web.Response:
        refused = self._refused(request) or self._unavailable(request.match_info["id"])
        if refused is not None:
            return refused
        batch = self._batches.get(request.match_info["id"])
        if batch is None:
            return self._error(404, "Message batch not found")
        return web.json_response(self._anthropic_object(batch, request))

    def _anthropic_object(self, batch: _Batch, request: web.Request) -> dict[str, Any]:
        ended = batch.status == "ended"
        counts = Counter(r["result"]["type"] for r in batch.results)
        url = f"{request.scheme}://{request.host}/v1/messages/batches/{batch.id}/results"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": {
                "processing": 0 if ended else len(batch.requests),
                "succeeded": counts["succeeded"],
                "errored": counts["errored"],
                "canceled": counts["canceled"],
                "expired": counts["expired"],
            },
            "results_url": url if ended else None,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.created)),
        }

    async def _anthropic_results(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        batch = self._batches.get(request.match_info["id"])
        if batch is None:
            return self._error(404, "Message batch not found")
        if batch.status != "ended":
            return self._error(400, "Message batch is still in progress")
        lines = b"\n".join(json.dumps(r).encode() for r in batch.results)
        return web.Response(body=lines + b"\n", content_type="application/binary")

    # both

    async def _cancel(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        batch = self._batches.get(request.match_info["id"])
        if batch is None:
            return self._error(404, "No batch found")
        batch.cancel = True
        if batch.status in ("validating", "in_progress"):
            batch.status = "cancelling" if self.kind == "openai" else "canceling"
        if self.kind == "openai":
            return web.json_response(self._openai_object(batch, ""))
        return web.json_response(self._anthropic_object(batch, request))

    def _start(
        self, requests: list[tuple[str, dict[str, Any]]], problems: list[dict[str, Any]]
    ) -> _Batch:
        prefix = "batch_" if self.kind == "openai" else "msgbatch_"
        status = "validating" if self.kind == "openai" else "in_progress"
        batch = _Batch(self._next_id(prefix), requests, status, time.time(), problems)
        with self._lock:
            self.batches_submitted += 1
            expire = self.batches_submitted <= self._expire_first()
            for _, body in requests:
                self.submissions[_digest(body)] += 1
        self._batches[batch.id] = batch
        batch.task = asyncio.ensure_future(self._process(batch, expire))
        return batch

    async def _process(self, batch: _Batch, expire: bool) -> None:
        await asyncio.sleep(0)
        if batch.problems:
            batch.status = "failed"
            return
        if self.kind == "openai":
            batch.status = "in_progress"
        await asyncio.sleep(self._delay())
        for custom_id, body in batch.requests:
            if expire or batch.cancel:
                kind = "expired" if expire else "canceled"
                batch.results.append(self._unfinished(custom_id, kind))
                continue
            status, reply = await self._answer_one(self._chat_path(), body)
            batch.results.append(self._result(custom_id, status, reply))
        if self.kind == "anthropic":
            batch.status = "ended"
            return
        good = [r for r in batch.results if not r.get("error") and _status(r) < 300]
        bad = [r for r in batch.results if r not in good]
        batch.output_file = self._file_of(good)
        batch.error_file = self._file_of(bad)
        batch.status = "expired" if expire else "cancelled" if batch.cancel else "completed"

    def _chat_path(self) -> str:
        return "/v1/messages" if self.kind == "anthropic" else "/v1/chat/completions"

    def _file_of(self, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        file_id = self._next_id("file-")
        self._files[file_id] = b"".join(json.dumps(r).encode() + b"\n" for r in lines)
        return file_id

    def _unfinished(self, custom_id: str, kind: str) -> dict[str, Any]:
        if self.kind == "anthropic":
            return {"custom_id": custom_id, "result": {"type": kind}}
        code = "batch_expired" if kind == "expired" else "batch_cancelled"
        message = (
            "This request could not be executed before the completion window expired."
            if kind == "expired"
            else "This request was cancelled with its batch."
        )
        return {
            "id": self._next_id("batch_req_"),
            "custom_id": custom_id,
            "response": None,
            "error": {"code": code, "message": message},
        }

    def _result(self, custom_id: str, status: int, reply: Any) -> dict[str, Any]:
        if self.kind == "openai":
            return {
                "id": self._next_id("batch_req_"),
                "custom_id": custom_id,
                "response": {"status_code": status, "request_id": self._next_id(""), "body": reply},
                "error": None,
            }
        if status == 200:
            return {"custom_id": custom_id, "result": {"type": "succeeded", "message": reply}}
        return {"custom_id": custom_id, "result": {"type": "errored", "error": reply}}


def _openai_lines(
    content: bytes, endpoint: str
) -> tuple[list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """A batch input file's requests, and the problems that fail its batch."""
    requests: list[tuple[str, dict[str, Any]]] = []
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    lines = content.splitlines()
    if len(lines) > OPENAI_MAX_LINES:
        message = f"The batch input file has {len(lines)} requests; the limit is 50000."
        return [], [{"code": "too_many_requests", "message": message, "line": None}]
    for number, line in enumerate(lines, 1):
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        problem = None
        if not isinstance(item, dict) or not isinstance(item.get("body"), dict):
            problem = ("invalid_json_line", "This line is not a JSON request object.")
        elif not isinstance(item.get("custom_id"), str) or item["custom_id"] in seen:
            problem = ("duplicate_custom_id", "The custom_id of this line is not unique.")
        elif item.get("method") != "POST" or item.get("url") != endpoint:
            problem = ("mismatched_endpoint", f"The url must be {endpoint} and method POST.")
        if problem is not None:
            problems.append({"code": problem[0], "message": problem[1], "line": number})
            continue
        assert isinstance(item, dict)
        seen.add(item["custom_id"])
        requests.append((item["custom_id"], item["body"]))
    return requests, problems


def _status(result: dict[str, Any]) -> int:
    response = result.get("response")
    return int(response["status_code"]) if isinstance(response, dict) else 0


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _respond(refusal: Refusal) -> web.Response:
    return web.json_response(refusal.body, status=refusal.status)
