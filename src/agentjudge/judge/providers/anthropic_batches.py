"""Anthropic's Message Batches API, as Anthropic documents it (docs/judge.md, "Batch mode").

`POST /v1/messages/batches` with `{"requests": [{"custom_id", "params"}]}`, `params` being
a Messages request's body; at most 100,000 requests or 256 MB a batch; a `custom_id`
matches `^[a-zA-Z0-9_-]{1,64}$`. `GET /v1/messages/batches/{id}` tells its
`processing_status` (`in_progress`, `canceling`, `ended`) and `request_counts`; once
ended, `results_url` serves JSONL lines `{"custom_id", "result": {"type": ...}}`, the type
`succeeded` (with the `message`), `errored` (with the `error`), `canceled` (its batch was
cancelled, `POST /v1/messages/batches/{id}/cancel`) or `expired`.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from agentjudge.judge.providers.anthropic import Anthropic
from agentjudge.judge.providers.batches import (
    BatchApi,
    BatchState,
    Completed,
    Outcome,
    Send,
    Unfinished,
    counts_of,
    exchange,
    json_lines,
    json_object,
)

MAX_REQUESTS = 100_000
# "256 MB": read as 256,000,000 bytes, under the limit whether the provider means MB or MiB
MAX_BYTES = 256_000_000
# a batch's body is its entries, comma-separated, inside this
BODY_START, BODY_END = b'{"requests":[', b"]}"
# an errored request's `error.type`, as the HTTP status an online call would have had
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicBatches(BatchApi):
    """The Message Batches API of an `anthropic` judge's server."""

    name = "anthropic"
    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES
    overhead = len(BODY_START) + len(BODY_END)

    def __init__(self, provider: Anthropic) -> None:
        self.url = f"{provider.endpoint}/batches"  # beside `{base}/v1/messages`
        self.headers = dict(provider._headers)  # its key and API version
        self.secrets = provider.secrets

    def entry(self, custom_id: str, built: httpx.Request) -> bytes:
        return orjson.dumps({"custom_id": custom_id, "params": orjson.Fragment(built.content)})

    async def submit(self, send: Send, entries: list[bytes], token: str) -> str:
        # a Message Batch keeps no tag of ours: `find` cannot tell, and answers None
        body = BODY_START + b",".join(entries) + BODY_END
        asked = httpx.Request("POST", self.url, headers=self.headers, content=body)
        created = json_object(await exchange(send, asked, "batch create", self.secrets), "batch")
        return str(created.get("id"))

    async def state(self, send: Send, batch_id: str) -> BatchState:
        asked = httpx.Request("GET", f"{self.url}/{batch_id}", headers=self.headers)
        data = json_object(await exchange(send, asked, f"batch {batch_id}", self.secrets), "batch")
        status = str(data.get("processing_status"))
        url = data.get("results_url")
        return BatchState(
            batch_id,
            status,
            status == "ended",
            counts_of(data.get("request_counts")),
            (url,) if isinstance(url, str) else (),
        )

    async def results(self, send: Send, state: BatchState) -> dict[str, Outcome]:
        out: dict[str, Outcome] = {}
        for url in state.results:
            asked = httpx.Request("GET", url, headers=self.headers)
            body = await exchange(send, asked, f"results of batch {state.id}", self.secrets)
            for line in json_lines(body):
                out[line["custom_id"]] = _outcome(line.get("result"))
        return out


def _outcome(result: Any) -> Outcome:
    kind = result.get("type") if isinstance(result, dict) else None
    if kind == "succeeded":
        return Completed(200, orjson.dumps(result.get("message")))
    if kind == "errored":
        error = result.get("error")
        # `{"type": "error", "error": {"type", "message"}}`, the body of an online refusal
        inner = error.get("error") if isinstance(error, dict) else None
        error_type = inner.get("type") if isinstance(inner, dict) else None
        return Completed(ERROR_STATUS.get(str(error_type), 500), orjson.dumps(error))
    if kind in ("canceled", "expired"):
        return Unfinished(f"batch_{kind}", f"the request was {kind} in its batch")
    return Unfinished("batch_errored", "the batch reported no result for the request")
