"""OTLP protobuf trace files: their `ExportTraceServiceRequest`s, one at a time, in the
shape OTLP/JSON gives (docs/formats.md), so the span readers map both encodings alike.

Protobuf has no magic number, so the file's name and first bytes decide:

- a file of records, as the Collector's file exporter writes with `format: proto`: each
  message preceded by its length, 4 bytes big-endian; read one record at a time, each at
  most `max_file_bytes`;
- one bare message (`TracesData` is the same on the wire), read whole up to
  `max_file_bytes`. A bare message starts with byte 0x0A (field 1, `resource_spans`); a
  record's length starting with that byte would be 160 MiB or more, so that byte decides.

Decoding needs `opentelemetry-proto` (the `otlp` extra).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from agentjudge.errors import InputError, Problem

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

# What a protobuf trace file is called: detection reads no other name as protobuf.
SUFFIXES = (".pb", ".binpb", ".otlp")
# Names only protobuf wears: read as such even when forced with --format.
_BINARY_ONLY = (".pb", ".binpb")
_BARE_START = b"\x0a"  # field 1 (resource_spans), length-delimited
_PREFIX = 4
# How much of a file the encoding is decided on (what format detection reads).
HEAD_BYTES = 64 * 1024
_IDS = ("traceId", "spanId", "parentSpanId")


def is_protobuf(path: Path, head: bytes) -> bool:
    """Whether a file of an OTLP format is read as protobuf rather than JSON: a `.pb` /
    `.binpb` name, or (JSON starts with `{`) a `.otlp` name or a first byte a record's
    length or a bare message starts with."""
    suffix = path.suffix.lower()
    if suffix in _BINARY_ONLY:
        return True
    if head.lstrip()[:1] == b"{":
        return False
    return suffix in SUFFIXES or head[:1] in (b"\x00", _BARE_START)


def looks_like_export(path: Path, head: bytes) -> bool:
    """Detection: a protobuf file name, and a first message that parses as an export with
    spans when the file's first bytes hold all of it (else its framing checked)."""
    if path.suffix.lower() not in SUFFIXES or not is_protobuf(path, head):
        return False
    if head[:1] == _BARE_START:
        whole = _size(path) == len(head)
        return _parses(head) if whole else True
    if len(head) <= _PREFIX:
        return False
    length = int.from_bytes(head[:_PREFIX], "big")
    record = head[_PREFIX : _PREFIX + length]
    if len(record) < length:
        return record[:1] == _BARE_START
    return _parses(record)


def exports(path: Path, display: str, max_file_bytes: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each export of a protobuf file with where it was read (`record N`), as OTLP/JSON
    would hold it (camelCase names, hex ids, int64 as strings, enums by name).

    Raises `InputError` naming the file and the record for a truncated or undecodable
    record, one over `max_file_bytes`, or a missing `opentelemetry-proto`.
    """
    message_type = _message_type(display)
    with path.open("rb") as stream:
        first = stream.read(1)
        stream.seek(0)
        if first == _BARE_START:
            size = _size(path)
            if size > max_file_bytes:
                raise _problem(
                    display,
                    "record 1",
                    "limit.max_file_bytes",
                    f"one protobuf message of {size} bytes, more than max_file_bytes="
                    f"{max_file_bytes}; raise the limit (--max-file-bytes) or write "
                    "length-prefixed records (the Collector's file exporter does)",
                )
            yield "record 1", _decoded(message_type, stream.read(), "record 1", display)
            return
        yield from _records(stream, message_type, display, max_file_bytes)


def _records(
    stream: BinaryIO, message_type: type[ExportTraceServiceRequest], display: str, limit: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    number = 0
    while prefix := stream.read(_PREFIX):
        number += 1
        where = f"record {number}"
        if len(prefix) < _PREFIX:
            raise _problem(
                display,
                where,
                "otlp.proto_truncated",
                f"the file ends inside a record's 4-byte length ({len(prefix)} bytes left); "
                "the file was cut short: remove the partial record or export it again",
            )
        length = int.from_bytes(prefix, "big")
        if length > limit:
            raise _problem(
                display,
                where,
                "limit.max_file_bytes",
                f"a record of {length} bytes, more than max_file_bytes={limit}; raise the "
                "limit (--max-file-bytes) or export in smaller batches (or this is no "
                "length-prefixed OTLP protobuf file)",
            )
        data = stream.read(length)
        if len(data) < length:
            raise _problem(
                display,
                where,
                "otlp.proto_truncated",
                f"the record's length says {length} bytes but the file holds {len(data)} "
                "more; the file was cut short: remove the partial record or export it again",
            )
        yield where, _decoded(message_type, data, where, display)


def _decoded(
    message_type: type[ExportTraceServiceRequest], data: bytes, where: str, display: str
) -> dict[str, Any]:
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError

    message = message_type()
    try:
        message.ParseFromString(data)
    except DecodeError:
        raise _problem(
            display,
            where,
            "otlp.proto_invalid",
            "does not decode as an OTLP ExportTraceServiceRequest: the record is corrupt, "
            "or the file is no OTLP protobuf; export it again, or name its format with "
            "--format",
        ) from None
    doc: dict[str, Any] = json_format.MessageToDict(message)
    for resource_spans in doc.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                _hex_ids(span)
    return doc


def _hex_ids(span: dict[str, Any]) -> None:
    """Ids as OTLP/JSON writes them (hex), where the protobuf JSON mapping gives base64."""
    for key in _IDS:
        value = span.get(key)
        if isinstance(value, str):
            span[key] = base64.b64decode(value).hex()


def _parses(data: bytes) -> bool:
    try:
        message_type = _message_type("")
    except InputError:
        return False
    from google.protobuf.message import DecodeError

    message = message_type()
    try:
        message.ParseFromString(data)
    except DecodeError:
        return False
    return len(message.resource_spans) > 0


def _message_type(display: str) -> type[ExportTraceServiceRequest]:
    try:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError:
        raise _problem(
            display,
            "$",
            "otlp.needs_proto",
            "is OTLP protobuf: install agentjudge[otlp] (opentelemetry-proto) to read it, "
            "or export the traces as OTLP/JSON",
        ) from None
    return ExportTraceServiceRequest


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _problem(display: str, where: str, rule: str, message: str) -> InputError:
    return InputError([Problem(display, where, rule, message)])
