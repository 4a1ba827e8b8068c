"""OpenAI's Batch API, as OpenAI documents it (docs/judge.md, "Batch mode").

The requests go in a JSONL file uploaded to `POST /v1/files` with purpose `batch`, one
line each: `{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`, at most
50,000 lines and 200 MB a file. `POST /v1/batches` with the file's id, that endpoint and a
`completion_window` of `24h` starts the batch; `GET /v1/batches/{id}` tells its `status`
(`validating`, `in_progress`, `finalizing`, `cancelling` before it ends; `completed`,
`failed`, `expired`, `cancelled` once it has). The results are JSONL files,
`output_file_id` (requests that succeeded) and `error_file_id` (those that did not), read
at `GET /v1/files/{id}/content`; each line has the request's `custom_id` and either a
`response` (`status_code`, `body`) or an `error` (`code`, `message`: `batch_expired` for
a request the window closed on, `batch_cancelled` for one a cancellation stopped). A
batch's `metadata` (up to 16 pairs) carries our submission token, and `GET /v1/batches`
lists batches newest first (`limit` up to 100, `after`, `has_more`): a run killed before
it learned a batch's id finds the batch by it.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from agentjudge.judge.providers.base import fit_to_show
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
    once,
)
from agentjudge.judge.providers.openai_compatible import OpenAICompatible

MAX_REQUESTS = 50_000
# "200 MB": read as 200,000,000 bytes, under the limit whether the provider means MB or MiB
MAX_BYTES = 200_000_000
COMPLETION_WINDOW = "24h"
CHAT_ENDPOINT = "/v1/chat/completions"  # a batch endpoint OpenAI accepts
# the batch's `metadata` key that carries our submission token (see `find`)
TOKEN_KEY = "agentjudge_submission"
MAX_LIST_PAGES = 20  # of 100 batches: how far back `find` looks
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
# an `error.code` of a line in the error file, as the batcher's fixed kinds name it
UNFINISHED_KINDS = {"batch_expired": "batch_expired", "batch_cancelled": "batch_canceled"}


class OpenAIBatches(BatchApi):
    """The Batch API of an `openai` judge's server (`{base}/files`, `{base}/batches`)."""

    name = "openai"
    findable = True
    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    def __init__(self, provider: OpenAICompatible) -> None:
        self.base = provider.base_url
        # the line's `url` and the batch's `endpoint`: the API's own path, one of those
        # OpenAI lists, whatever prefix a proxy's base URL adds before it (`/x/v1/...`
        # would be refused as an invalid endpoint)
        self.path = CHAT_ENDPOINT
        self.headers = provider.auth_headers(provider._api_key)  # the key it was given
        self.secrets = provider.secrets

    def entry(self, custom_id: str, built: httpx.Request) -> bytes:
        body = orjson.Fragment(built.content)  # the online call's body, as built
        line = {"custom_id": custom_id, "method": "POST", "url": self.path, "body": body}
        return orjson.dumps(line)

    async def submit(self, send: Send, entries: list[bytes], token: str) -> str:
        upload = httpx.Request(
            "POST",
            f"{self.base}/files",
            headers=self.headers,
            data={"purpose": "batch"},
            files={"file": ("agentjudge-batch.jsonl", b"\n".join(entries), "application/jsonl")},
        )
        uploaded = json_object(await exchange(send, upload, "file upload", self.secrets), "files")
        create = once(  # a lost answer is looked for by the token (`find`), not sent again
            httpx.Request(
                "POST",
                f"{self.base}/batches",
                headers=self.headers,
                json={
                    "input_file_id": uploaded.get("id"),
                    "endpoint": self.path,
                    "completion_window": COMPLETION_WINDOW,
                    "metadata": {TOKEN_KEY: token},
                },
            )
        )
        created = json_object(await exchange(send, create, "batch create", self.secrets), "batches")
        return str(created.get("id"))

    async def find(self, send: Send, token: str, since: float) -> str | None:
        # the list is newest first: pages are read back to the submission's time
        after: str | None = None
        for _ in range(MAX_LIST_PAGES):
            query = {"limit": "100", **({"after": after} if after else {})}
            asked = httpx.Request("GET", f"{self.base}/batches", headers=self.headers, params=query)
            listed = json_object(await exchange(send, asked, "batch list", self.secrets), "list")
            batches = listed.get("data")
            if not isinstance(batches, list) or not batches:
                return None
            for batch in batches:
                metadata = batch.get("metadata") if isinstance(batch, dict) else None
                if isinstance(metadata, dict) and metadata.get(TOKEN_KEY) == token:
                    return str(batch.get("id"))
            last = batches[-1] if isinstance(batches[-1], dict) else {}
            created = last.get("created_at")
            if not listed.get("has_more") or (isinstance(created, int) and created < since - 60):
                return None
            after = str(last.get("id"))
        return None

    async def state(self, send: Send, batch_id: str) -> BatchState:
        asked = httpx.Request("GET", f"{self.base}/batches/{batch_id}", headers=self.headers)
        data = json_object(await exchange(send, asked, f"batch {batch_id}", self.secrets), "batch")
        status = str(data.get("status"))
        files = tuple(
            str(data[name])
            for name in ("output_file_id", "error_file_id")
            if isinstance(data.get(name), str)
        )
        return BatchState(
            batch_id,
            status,
            status in ENDED,
            counts_of(data.get("request_counts")),
            files,
            # the provider's words, shown and kept as an online refusal's are: secrets masked
            fit_to_show(_errors(data.get("errors")), self.secrets)
            or (f"the batch {status}" if status == "failed" else ""),
        )

    async def results(self, send: Send, state: BatchState) -> dict[str, Outcome]:
        out: dict[str, Outcome] = {}
        for file_id in state.results:
            asked = httpx.Request(
                "GET", f"{self.base}/files/{file_id}/content", headers=self.headers
            )
            body = await exchange(send, asked, f"results file {file_id}", self.secrets)
            for line in json_lines(body):
                outcome = _outcome(line)
                if isinstance(outcome, Unfinished):  # the provider's words: secrets masked
                    outcome = Unfinished(outcome.kind, fit_to_show(outcome.message, self.secrets))
                out[line["custom_id"]] = outcome
        return out


def _outcome(line: dict[str, Any]) -> Outcome:
    response = line.get("response")
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        return Completed(response["status_code"], orjson.dumps(response.get("body")))
    error = line.get("error")
    code = str(error.get("code")) if isinstance(error, dict) else "batch_errored"
    message = error.get("message") if isinstance(error, dict) else None
    return Unfinished(UNFINISHED_KINDS.get(code, "batch_errored"), str(message or code))


def _errors(errors: object) -> str:
    """The messages of a batch's `errors.data` (why it failed validation), on one line."""
    data = errors.get("data") if isinstance(errors, dict) else None
    if not isinstance(data, list):
        return ""
    said = [str(e.get("message")) for e in data if isinstance(e, dict) and e.get("message")]
    return "; ".join(said[:3])
