"""What `send` puts on the wire (decoded from the OTLP protobuf a receiver gets), what a
receiver that takes one form only or none makes of it, and the URL checks."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentjudge.errors import UsageError
from agentjudge.report.otlp_evaluations import Evaluation
from agentjudge.report.otlp_send import check_receiver_url, send, signal_endpoint

TRACE = "0af7651916cd43dd8448eb211c80319c"
FOUND = [
    Evaluation(TRACE, "00f067aa0ba902b7", "agentjudge.step_score", 0.9, "pass", "good"),
    Evaluation(TRACE, "53995c3f42cd8ad8", "agentjudge.step_score", 0.2, "fail", "deleted"),
]


class Receiver(ThreadingHTTPServer):
    def __init__(self, status: dict[str, int]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.status = status  # by path; 200 when not named
        self.bodies: dict[str, list[bytes]] = {"/v1/logs": [], "/v1/traces": []}


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        status = self.server.status.get(self.path, 200)
        if status == 200:
            self.server.bodies[self.path].append(body)
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def receiver(**status: int) -> Iterator[Receiver]:
    server = Receiver({f"/v1/{signal}": code for signal, code in status.items()})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def attributes(message: Any) -> dict[str, Any]:
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in message.attributes}


def test_each_evaluation_is_a_log_event_on_its_span_and_a_child_span_of_it() -> None:
    notes: list[str] = []
    with receiver() as server:
        delivery = send(FOUND, f"http://127.0.0.1:{server.server_port}", notes.append)
    assert notes == []
    assert delivery.taken
    assert (delivery.events, delivery.spans) == (2, 2)
    logs = ExportLogsServiceRequest()
    logs.ParseFromString(b"".join(server.bodies["/v1/logs"]))
    records = [r for rl in logs.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert [(r.event_name, r.trace_id.hex(), r.span_id.hex()) for r in records] == [
        ("gen_ai.evaluation.result", e.trace_id, e.span_id) for e in FOUND
    ]
    assert attributes(records[1]) == FOUND[1].attributes()
    traces = ExportTraceServiceRequest()
    traces.ParseFromString(b"".join(server.bodies["/v1/traces"]))
    spans = [s for rs in traces.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert [(s.trace_id.hex(), s.parent_span_id.hex()) for s in spans] == [
        (e.trace_id, e.span_id) for e in FOUND
    ]
    assert spans[0].name == "evaluation agentjudge.step_score"
    assert [(ev.name, attributes(ev)) for ev in spans[1].events] == [
        ("gen_ai.evaluation.result", FOUND[1].attributes())
    ]


def test_a_receiver_of_traces_only_has_them_as_spans_without_a_warning() -> None:
    notes: list[str] = []
    with receiver(logs=405) as server:  # Phoenix answers /v1/logs so
        delivery = send(FOUND, f"http://127.0.0.1:{server.server_port}/", notes.append)
    assert notes == []
    assert (delivery.events, delivery.spans) == (0, 2)
    assert delivery.forms() == "as spans (the receiver took no log events)"


def test_a_receiver_that_is_down_is_one_note_without_the_credentials() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    notes: list[str] = []
    delivery = send(FOUND, f"http://user:s3cret@127.0.0.1:{port}", notes.append, timeout=1)
    assert not delivery.taken
    assert len(notes) == 1
    assert "0 of 2 as log events, 0 as spans" in notes[0]
    assert "s3cret" not in notes[0]
    assert f"127.0.0.1:{port}" in notes[0]


def test_the_url_is_a_base_the_signals_paths_are_added_to() -> None:
    assert signal_endpoint("http://h:4318", "logs") == "http://h:4318/v1/logs"
    assert signal_endpoint("https://u:p@h/otel/", "traces") == "https://u:p@h/otel/v1/traces"


def test_a_url_that_is_no_receivers_is_a_usage_error_without_its_secret() -> None:
    with pytest.raises(UsageError, match="--otlp-evaluations") as raised:
        check_receiver_url("ftp://u:s3cret@h", "--otlp-evaluations")
    assert "s3cret" not in str(raised.value)
    check_receiver_url("https://collector.example:4318", "--otlp-evaluations")
