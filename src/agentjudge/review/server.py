"""The review page's server: the page's three files and a small JSON API over one results
file's items and one reviewer's labels, on 127.0.0.1 only (docs/review.md).

Every request must come with the session's random token (in the URL once, then the cookie
set from it, or the `X-Review-Token` header) and a Host header naming this server
(`127.0.0.1:PORT` or `localhost:PORT`): a page of another site in the same browser can
neither read the items nor write a label, even through a DNS name rebound to 127.0.0.1.
Every answer carries a Content-Security-Policy that lets the page run its own script file
and nothing else; the script sets trajectory text as text, never as markup.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import hmac
import math
import secrets
import socket
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.resources import files
from typing import Any

from aiohttp import web

from agentjudge.errors import AgentJudgeError, UsageError
from agentjudge.review.items import ReviewItem
from agentjudge.review.labels import LabelBook, ReviewLabel
from agentjudge.review.order import Part

# what the page says of each part of the order (docs/review.md)
PARTS: dict[str, str] = {
    "unstable": "unstable: the judge's samples fall on both sides of the threshold",
    "near_threshold": "near the threshold: a small change of score would flip the verdict",
    "decisive": "decisive: the step where a failed run went wrong",
    "category_disagreement": "category disagreement: the samples name different categories",
    "random": "random sample of the rest: keeps the figures from measuring hard cases only",
}
# the page's files, by the path they are served at; nothing else is ever read from disk
ASSETS: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html"),
    "/review.js": ("review.js", "text/javascript"),
    "/review.css": ("review.css", "text/css"),
}
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
TOKEN_HEADER = "X-Review-Token"
MAX_NOTE = 4000  # characters of a note; a label is one person's remark, not a document
MAX_BODY = 64 * 1024


@dataclass(frozen=True, slots=True)
class Review:
    """What one review serves: the items in the order a look is worth most, the reviewer's
    label book, the categories a label may name, and what the page shows of the files."""

    order: Sequence[tuple[ReviewItem, Part]]
    book: LabelBook
    categories: tuple[str, ...]
    reviewer: str
    results_name: str
    labels_name: str
    stale: tuple[str, ...]  # labelled keys the results no longer have (kept, reported)


def new_token() -> str:
    """A fresh token for one review session (256 random bits)."""
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    """The token's cookie; cookies are not kept apart by port, so two reviews on one
    machine each need their own name."""
    return f"agentjudge-review-{port}"


def build_app(review: Review, *, token: str, port: int) -> web.Application:
    """The aiohttp application of `review`, answering only requests for 127.0.0.1:`port`
    (or localhost:`port`) that carry `token`."""
    hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
    cookie = cookie_name(port)

    @web.middleware
    async def guard(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if request.headers.get("Host", "").lower() not in hosts:
            return _refused("this server answers only to 127.0.0.1 or localhost with its port")
        given = request.query.get("token")
        if not any(
            _same(value, token)
            for value in (given, request.cookies.get(cookie), request.headers.get(TOKEN_HEADER))
        ):
            return _refused("open the page with the URL `agentjudge review` printed")
        if request.method == "POST" and request.content_type != "application/json":
            return _refused("the API takes JSON")
        response = await handler(request)
        if given is not None:
            response.set_cookie(cookie, token, httponly=True, samesite="Strict", path="/")
        return response

    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY)
    app.on_response_prepare.append(_security_headers)
    api = _Api(review)
    for path in ASSETS:
        app.router.add_get(path, _asset)
    app.router.add_get("/api/state", api.state)
    app.router.add_get("/api/items/{index:[0-9]+}", api.item)
    app.router.add_post("/api/labels", api.put)
    app.router.add_post("/api/undo", api.undo)
    return app


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def _refused(why: str) -> web.Response:
    return web.Response(status=403, text=f"forbidden: {why}\n")


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """On every answer, refused ones included."""
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    response.headers["Cross-Origin-Resource-Policy"] = "same-origin"


async def _asset(request: web.Request) -> web.Response:
    name, content_type = ASSETS[request.path]
    body = files("agentjudge.review").joinpath("page", name).read_bytes()
    return web.Response(body=body, content_type=content_type, charset="utf-8")


class _Api:
    """The JSON API: the review's state, one item, a label put, the last action undone."""

    def __init__(self, review: Review) -> None:
        self.review = review
        self.keys = {item.key: (item, part) for item, part in review.order}
        self.lock = asyncio.Lock()  # one label write at a time, in the order they came

    async def state(self, request: web.Request) -> web.Response:
        review = self.review
        labels = review.book.labels()
        start = next(
            (i for i, (item, _) in enumerate(review.order) if item.key not in labels),
            max(len(review.order) - 1, 0),
        )
        return web.json_response(
            {
                "results": review.results_name,
                "labels_file": review.labels_name,
                "reviewer": review.reviewer,
                "categories": list(review.categories),
                "parts": PARTS,
                "items": [
                    {"key": item.key, "part": part, "kind": item.kind}
                    for item, part in review.order
                ],
                "labels": {key: _label_json(label) for key, label in labels.items()},
                "stale": list(review.stale),
                "start": start,
            }
        )

    async def item(self, request: web.Request) -> web.Response:
        index = int(request.match_info["index"])
        if index >= len(self.review.order):
            raise web.HTTPNotFound(text="no such item\n")
        item, part = self.review.order[index]
        return web.json_response({"index": index, "part": part, **dataclasses.asdict(item)})

    async def put(self, request: web.Request) -> web.Response:
        """Set some of one item's label fields (those the body names), keeping the others."""
        body = await _json_object(request)
        key = body.get("key")
        if not isinstance(key, str) or key not in self.keys:
            raise web.HTTPBadRequest(text="key: not an item of these results\n")
        item, part = self.keys[key]
        async with self.lock:
            old = self.review.book.labels().get(key)
            fields = _fields(body, item, self.review.categories, old)
            label = ReviewLabel(
                key=key,
                part=part,
                reviewer=self.review.reviewer,
                at=datetime.now(UTC).isoformat(timespec="seconds"),
                **fields,
            )
            with _written():
                self.review.book.put(label)
        return web.json_response({"label": _label_json(label)})

    async def undo(self, request: web.Request) -> web.Response:
        await _json_object(request)
        async with self.lock:
            with _written():
                undone = self.review.book.undo()
            labels = self.review.book.labels()
        return web.json_response(
            {
                "undone": None if undone is None else undone.key,
                "labels": {key: _label_json(label) for key, label in labels.items()},
            }
        )


