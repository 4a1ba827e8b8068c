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
import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

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


class Measures(Protocol):
    """What a judge client measures, call by call (`JudgeMetrics`, `RecordedMetrics`)."""

    def call(self) -> None: ...
    def success(self) -> None: ...
    def latency(self, milliseconds: float) -> None: ...
    def error(self, kind: str) -> None: ...
    def protocol_error(self, kind: str) -> None: ...
    def tokens(self, input_tokens: int, output_tokens: int) -> None: ...


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

    def call(self, count: int = 1) -> None:
        self._calls.add(count, self.labels)

    def success(self, count: int = 1) -> None:
        self._successes.add(count, self.labels)

    def latency(self, milliseconds: float) -> None:
        self._latency.record(milliseconds, self.labels)

    def error(self, kind: str, count: int = 1) -> None:
        self._errors.add(count, {**self.labels, "error.type": kind})

    def protocol_error(self, kind: str, count: int = 1) -> None:
        self._protocol_errors.add(count, {**self.labels, "error.type": kind})

    def tokens(self, input_tokens: int, output_tokens: int) -> None:
        self._tokens.add(input_tokens, {**self.labels, "direction": "input"})
        self._tokens.add(output_tokens, {**self.labels, "direction": "output"})


@dataclass
class RecordedMetrics:
    """A judge client's measurements kept as totals and latencies instead of sent to a
    meter. A job on Ray judges in workers that export nothing themselves: each unit carries
    these back, and the driver replays them into the job's own meter (`replay`), so the
    collector receives the points a local run of the job would send (one exporter, the
    job's labels, no worker's process to configure)."""

    calls: int = 0
    successes: int = 0
    latencies: list[float] = field(default_factory=list)  # milliseconds, one per call
    errors: Counter[str] = field(default_factory=Counter)
    protocol_errors: Counter[str] = field(default_factory=Counter)
    input_tokens: int = 0
    output_tokens: int = 0
    answers: int = 0  # answers whose tokens were counted

    def call(self) -> None:
        self.calls += 1

    def success(self) -> None:
        self.successes += 1

    def latency(self, milliseconds: float) -> None:
        self.latencies.append(milliseconds)

    def error(self, kind: str) -> None:
        self.errors[kind] += 1

    def protocol_error(self, kind: str) -> None:
        self.protocol_errors[kind] += 1

    def tokens(self, input_tokens: int, output_tokens: int) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.answers += 1

    def replay(self, into: JudgeMetrics) -> None:
        """Add everything recorded to `into`'s instruments. A counter nothing was recorded
        in gets no point, as it would have got none in a local run."""
        if self.calls:
            into.call(self.calls)
        if self.successes:
            into.success(self.successes)
        for milliseconds in self.latencies:
            into.latency(milliseconds)
        for kind, count in self.errors.items():
            into.error(kind, count)
        for kind, count in self.protocol_errors.items():
            into.protocol_error(kind, count)
        if self.answers:
            into.tokens(self.input_tokens, self.output_tokens)


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
            # sent here, in this thread, while our handler hears the SDK: an export left
            # to the reader's thread outlives the block and logs its failure a second time
            provider.force_flush(timeout_millis=timeout * 1000)
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

    # no periodic export (no thread of its own): what a job measured is sent when it ends
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(timeout=timeout),
        export_interval_millis=math.inf,
        export_timeout_millis=timeout * 1000,
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
