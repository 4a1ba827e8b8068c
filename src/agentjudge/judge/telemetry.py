"""OpenTelemetry metrics of the judge interaction, named as SPEC-trajectories §6 names them.

No exporter is configured by default (the API's no-op meter). `configure_exporter()` adds an
OTLP exporter when OTEL_EXPORTER_OTLP_ENDPOINT is set; tests pass a meter whose provider
has the SDK's in-memory reader.
"""

from __future__ import annotations

import os

from opentelemetry import metrics
from opentelemetry.metrics import Meter

from agentjudge.errors import UsageError

METRIC_NAMES = (
    "atif.judge.call.latency",
    "atif.judge.call.count",
    "atif.judge.call.success",
    "atif.judge.call.errors",
    "atif.judge.protocol.errors",
    "atif.judge.token.count",
)


class JudgeMetrics:
    """The six instruments; HTTP success and protocol validity are separate counters."""

    def __init__(self, meter: Meter | None = None) -> None:
        meter = meter or metrics.get_meter("agentjudge")
        self.latency = meter.create_histogram(
            "atif.judge.call.latency", unit="ms", description="Per-request judge latency"
        )
        self.calls = meter.create_counter("atif.judge.call.count", description="Judge requests")
        self.successes = meter.create_counter(
            "atif.judge.call.success", description="Judge requests answered with HTTP 2xx"
        )
        self.errors = meter.create_counter(
            "atif.judge.call.errors", description="Transport and HTTP errors"
        )
        self.protocol_errors = meter.create_counter(
            "atif.judge.protocol.errors", description="Answers that are not a usable verdict"
        )
        self.tokens = meter.create_counter(
            "atif.judge.token.count", unit="{token}", description="Judge tokens by direction"
        )


def configure_exporter() -> bool:
    """Export metrics over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; True if configured."""
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return False
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    except ImportError:
        raise UsageError(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but the OTLP exporter is not installed: "
            "pip install 'agentjudge[otlp]'"
        ) from None
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    reader = PeriodicExportingMetricReader(OTLPMetricExporter())
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    return True
