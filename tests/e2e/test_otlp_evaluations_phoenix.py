"""`score --otlp-evaluations` against Phoenix (`phoenix serve`, the real one, on 127.0.0.1):
the producer's trace is in Phoenix first, as a user's would be; each verdict read back
from Phoenix's own REST API hangs under the span it judged, with its name, value, label
and explanation.

`make test` installs Phoenix in a virtualenv of its own (`.venv/peers/phoenix`) and
requires this test; elsewhere it is skipped when Phoenix is missing.
"""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentjudge.testing import JudgeServer
from tests.conftest import FIXTURES, REPO
from tests.e2e.conftest import free_port, start, stop, wait_for
from tests.e2e.test_score_cli import judge_flags, score

PHOENIX = Path(os.environ.get("AGENTJUDGE_PHOENIX", REPO / ".venv/peers/phoenix/bin/phoenix"))
TRACE = FIXTURES / "traces" / "otlp-genai" / "pydantic-ai__subagent-pass.otlp.json"

if not PHOENIX.exists():
    if os.environ.get("AGENTJUDGE_PHOENIX_TESTS") == "required":
        raise RuntimeError(f"Phoenix is not installed at {PHOENIX}: run `make test`")
    pytest.skip(f"Phoenix is not installed at {PHOENIX}", allow_module_level=True)

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Phoenix's base URL: its UI, REST API and OTLP/HTTP receiver share the port."""
    folder = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(folder),  # its sqlite database, nowhere else
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    proc = start([str(PHOENIX), "serve"], folder / "phoenix.log", folder, env)
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", 120)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


def otlp_protobuf(path: Path) -> bytes:
    """The OTLP/JSON export file as the protobuf request a producer's exporter sends (OTLP
    JSON writes ids in hex, protobuf's JSON mapping in base64)."""
    document = json.loads(path.read_text())
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    request = json_format.ParseDict(document, ExportTraceServiceRequest())
    return bytes(request.SerializeToString())


def spans(phoenix: str, trace_id: str) -> list[dict[str, Any]]:
    answer = httpx.get(
        f"{phoenix}/v1/projects/default/spans",
        params={"trace_id": trace_id, "limit": 1000},
        timeout=10,
    )
    answer.raise_for_status()
    return list(answer.json()["data"])


def stored(phoenix: str, trace_id: str, evaluators: int) -> list[dict[str, Any]]:
    """The trace's spans once Phoenix holds `evaluators` evaluator spans in it: a 200 from
    its OTLP endpoint only queues the spans, which its bulk inserter writes a moment later
    (later still on a busy machine)."""
    deadline = time.monotonic() + 60
    while True:
        held = spans(phoenix, trace_id)
        if sum(span["span_kind"] == "EVALUATOR" for span in held) >= evaluators:
            return held
        if time.monotonic() > deadline:
            return held  # the assertions below say what is missing
        time.sleep(0.25)


def test_verdicts_hang_under_the_spans_they_judged(phoenix: str, tmp_path: Path) -> None:
    sent = httpx.post(
        f"{phoenix}/v1/traces",
        content=otlp_protobuf(TRACE),
        headers={"Content-Type": "application/x-protobuf"},
        timeout=10,
    )
    assert sent.status_code == 200, sent.text
    with JudgeServer() as judge:
        done = score(
            TRACE, "-o", tmp_path / "results.json", *judge_flags(judge),
            "--otlp-evaluations", phoenix, cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    threshold = results["run_parameters"]["failure_threshold"]
    (tree,) = results["trajectories"]
    expected: list[tuple[str, str, int | None, float, str]] = []
    for node in tree["nodes"]:
        for step in node["steps"]:
            label = "fail" if step["score"] < threshold else "pass"
            span_id, step_id = step["origin"]["span_id"], step["step_id"]
            expected.append((span_id, "agentjudge.step_score", step_id, step["score"], label))
        if node["trajectory_id"] != node["session_id"]:  # the agent's span is known
            label = "pass" if node["passed"] else "fail"
            span_id = node["trajectory_id"]
            expected.append((span_id, "agentjudge.agent_score", None, node["aggregate"], label))
    # pydantic-ai's outer agent has no invoke_agent span; its subagent has one
    assert len(expected) == 7
    assert f"7 evaluations sent to {phoenix} as spans" in done.stderr
    held = stored(phoenix, tree["nodes"][0]["session_id"], len(expected))
    recorded = {span["context"]["span_id"]: span for span in held}
    got: list[tuple[str, str, int | None, float, str]] = []
    for span in held:
        attributes = span["attributes"]
        if span["span_kind"] != "EVALUATOR":
            continue
        assert span["parent_id"] in recorded  # a span of the producer's trace
        assert recorded[span["parent_id"]]["span_kind"] != "EVALUATOR"
        (event,) = span["events"]
        assert event["name"] == "gen_ai.evaluation.result"
        assert event["attributes"] == attributes
        assert attributes["gen_ai.evaluation.explanation"]
        got.append((
            span["parent_id"],
            attributes["gen_ai.evaluation.name"],
            attributes.get("agentjudge.step_id"),
            attributes["gen_ai.evaluation.score.value"],
            attributes["gen_ai.evaluation.score.label"],
        ))  # fmt: skip
    assert sorted(got, key=str) == sorted(expected, key=str)
