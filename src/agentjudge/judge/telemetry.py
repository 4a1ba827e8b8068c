"""OpenTelemetry metrics of the judge interaction, named as SPEC-trajectories §6 names them.

No exporter is configured by default (the API's no-op meter). `exporting()` adds an OTLP
exporter for a job when the standard variables ask for one (`OTEL_EXPORTER_OTLP_ENDPOINT`
or `..._METRICS_ENDPOINT`; `OTEL_EXPORTER_OTLP_PROTOCOL` `grpc` or `http/protobuf`, the
default), and sends what the job measured when it ends. Telemetry never breaks a job: a
missing exporter package or a collector that does not answer is one note (a `warning:` line),
and the job goes on. Tests pass a meter whose provider has the SDK's in-memory reader.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import Meter

from agentjudge.judge.secrets import redact_endpoint

METRIC_NAMES = (
    "atif.judge.call.latency",
    "atif.judge.call.count",
    "atif.judge.call.success",
    "atif.judge.call.errors",
    "atif.judge.protocol.errors",
    "atif.judge.token.count",
)
# Seconds one export may take when OTEL_EXPORTER_OTLP_TIMEOUT does not say (the SDK's 10 s
# would hold the end of every job whose collector is down).
EXPORT_TIMEOUT = 5.0
MAX_EXPORT_TIMEOUT = 30.0
Note = Callable[[str], None]


class JudgeMetrics:
    """The six instruments; HTTP success and protocol validity are separate counters.

    `labels` go on every point (a job's id, benchmark and scoring mode, say)."""

    def __init__(self, meter: Meter | None = None, labels: Mapping[str, str] | None = None) -> None:
        meter = meter or metrics.get_meter("agentjudge")
        self.labels = dict(labels or {})
        self._latency = meter.create_histogram(
            "atif.judge.call.latency", unit="ms", description="Per-request judge latency"
        )
        self._calls = meter.create_counter("atif.judge.call.count", description="Judge requests")
        self._successes = meter.create_counter(
            "atif.judge.call.success", description="Judge requests answered with HTTP 2xx"
        )
        self._errors = meter.create_counter(
            "atif.judge.call.errors", description="Transport and HTTP errors"
        )
        self._protocol_errors = meter.create_counter(
            "atif.judge.protocol.errors", description="Answers that are not a usable verdict"
        )
        self._tokens = meter.create_counter(
            "atif.judge.token.count", unit="{token}", description="Judge tokens by direction"
        )

    def call(self) -> None:
        self._calls.add(1, self.labels)

    def success(self) -> None:
        self._successes.add(1, self.labels)

    def latency(self, milliseconds: float) -> None:
        self._latency.record(milliseconds, self.labels)

    def error(self, kind: str) -> None:
        self._errors.add(1, {**self.labels, "error.type": kind})

    def protocol_error(self, kind: str) -> None:
        self._protocol_errors.add(1, {**self.labels, "error.type": kind})

    def tokens(self, input_tokens: int, output_tokens: int) -> None:
        self._tokens.add(input_tokens, {**self.labels, "direction": "input"})
        self._tokens.add(output_tokens, {**self.labels, "direction": "output"})


def _note_on_stderr(text: str) -> None:
    """A note on stderr, prefixed `warning:` as telemetry's lines always were."""
    import sys

    print(f"warning: {text}", file=sys.stderr)


@contextlib.contextmanager
def exporting(note: Note = _note_on_stderr) -> Iterator[Meter | None]:
    """A meter whose metrics are exported over OTLP, if the environment asks for it (else
    None: the no-op meter); what it measured is sent when the block ends, within the
    export timeout. Each job has a provider of its own: nothing global is set."""
    otel = logging.getLogger("opentelemetry")
    saved = (otel.handlers[:], otel.propagate)
    # the SDK's retries and failures (and its complaints about settings): one line of ours
    otel.handlers[:] = [_OneNote(note, redact_endpoint(_endpoint()))]
    otel.propagate = False
    try:
        made = _provider(note)
        if made is None:
            yield None
            return
        provider, timeout = made
        try:
            yield provider.get_meter("agentjudge")
        finally:
            provider.shutdown(timeout_millis=timeout * 1000)
    finally:
        otel.handlers[:], otel.propagate = saved


def _endpoint() -> str:
    return (
        os.environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or ""
    )


def _provider(note: Note) -> tuple[Any, float] | None:
    """A meter provider exporting over OTLP, and its export timeout in seconds; None when
    the environment asks for none or it cannot be made (said in one note)."""
    endpoint = _endpoint()
    if not endpoint:
        return None
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).lower()
    timeout = _timeout(note)
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                OTLPMetricExporter,
            )
        elif protocol == "http/protobuf":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (  # type: ignore[assignment]
                OTLPMetricExporter,
            )
        else:
            note(
                f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not one agentjudge exports with "
                "(grpc, http/protobuf): no metrics are exported; the job goes on"
            )
            return None
    except ImportError:
        note(
            f"OpenTelemetry metrics are asked for ({protocol} to {redact_endpoint(endpoint)}) "
            "but the OTLP "
            "exporter is not installed (pip install 'agentjudge[otlp]'): no metrics are "
            "exported; the job goes on"
        )
        return None
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(timeout=timeout), export_timeout_millis=timeout * 1000
    )
    return MeterProvider(metric_readers=[reader]), timeout


def _timeout(note: Note) -> float:
    """The export timeout in seconds, at most MAX_EXPORT_TIMEOUT. The specification gives
    OTEL_EXPORTER_OTLP_TIMEOUT in milliseconds and Python's exporter reads seconds: a value
    over 120 is taken as milliseconds. One that is not a number is said in a note."""
    name = (
        "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT"
        if os.environ.get("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT")
        else "OTEL_EXPORTER_OTLP_TIMEOUT"
    )
    raw = os.environ.get(name)
    if not raw:
        return EXPORT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        note(f"{name}={raw[:40]} is not a number: exporting with {EXPORT_TIMEOUT:g} s")
        return EXPORT_TIMEOUT
    if not value > 0:
        return EXPORT_TIMEOUT
    seconds = value / 1000 if value > 120 else value
    return min(seconds, MAX_EXPORT_TIMEOUT)


class _OneNote(logging.Handler):
    """The first failure the OpenTelemetry SDK logs, as one line; nothing after it."""

    def __init__(self, note: Note, endpoint: str) -> None:
        super().__init__(logging.WARNING)
        self._note = note
        self._endpoint = endpoint
        self._said = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._said:
            return
        self._said = True
        self._note(
            f"OpenTelemetry metrics could not be exported to {self._endpoint} (the collector "
            "did not take them); the job goes on"
        )
