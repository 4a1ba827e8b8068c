"""The toy task world the producer drivers share: a workspace of three files, its tools,
the two agents' instructions, the runs' prompts, and the OTLP/JSON file the spans go to.

Run as `python -m tests.e2e.producers.<driver> MODEL_URL OUT_DIR RUN...` from the
repository's root, in the producers' virtualenv.
"""

from __future__ import annotations

import argparse
import base64
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

FILES = {
    "draft.txt": "TODO: delete me before the release.\n",
    "notes.txt": "Team meeting moved to Thursday 3pm. Bring the Q3 numbers.\n",
    "numbers.txt": "17\n25\n",
}
COORDINATOR = (
    "You are the coordinator of a small file-workspace assistant. Use the tools to answer. "
    "Delegate look-ups to the researcher with ask_researcher when the user asks for it."
)
RESEARCHER = (
    "You are the researcher. Look things up in the user's workspace and report exactly "
    "what you find."
)
# run -> the user's prompt; the test's agent scripts know these phrases
PROMPTS = {
    "sum-pass": "What is the sum of the numbers in numbers.txt? Read the file and use the "
    "add_numbers tool. [[score=0.6]]",
    "subagent-pass": "Ask the researcher what my notes file says, then summarise it for me "
    "in one sentence. [[score=0.9]]",
}
API_KEY = "sk-local-test"  # the test server takes any key; no real one reaches a driver
MODEL = "gpt-4o-mini"  # the name the frameworks send; the server echoes it


class Workspace:
    """The files one run's tools act on (a fresh copy per run)."""

    def __init__(self) -> None:
        self.files = dict(FILES)

    def read_file(self, path: str) -> str:
        """Read a text file from the user's workspace."""
        if path not in self.files:
            raise FileNotFoundError(f"No such file: {path}")
        return self.files[path]

    def list_files(self) -> list[str]:
        """List the files in the user's workspace."""
        return sorted(self.files)

    @staticmethod
    def add_numbers(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b


def tracer_provider(service: str) -> tuple[TracerProvider, InMemorySpanExporter]:
    """A tracer provider whose every ended span is kept in memory until written."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def write_otlp_json(spans: Sequence[ReadableSpan], path: Path) -> None:
    """The spans as one OTLP/JSON ExportTraceServiceRequest on one line, as the
    Collector's file exporter writes it: the OTLP exporters' own protobuf encoding in
    protobuf's JSON mapping, with trace and span ids in hex (the OTLP/JSON rule, where
    the JSON mapping would give base64)."""
    document = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _hex_ids(span, ("traceId", "spanId", "parentSpanId"))
                for link in span.get("links", []):
                    _hex_ids(link, ("traceId", "spanId"))
    path.write_text(json.dumps(document, separators=(",", ":")) + "\n")


def _hex_ids(record: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if record.get(key):
            record[key] = base64.b64decode(record[key]).hex()


def main(
    service: str,
    instrument: Callable[[TracerProvider], None],
    run: Callable[[str, str, Workspace], str],
) -> None:
    """Instrument the framework with a tracer provider, then run the runs named on the
    command line with `run(model_url, prompt, workspace)` (it returns the final answer):
    each run's spans into OUT_DIR/<run>.otlp.json, its answer to stdout."""
    parser = argparse.ArgumentParser()
    parser.add_argument("model_url")
    parser.add_argument("out", type=Path)
    parser.add_argument("runs", nargs="+", choices=sorted(PROMPTS))
    args = parser.parse_args()
    provider, exporter = tracer_provider(service)
    instrument(provider)
    for name in args.runs:
        answer = run(args.model_url, PROMPTS[name], Workspace())
        provider.force_flush()
        write_otlp_json(exporter.get_finished_spans(), args.out / f"{name}.otlp.json")
        exporter.clear()
        print(json.dumps({"run": name, "answer": answer}))
