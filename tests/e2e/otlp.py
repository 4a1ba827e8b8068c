"""A real OTLP metrics receiver on 127.0.0.1: the collector's gRPC MetricsService, in
process, keeping what it is sent."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from typing import Any

import grpc  # type: ignore[import-untyped]
from opentelemetry.proto.collector.metrics.v1 import (
    metrics_service_pb2,
    metrics_service_pb2_grpc,
)

from tests.e2e.conftest import free_port


class Receiver(metrics_service_pb2_grpc.MetricsServiceServicer):
    """Keeps every point it receives as (metric name, attributes), and the last value of
    each (a counter's sum, a histogram's count: cumulative, so the last is the total)."""

    def __init__(self) -> None:
        self.points: list[tuple[str, dict[str, Any]]] = []
        self.values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._lock = threading.Lock()
        self.endpoint = ""
        self.stop: Callable[[], None] = lambda: None

    def Export(self, request: Any, context: Any) -> Any:
        with self._lock:
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        kind = metric.WhichOneof("data")
                        for point in getattr(metric, kind).data_points:
                            attributes = {a.key: a.value.string_value for a in point.attributes}
                            self.points.append((metric.name, attributes))
                            key = (metric.name, tuple(sorted(attributes.items())))
                            if kind == "histogram":
                                self.values[key] = point.count
                            else:
                                self.values[key] = point.as_int or point.as_double
        return metrics_service_pb2.ExportMetricsServiceResponse()

    def names(self) -> set[str]:
        with self._lock:
            return {name for name, _ in self.points}


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """A receiver listening at its `endpoint` until the block ends (or it is `stop`ped)."""
    receiver = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(receiver, server)  # type: ignore[no-untyped-call]
    port = free_port()
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    receiver.endpoint = f"http://127.0.0.1:{port}"
    receiver.stop = lambda: server.stop(grace=None).wait()
    try:
        yield receiver
    finally:
        server.stop(grace=None)
