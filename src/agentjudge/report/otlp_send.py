"""Evaluations sent to an OTLP/HTTP receiver (`score --otlp-evaluations URL`), through
the OpenTelemetry SDK's exporters, in the two forms receivers take:

- a `gen_ai.evaluation.result` event: a log record of that event name whose trace and span
  id are the judged span's (the GenAI conventions' form; to `URL/v1/logs`), for log
  backends and collectors;
- a span `evaluation NAME` whose parent is the judged span, carrying the same event and
  attributes (to `URL/v1/traces`), for receivers that keep only traces (Phoenix, MLflow,
  Jaeger): the verdict shows under the step it judged.

A receiver that takes either form has them; one that takes neither is one note. Headers
(an API key) come from `OTEL_EXPORTER_OTLP_HEADERS` (or `..._LOGS_` / `..._TRACES_`), read
by the exporters; the URL is only ever said redacted. A receiver that refused a batch is
not sent the next ones, so a receiver that is down costs one export timeout per form.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from opentelemetry import trace
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    LogRecordExporter,
    LogRecordExportResult,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from agentjudge import __version__
from agentjudge.errors import UsageError
from agentjudge.judge.secrets import redact_endpoint
from agentjudge.judge.telemetry import EXPORT_TIMEOUT
from agentjudge.report.otlp_evaluations import EVENT_NAME, Evaluation

Note = Callable[[str], None]
BATCH = 512
# Phoenix shows a span of this OpenInference kind as an evaluator's
_OPENINFERENCE_KIND = {"openinference.span.kind": "EVALUATOR"}


@dataclass(frozen=True)
class Delivery:
    """How many evaluations each form reached the receiver in."""

    total: int
    events: int
    spans: int

    @property
    def taken(self) -> bool:
        """The receiver has every evaluation in one form at least."""
        return self.total in (self.events, self.spans)

    def forms(self) -> str:
        """What was sent, for the line that says so."""
        if self.events == self.spans == self.total:
            return "as log events and as spans"
        if self.events == self.total:
            return "as log events (the receiver took no spans)"
        return "as spans (the receiver took no log events)"


def check_receiver_url(url: str, flag: str) -> None:
    """A usage error (exit 3) unless `url` is an http(s) URL with a host: said before any
    judging, not found out after it."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"{flag} {redact_endpoint(url)!r} is not an OTLP/HTTP receiver's base URL: give "
            "http(s)://HOST:PORT (e.g. http://127.0.0.1:4318)"
        )


