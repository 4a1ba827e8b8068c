"""What a provider's batch API is: how to put built requests into a batch, submit it, ask
where it stands and read its results (docs/judge.md, "Batch mode"). agentjudge never
cancels a batch (a killed run's batches serve the next run); one cancelled by someone else
ends with its unfinished requests canceled, and they go into a later batch.

Like a provider, a batch API only translates: every HTTP request goes out through `send`,
which the batcher (`judge/batching.py`) gives it with retries on 429/5xx/transport
errors (but for a request marked `once`, which the batcher looks for instead); the
waiting, the ledger of batch ids and the retries of a batch's failed requests live there.
A batch entry carries the very body the provider's `build` made for an online call (build
apart from send, as httpx does), so a batch asks exactly what a call would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from agentjudge.errors import JudgeError
from agentjudge.judge.providers.base import fit_to_show

# One HTTP exchange as the batcher makes it: the status and the whole body.
Send = Callable[[httpx.Request], Awaitable[tuple[int, bytes]]]
# a request's extension: not sent again after a failure that leaves unknown whether the
# server acted on it (a timeout, a dropped connection, a 5xx); a 429 is still retried
NOT_RETRIED_IF_UNKNOWN = "agentjudge.not_retried_if_unknown"


def once(request: httpx.Request) -> httpx.Request:
    """`request`, marked not to be sent again when its fate is unknown (a batch's creation
    that the caller can look for by its tag rather than create twice)."""
    request.extensions[NOT_RETRIED_IF_UNKNOWN] = True
    return request


@dataclass(frozen=True, slots=True)
class Completed:
    """A request the batch ran: the HTTP status and body an online call would have had."""

    status: int
    body: bytes


@dataclass(frozen=True, slots=True)
class Unfinished:
    """A request the batch did not run to an answer (expired, canceled, or failed with the
    whole batch): `kind` is fixed (`batch_expired`, `batch_canceled`, `batch_failed`...)."""

    kind: str
    message: str = ""


Outcome = Completed | Unfinished


@dataclass(frozen=True, slots=True)
class BatchState:
    """Where a submitted batch stands. `ended`: the provider will change nothing more;
    `results`: where its results are read (file ids, or a URL); `message`: why a batch
    ended without results (a failed validation), for every request it held."""

    id: str
    status: str  # the provider's own word
    ended: bool
    counts: dict[str, int] = field(default_factory=dict)
    results: tuple[str, ...] = ()
    message: str = ""


class BatchGone(JudgeError):
    """A batch, or its results, that the provider no longer has (deleted, archived,
    expired files): its requests are submitted again."""


class BatchApi:
    """One provider's batch API. `max_requests` and `max_bytes` are its documented limits
    of one batch; a batch is cut before either is reached. `overhead`: the bytes of a
    batch's body beside its entries (each entry's separator counted by `size`)."""

    name: str = "batch"
    # whether `find` can tell a batch by our token: a creation whose answer was lost is
    # then looked for rather than sent again (and submitted twice)
    findable: bool = False
    max_requests: int = 0
    max_bytes: int = 0
    overhead: int = 0

    def entry(self, custom_id: str, built: httpx.Request) -> bytes:
        """One request of a batch (its line of a JSONL file, or its item of a list)."""
        raise NotImplementedError

    def size(self, entry: bytes) -> int:
        """The bytes `entry` adds to a batch."""
        return len(entry) + 1

    async def submit(self, send: Send, entries: list[bytes], token: str) -> str:
        """Submit one batch of `entries`, tagged with our `token` where the API keeps a
        tag; its id."""
        raise NotImplementedError

    async def find(self, send: Send, token: str, since: float) -> str | None:
        """The id of the batch submitted with `token` at `since` (a Unix time) or after,
        when the API can tell; None when it has none, or cannot tell."""
        return None

    async def state(self, send: Send, batch_id: str) -> BatchState:
        """Where the batch stands now."""
        raise NotImplementedError

    async def results(self, send: Send, state: BatchState) -> dict[str, Outcome]:
        """An ended batch's results by custom id (a request the provider reports no
        result for is missing)."""
        raise NotImplementedError


async def exchange(
    send: Send, request: httpx.Request, what: str, secrets: tuple[str, ...] = ()
) -> bytes:
    """`request`'s body, or `JudgeError` naming `what` failed (`BatchGone` on a 404)."""
    status, body = await send(request)
    if 200 <= status < 300:
        return body
    message = fit_to_show(body.decode("utf-8", "replace"), secrets)
    if status == 404:
        raise BatchGone("batch_gone", f"{what}: {message}")
    raise JudgeError(f"http_{status}", f"{what}: {message}")


def json_object(body: bytes, what: str) -> dict[str, Any]:
    """`body` as a JSON object, or `JudgeError` saying `what` answered something else."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise JudgeError("batch_protocol_error", f"{what} did not answer a JSON object")
    return data


def json_lines(body: bytes) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL body (blank or unreadable lines are left out: their
    requests have no result and are asked again)."""
    out = []
    for line in body.splitlines():
        if not line.strip():
            continue
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("custom_id"), str):
            out.append(data)
    return out


def counts_of(value: object) -> dict[str, int]:
    """A `request_counts` object's integer fields."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}