@contextmanager
def _written() -> Iterator[None]:
    """A labels file that cannot be written (a full disk, a folder put in its place) is
    said to the page, one line; the book keeps what is on disk, so the page can try again."""
    try:
        yield
    except AgentJudgeError as exc:
        raise web.HTTPInternalServerError(text=f"not written: {exc}\n") from None


async def _json_object(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text="the body is not JSON\n") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="the body is not a JSON object\n")
    return body


def _fields(
    body: Mapping[str, Any],
    item: ReviewItem,
    categories: Sequence[str],
    old: ReviewLabel | None,
) -> dict[str, Any]:
    """The label's four answers: those `body` gives, checked, the others as they were."""
    fields: dict[str, Any] = {
        "passed": None if old is None else old.passed,
        "score": None if old is None else old.score,
        "category": None if old is None else old.category,
        "note": None if old is None else old.note,
    }
    if "passed" in body:
        if body["passed"] is not None and not isinstance(body["passed"], bool):
            raise web.HTTPBadRequest(text="passed: true, false or null\n")
        fields["passed"] = body["passed"]
    if "score" in body:
        fields["score"] = _score(body["score"], item.scale)
    if "category" in body:
        if body["category"] is not None and body["category"] not in categories:
            raise web.HTTPBadRequest(text=f"category: one of {', '.join(categories)}, or null\n")
        fields["category"] = body["category"]
    if "note" in body:
        note = body["note"]
        if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE):
            raise web.HTTPBadRequest(text=f"note: text of at most {MAX_NOTE} characters\n")
        fields["note"] = (note.strip() or None) if isinstance(note, str) else None
    return fields


def _score(value: Any, scale: tuple[float, float]) -> float | None:
    if value is None:
        return None
    low, high = scale
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise web.HTTPBadRequest(text=f"score: a number from {low} to {high}, or null\n")
    return float(value)


def _label_json(label: ReviewLabel) -> dict[str, Any]:
    return dataclasses.asdict(label)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: a free one); a port in use is a usage
    error naming the flag."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be used ({exc.strerror})"
        raise UsageError(
            f"--port {port}: 127.0.0.1:{port} {why}; pick another port, or 0 for a free one"
        ) from None
    sock.listen(128)
    return sock


async def serve(
    review: Review, sock: socket.socket, *, token: str, on_ready: Callable[[str], None]
) -> None:
    """Serve `review` on `sock` until cancelled (Ctrl-C); `on_ready` gets the page's URL,
    token included, once the server answers."""
    port = int(sock.getsockname()[1])
    # Ctrl-C waits this long at most for a request being answered (a label being written)
    runner = web.AppRunner(
        build_app(review, token=token, port=port), access_log=None, shutdown_timeout=5.0
    )
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        on_ready(f"http://127.0.0.1:{port}/?token={token}")
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
