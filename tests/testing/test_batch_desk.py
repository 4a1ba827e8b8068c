"""The mimics' batch endpoints refuse what each provider documents refusing, and process a
batch in the background (testing/batch_desk.py)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from agentjudge.testing import JudgeServer, Script

KEY = "sk-desk-key-0123456789"
OPENAI = {"authorization": f"Bearer {KEY}"}
ANTHROPIC = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Step [[score=0.7]]"}]}


def upload(server: JudgeServer, lines: list[dict[str, Any]]) -> str:
    content = b"\n".join(json.dumps(line).encode() for line in lines)
    files = {"file": ("in.jsonl", content, "application/jsonl")}
    sent = httpx.post(
        f"{server.base_url}/files", headers=OPENAI, data={"purpose": "batch"}, files=files
    )
    assert sent.status_code == 200, sent.text
    return str(sent.json()["id"])


def create(base: str, file_id: str) -> httpx.Response:
    body = {
        "input_file_id": file_id,
        "endpoint": "/v1/chat/completions",
        "completion_window": "24h",
    }
    return httpx.post(f"{base}/batches", headers=OPENAI, json=body)


def line(custom_id: str, url: str = "/v1/chat/completions") -> dict[str, Any]:
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": CHAT}


def wait_for(url: str, headers: dict[str, str], field: str, values: set[str]) -> dict[str, Any]:
    for _ in range(200):
        data: dict[str, Any] = httpx.get(url, headers=headers).json()
        if data[field] in values:
            return data
        time.sleep(0.02)
    raise AssertionError(f"{url} never reached {values}")


def test_openai_refuses_another_completion_window_and_fails_a_bad_file() -> None:
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        file_id = upload(server, [line("a"), line("a"), line("b", "/v1/embeddings")])
        base = server.base_url
        body = {"input_file_id": file_id, "endpoint": "/v1/chat/completions"}
        late = httpx.post(
            f"{base}/batches", headers=OPENAI, json={**body, "completion_window": "1h"}
        )
        assert late.status_code == 400
        created = create(base, file_id)
        assert created.status_code == 200
        batch = wait_for(f"{base}/batches/{created.json()['id']}", OPENAI, "status", {"failed"})
        assert [e["code"] for e in batch["errors"]["data"]] == [
            "duplicate_custom_id",
            "mismatched_endpoint",
        ]
        assert server.batches is not None
        assert server.batches.batches_submitted == 1
        no_key = httpx.post(f"{base}/batches", json={**body, "completion_window": "24h"})
        assert no_key.status_code == 401


def test_openai_batch_answers_in_the_output_file_after_its_delay() -> None:
    with JudgeServer(Script(batch_delay=0.3), mimic="openai", api_key=KEY) as server:
        file_id = upload(server, [line("a"), line("b")])
        base = server.base_url
        created = create(base, file_id)
        batch_id = created.json()["id"]
        assert httpx.get(f"{base}/batches/{batch_id}", headers=OPENAI).json()["status"] in {
            "validating",
            "in_progress",
        }
        batch = wait_for(f"{base}/batches/{batch_id}", OPENAI, "status", {"completed"})
        assert batch["request_counts"] == {"total": 2, "completed": 2, "failed": 0}
        assert batch["error_file_id"] is None
        out = httpx.get(f"{base}/files/{batch['output_file_id']}/content", headers=OPENAI)
        lines = [json.loads(text) for text in out.text.splitlines()]
        assert [entry["custom_id"] for entry in lines] == ["a", "b"]
        verdict = json.loads(lines[0]["response"]["body"]["choices"][0]["message"]["content"])
        assert verdict["score"] == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("requests", "why"),
    [
        ([], "1 to 100000"),
        ([{"custom_id": "has space", "params": {}}], "custom_id"),
        ([{"custom_id": "x" * 65, "params": {}}], "custom_id"),
        ([{"custom_id": "a", "params": {}}, {"custom_id": "a", "params": {}}], "Duplicate"),
    ],
)
def test_anthropic_refuses_what_its_docs_refuse(requests: list[Any], why: str) -> None:
    with JudgeServer(mimic="anthropic", api_key=KEY) as server:
        sent = httpx.post(
            f"{server.base_url}/v1/messages/batches", headers=ANTHROPIC, json={"requests": requests}
        )
        assert sent.status_code == 400
        assert why in sent.json()["error"]["message"]
        assert server.batches is not None
        assert server.batches.batches_submitted == 0


def test_anthropic_expired_batch_reports_each_request_expired() -> None:
    params = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Step [[score=0.7]]"}],
    }
    with JudgeServer(Script(batch_expire_first=1), mimic="anthropic", api_key=KEY) as server:
        url = f"{server.base_url}/v1/messages/batches"
        requests = [{"custom_id": "a", "params": params}, {"custom_id": "b", "params": params}]
        created = httpx.post(url, headers=ANTHROPIC, json={"requests": requests}).json()
        batch = wait_for(f"{url}/{created['id']}", ANTHROPIC, "processing_status", {"ended"})
        assert batch["request_counts"]["expired"] == 2
        results = httpx.get(batch["results_url"], headers=ANTHROPIC).text.splitlines()
        assert [json.loads(r)["result"]["type"] for r in results] == ["expired", "expired"]
        again = httpx.post(url, headers=ANTHROPIC, json={"requests": requests}).json()
        batch = wait_for(f"{url}/{again['id']}", ANTHROPIC, "processing_status", {"ended"})
        assert batch["request_counts"]["succeeded"] == 2


def test_a_cancelled_batch_ends_with_its_requests_cancelled() -> None:
    with JudgeServer(Script(batch_delay=0.3), mimic="openai", api_key=KEY) as server:
        base = server.base_url
        batch_id = create(base, upload(server, [line("a"), line("b")])).json()["id"]
        cancelling = httpx.post(f"{base}/batches/{batch_id}/cancel", headers=OPENAI).json()
        assert cancelling["status"] == "cancelling"
        batch = wait_for(f"{base}/batches/{batch_id}", OPENAI, "status", {"cancelled"})
        assert batch["output_file_id"] is None
        errors = httpx.get(f"{base}/files/{batch['error_file_id']}/content", headers=OPENAI)
        codes = [json.loads(text)["error"]["code"] for text in errors.text.splitlines()]
        assert codes == ["batch_cancelled", "batch_cancelled"]
