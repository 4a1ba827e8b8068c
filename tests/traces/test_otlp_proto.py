"""OTLP protobuf trace files (the Collector's length-prefixed records, or one bare message)
read as their OTLP/JSON originals are: same runs, same steps, same tree."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.conftest import FIXTURES
from tests.traces.test_span_readers import agentjudge

TRACES = FIXTURES / "traces"
ORIGINALS = (
    "otlp-genai/pydantic-ai__subagent-pass.otlp.json",
    "otlp-genai/openai-agents-otel__tool-error.otlp.json",
    "openinference/langgraph__subagent-pass.otlp.json",
)


def message(doc: dict[str, Any]) -> bytes:
    """An OTLP/JSON export as protobuf: ids are hex in OTLP/JSON, base64 in the protobuf
    JSON mapping that json_format reads."""
    doc = copy.deepcopy(doc)
    for resource_spans in doc["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return bytes(json_format.ParseDict(doc, ExportTraceServiceRequest()).SerializeToString())


def per_span(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The export cut into one export per span (resource and scope kept), as a batching
    exporter might send them."""
    exports = []
    for resource_spans in doc["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                one = {**scope_spans, "spans": [span]}
                exports.append({"resourceSpans": [{**resource_spans, "scopeSpans": [one]}]})
    return exports


def records(docs: list[dict[str, Any]]) -> bytes:
    """Length-prefixed records, as the Collector's file exporter writes (`format: proto`)."""
    out = b""
    for doc in docs:
        data = message(doc)
        out += len(data).to_bytes(4, "big") + data
    return out


def converted(path: Path, tmp_path: Path, *options: str) -> dict[str, Any]:
    """`convert traces` of one file: each run's ATIF document, by run, with each step's
    source line left out (a record number in protobuf, a line in JSON)."""
    out = tmp_path / f"out-{path.name}"
    done = agentjudge("convert", "traces", *options, "--out", out, path, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    documents = {}
    for written in sorted(out.glob("*.json")):
        run = written.name.rpartition("__")[2]
        text = json.dumps(json.loads(written.read_text()))
        documents[run] = json.loads(text, object_hook=_without_line)
    assert documents
    return documents


def _without_line(obj: dict[str, Any]) -> dict[str, Any]:
    if "span_id" in obj:
        obj.pop("line", None)
    return obj


@pytest.mark.parametrize("original", ORIGINALS)
def test_protobuf_records_and_a_bare_message_convert_as_the_json_does(
    original: str, tmp_path: Path
) -> None:
    doc = json.loads((TRACES / original).read_text())
    source = tmp_path / "run.otlp.json"
    source.write_text(json.dumps(doc))
    framed = tmp_path / "run.pb"
    framed.write_bytes(records(per_span(doc)))
    bare = tmp_path / "run.binpb"
    bare.write_bytes(message(doc))
    expected = converted(source, tmp_path)
    assert converted(framed, tmp_path) == expected
    assert converted(bare, tmp_path) == expected


def test_validate_and_the_format_names_read_protobuf(tmp_path: Path) -> None:
    doc = json.loads((TRACES / ORIGINALS[2]).read_text())
    (tmp_path / "run.otlp.json").write_text(json.dumps(doc))
    (tmp_path / "run.otlp").write_bytes(records(per_span(doc)))
    (tmp_path / "run.dat").write_bytes(records(per_span(doc)))
    as_json = agentjudge("validate", "--json", "run.otlp.json", cwd=tmp_path)
    as_proto = agentjudge("validate", "--json", "run.otlp", cwd=tmp_path)
    assert as_json.returncode == as_proto.returncode == 0, as_proto.stdout + as_proto.stderr
    # the file's name is in every node's id: the JSON's named as the protobuf's
    roots = [
        json.loads(done.stdout.replace("run.otlp.json", "run.otlp"))["roots"]
        for done in (as_json, as_proto)
    ]
    assert roots[0] == roots[1]
    assert roots[0][0]["subagents"] == 1
    # no protobuf name: read only when its format is named (the convention, either encoding)
    refused = agentjudge("validate", "run.dat", cwd=tmp_path)
    assert refused.returncode == 1
    forced = agentjudge("validate", "--format", "openinference", "run.dat", cwd=tmp_path)
    assert forced.returncode == 0, forced.stdout + forced.stderr


@pytest.mark.parametrize(
    ("damage", "where"),
    [
        (lambda data, cut: data[: cut + 40], "record 2"),  # cut inside the second record
        (lambda data, cut: data[: cut + 2], "record 2"),  # cut inside its length
        (lambda data, cut: data[:cut] + b"\x00\x00\x00\x04\xff\xff\xff\xff", "record 2"),
    ],
)
def test_a_damaged_protobuf_file_is_one_line_naming_file_and_record(
    damage: Any, where: str, tmp_path: Path
) -> None:
    doc = json.loads((TRACES / ORIGINALS[0]).read_text())
    parts = per_span(doc)
    first = records(parts[:1])
    (tmp_path / "run.pb").write_bytes(damage(records(parts), len(first)))
    done = agentjudge("validate", "--format", "otlp-genai", "run.pb", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "run.pb: " in line]
    assert len(lines) == 1, done.stdout + done.stderr
    assert f"run.pb: {where}: " in lines[0]
    assert "Traceback" not in done.stderr