def signal_endpoint(url: str, signal: str) -> str:
    """`url` as an OTLP/HTTP base (as `OTEL_EXPORTER_OTLP_ENDPOINT` is): `/v1/SIGNAL`
    added to its path."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/v1/{signal}"))


def send(
    found: Sequence[Evaluation], url: str, note: Note, timeout: float = EXPORT_TIMEOUT
) -> Delivery:
    """Export `found` to the OTLP/HTTP receiver at base `url` in both forms; a note when
    the receiver took neither in full (or the exporter is not installed)."""
    delivery = Delivery(len(found), 0, 0)
    if not found:
        return delivery
    try:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        note(
            f"evaluations are asked for ({redact_endpoint(url)}) but the OTLP exporter is not "
            "installed (pip install 'agentjudge[otlp]'): none were sent"
        )
        return delivery
    resource = Resource.create({"service.name": "agentjudge", "service.version": __version__})
    with _sdk_quiet():
        events = _Logs(OTLPLogExporter(endpoint=signal_endpoint(url, "logs"), timeout=timeout))
        _emit_events(found, events, resource, timeout)
        spans = _Spans(OTLPSpanExporter(endpoint=signal_endpoint(url, "traces"), timeout=timeout))
        _emit_spans(found, spans, resource, timeout)
    delivery = Delivery(len(found), events.sent, spans.sent)
    if not delivery.taken:
        note(
            f"evaluations could not be sent to {redact_endpoint(url)} (the receiver took "
            f"{delivery.events} of {len(found)} as log events, {delivery.spans} as spans); "
            "the results file is written"
        )
    return delivery


def _emit_events(
    found: Sequence[Evaluation], exporter: _Logs, resource: Resource, timeout: float
) -> None:
    provider = LoggerProvider(resource=resource)
    provider.add_log_record_processor(_batches(BatchLogRecordProcessor, exporter, found, timeout))
    logger = provider.get_logger("agentjudge", __version__)
    for evaluation in found:
        logger.emit(
            context=_judged(evaluation),
            event_name=EVENT_NAME,
            attributes=evaluation.attributes(),
        )
    provider.force_flush(int(timeout * 1000) * (1 + len(found) // BATCH))
    provider.shutdown()


def _emit_spans(
    found: Sequence[Evaluation], exporter: _Spans, resource: Resource, timeout: float
) -> None:
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(_batches(BatchSpanProcessor, exporter, found, timeout))
    tracer = provider.get_tracer("agentjudge", __version__)
    for evaluation in found:
        attributes = {**evaluation.attributes(), **_OPENINFERENCE_KIND}
        span = tracer.start_span(
            f"evaluation {evaluation.name}", context=_judged(evaluation), attributes=attributes
        )
        span.add_event(EVENT_NAME, evaluation.attributes())
        span.end()
    provider.force_flush(int(timeout * 1000) * (1 + len(found) // BATCH))
    provider.shutdown()


def _batches(kind: Any, exporter: Any, found: Sequence[Evaluation], timeout: float) -> Any:
    """A batch processor that holds every evaluation until flushed (none is dropped)."""
    return kind(
        exporter,
        max_queue_size=max(len(found), BATCH),
        max_export_batch_size=BATCH,
        schedule_delay_millis=60_000,
        export_timeout_millis=int(timeout * 1000),
    )


def _judged(evaluation: Evaluation) -> Any:
    """A context whose current span is the judged one (remote, sampled): the SDK takes a
    log record's trace and span id, or a span's parent, from it."""
    span = SpanContext(
        trace_id=int(evaluation.trace_id, 16),
        span_id=int(evaluation.span_id, 16),
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    return trace.set_span_in_context(NonRecordingSpan(span))


class _Tally:
    """What an exporter sent; after a refused batch, the next ones are refused unsent."""

    def __init__(self) -> None:
        self.sent = 0
        self.refused = False

    def _export(self, call: Callable[[], Any], size: int, success: Any) -> bool:
        if self.refused:
            return False
        try:
            taken = bool(call() == success)
        except Exception:  # the processor would log and drop it: counted as refused
            taken = False
        self.sent += size if taken else 0
        self.refused = not taken
        return taken


class _Logs(LogRecordExporter, _Tally):
    def __init__(self, inner: Any) -> None:
        _Tally.__init__(self)
        self._inner = inner

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        success = LogRecordExportResult.SUCCESS
        if self._export(lambda: self._inner.export(batch), len(batch), success):
            return success
        return LogRecordExportResult.FAILURE

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # nothing is held here: each batch is exported when it comes


class _Spans(SpanExporter, _Tally):
    def __init__(self, inner: Any) -> None:
        _Tally.__init__(self)
        self._inner = inner

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        success = SpanExportResult.SUCCESS
        if self._export(lambda: self._inner.export(spans), len(spans), success):
            return success
        return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # nothing is held here: each batch is exported when it comes


@contextlib.contextmanager
def _sdk_quiet() -> Iterator[None]:
    """The SDK logs each failed export, with its endpoint (credentials and all); our one
    note says it instead."""
    otel = logging.getLogger("opentelemetry")
    saved = (otel.handlers[:], otel.propagate)
    otel.handlers[:] = [logging.NullHandler()]
    otel.propagate = False
    try:
        yield
    finally:
        otel.handlers[:], otel.propagate = saved
