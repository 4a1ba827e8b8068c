"""OpenTelemetry metrics: the spec's names, HTTP success and protocol validity counted apart."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    HistogramDataPoint,
    InMemoryMetricReader,
    NumberDataPoint,
)

from agentjudge.errors import UsageError
from agentjudge.judge import JudgeClient
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.secrets import load_api_key, redact_url
from agentjudge.judge.telemetry import METRIC_NAMES, JudgeMetrics, RecordedMetrics, exporting
from agentjudge.testing import JudgeServer, Script
from tests.judge.resume_worker import item_request

pytestmark = pytest.mark.timeout(30)


def collect(reader: InMemoryMetricReader) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    data = reader.get_metrics_data()
    assert data is not None
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    attrs = tuple(sorted((k, str(v)) for k, v in (point.attributes or {}).items()))
                    # counters carry a value, histograms a count of recordings
                    if isinstance(point, HistogramDataPoint):
                        out[(metric.name, attrs)] = point.count
                    elif isinstance(point, NumberDataPoint):
                        out[(metric.name, attrs)] = point.value
    return out


def test_metrics_count_success_and_protocol_errors_separately() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    with JudgeServer(Script(malformed="bool_score")) as server:

        async def go() -> None:
            async with JudgeClient(
                OpenAICompatible(server.base_url, "judge"), meter=meter
            ) as client:
                await client.judge(item_request(1))

        asyncio.run(go())
    values = collect(reader)
    assert values[("atif.judge.call.count", ())] == 2
    assert values[("atif.judge.call.success", ())] == 2
    assert values[("atif.judge.protocol.errors", (("error.type", "score_not_number"),))] == 2
    assert values[("atif.judge.call.latency", ())] == 2
    assert values[("atif.judge.token.count", (("direction", "input"),))] > 0
    assert {name for name, _ in values} <= set(METRIC_NAMES)


def test_transport_errors_are_counted() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    with JudgeServer(Script(fail_first=1, fail_first_fault="503", retry_after=0)) as server:

        async def go() -> None:
            client = JudgeClient(
                OpenAICompatible(server.base_url, "judge"), meter=meter, initial_backoff=0.01
            )
            async with client:
                await client.judge(item_request(1))

        asyncio.run(go())
    values = collect(reader)
    assert values[("atif.judge.call.errors", (("error.type", "http_503"),))] == 1
    assert values[("atif.judge.call.success", ())] == 1


def histogram_sums(reader: InMemoryMetricReader) -> dict[str, float]:
    data = reader.get_metrics_data()
    assert data is not None
    return {
        metric.name: point.sum
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
        if isinstance(point, HistogramDataPoint)
    }


def test_recorded_measurements_replay_as_the_points_a_meter_would_have_taken() -> None:
    labels = {"atif.scoring_mode": "default"}
    direct, replayed = InMemoryMetricReader(), InMemoryMetricReader()
    meter = JudgeMetrics(MeterProvider(metric_readers=[direct]).get_meter("a"), labels)
    recorded = RecordedMetrics()
    events: list[tuple[str, tuple[str | float, ...]]] = [
        ("call", ()), ("latency", (51.5,)), ("error", ("http_503",)),
        ("call", ()), ("latency", (49.25,)), ("success", ()), ("tokens", (1200, 30)),
        ("call", ()), ("latency", (60.0,)), ("success", ()),
        ("protocol_error", ("score_not_number",)),
        ("call", ()), ("latency", (70.0,)), ("error", ("timeout",)), ("error", ("http_503",)),
    ]  # fmt: skip
    for name, args in events:
        getattr(meter, name)(*args)
        getattr(recorded, name)(*args)
    into = JudgeMetrics(MeterProvider(metric_readers=[replayed]).get_meter("b"), labels)
    recorded.replay(into)
    assert collect(replayed) == collect(direct)
    assert histogram_sums(replayed) == histogram_sums(direct) == {"atif.judge.call.latency": 230.75}
    assert collect(direct)[("atif.judge.call.errors", (
        ("atif.scoring_mode", "default"), ("error.type", "http_503")
    ))] == 2  # fmt: skip


def test_a_recorded_counter_with_nothing_in_it_gets_no_point() -> None:
    reader = InMemoryMetricReader()
    into = JudgeMetrics(MeterProvider(metric_readers=[reader]).get_meter("test"))
    recorded = RecordedMetrics()
    recorded.call()
    recorded.latency(10.0)
    recorded.error("timeout")
    recorded.replay(into)
    assert {name for name, _ in collect(reader)} == {
        "atif.judge.call.count", "atif.judge.call.latency", "atif.judge.call.errors"
    }  # fmt: skip


def test_a_client_given_measures_records_there_and_not_on_its_meter() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    recorded = RecordedMetrics()
    with JudgeServer(Script(fail_first=1, fail_first_fault="503", retry_after=0)) as server:

        async def go() -> None:
            client = JudgeClient(
                OpenAICompatible(server.base_url, "judge"),
                meter=meter,
                measures=recorded,
                initial_backoff=0.01,
            )
            async with client:
                await client.judge(item_request(1))

        asyncio.run(go())
    assert reader.get_metrics_data() is None or collect(reader) == {}
    assert (recorded.calls, recorded.successes, dict(recorded.errors)) == (2, 1, {"http_503": 1})
    assert len(recorded.latencies) == 2
    assert recorded.answers == 1
    assert recorded.input_tokens > 0


def test_no_exporter_unless_the_environment_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    said: list[str] = []
    with exporting(said.append):
        pass
    assert said == []


def test_an_exporter_that_cannot_be_made_is_one_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:pw@127.0.0.1:9")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    said: list[str] = []
    with exporting(said.append):
        pass
    assert said == [
        "OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not one agentjudge exports with (grpc, "
        "http/protobuf): no metrics are exported; the job goes on"
    ]
    # the package missing (as in an image built without the otlp extra)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc.metric_exporter", None)
    said.clear()
    with exporting(said.append):
        pass
    assert len(said) == 1
    assert "the OTLP exporter is not installed (pip install 'agentjudge[otlp]')" in said[0]
    assert "pw" not in said[0]


def test_api_key_from_file_or_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTJUDGE_JUDGE_API_KEY", "sk-env")
    assert load_api_key() == "sk-env"
    secret = tmp_path / "key"
    secret.write_text("sk-file\n")
    assert load_api_key(secret) == "sk-file"
    with pytest.raises(UsageError) as caught:
        load_api_key(tmp_path / "missing")
    assert "cannot read the judge API key file" in str(caught.value)
    secret.write_text("\n")
    with pytest.raises(UsageError, match="is empty"):
        load_api_key(secret)
    monkeypatch.delenv("AGENTJUDGE_JUDGE_API_KEY")
    assert load_api_key() is None


def test_credentials_in_urls_are_masked() -> None:
    assert redact_url("https://user:pw@judge.example/v1") == "https://***@judge.example/v1"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_each_job_exports_with_a_provider_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.e2e.otlp import otlp_receiver

    with otlp_receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        for job in ("first", "second"):  # two jobs in one process (a library's user)
            with exporting() as meter:
                assert meter is not None
                JudgeMetrics(meter, {"job": job}).call()
        jobs = {attrs["job"] for name, attrs in receiver.points if name == "atif.judge.call.count"}
    assert jobs == {"first", "second"}


@pytest.mark.parametrize(("value", "said"), [("10s", True), ("10000", False), ("-1", False)])
def test_a_timeout_setting_never_breaks_the_job(
    monkeypatch: pytest.MonkeyPatch, value: str, said: bool
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", value)
    notes: list[str] = []
    started = time.monotonic()
    with exporting(notes.append):
        pass  # nothing measured: nothing to send, however long the timeout
    assert time.monotonic() - started < 5
    assert bool(notes) == said


SILENT_COLLECTOR = """
import sys
from agentjudge.judge.telemetry import JudgeMetrics, exporting

with exporting() as meter:
    JudgeMetrics(meter, {"job": "x"}).call()
print("ended", file=sys.stderr)
"""


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_a_collector_that_never_answers_is_one_note_and_nothing_after(
    tmp_path: Path, protocol: str
) -> None:
    """It was said once by us and again by the SDK's thread, after the job had ended."""
    with socket.socket() as listening:  # takes connections, never answers
        listening.bind(("127.0.0.1", 0))
        listening.listen(16)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(sys.path),
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{listening.getsockname()[1]}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
            "OTEL_EXPORTER_OTLP_TIMEOUT": "1",
        }
        done = subprocess.run(
            [sys.executable, "-c", SILENT_COLLECTOR],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    lines = done.stderr.splitlines()
    assert lines[-1] == "ended", done.stderr
    assert len(lines) == 2, done.stderr
    assert lines[0].startswith("warning: OpenTelemetry metrics could not be exported to")
