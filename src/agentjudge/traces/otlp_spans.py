"""OTLP/JSON trace files read into spans grouped per trace: what both span readers share.

The OpenTelemetry Collector's file exporter writes one `ExportTraceServiceRequest` per
line (`resourceSpans` → `scopeSpans` → `spans`); other tools write one such document,
possibly pretty-printed. A file whose first line is a whole JSON object is read line by
line, each export parsed and cut down to the few fields a reader maps (`Span`) before the
next is read, so memory follows the mapped content rather than the file; any other file is
read whole, up to `max_file_bytes`. Ids are kept as written (hex in OTLP/JSON); enums may be
numbers or their names (`STATUS_CODE_ERROR`), as the protobuf JSON mapping allows both.
Protobuf files (`otlp_proto`) are read one export at a time into that same JSON shape, each
span's `line` then counting records.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import orjson

from agentjudge.errors import InputError, Problem, clip
from agentjudge.nesting import MAX_JSON_DEPTH, BoundedReader, TooDeep
from agentjudge.traces import otlp_proto

# The head of an OTLP/JSON export, whichever writer: sniffed in a file's first bytes.
RESOURCE_SPANS = b'"resourceSpans"'
_STATUS_ERROR = (2, "2", "STATUS_CODE_ERROR")


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """A span event (the older GenAI conventions carry messages in these)."""

    name: str
    attributes: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Span:
    """One span, as much of it as a reader maps; `line` is where it was read (1-based)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    error: str | None  # the status message of an ERROR span ("" when it gave none)
    attributes: Mapping[str, Any]
    events: tuple[SpanEvent, ...]
    resource: Mapping[str, Any]
    line: int

    @property
    def where(self) -> str:
        """How a message names this span: trace and span id."""
        return f"trace {self.trace_id} span {self.span_id}"


R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Placed(Generic[R]):
    """Where a span sits in its trace, and what a reader made of it (`role`): the span's
    attributes are dropped once read, so a trace held until the file ends costs what the
    reader keeps, not what the producer wrote."""

    trace_id: str
    span_id: str
    parent_id: str | None
    start: int
    line: int
    role: R


def is_otlp(head: bytes) -> bool:
    """Whether a file's first bytes look like an OTLP/JSON trace export."""
    return head.lstrip()[:1] == b"{" and RESOURCE_SPANS in head


def is_otlp_export(path: Path, head: bytes) -> bool:
    """Whether a file looks like an OTLP trace export, in JSON or protobuf."""
    return is_otlp(head) or otlp_proto.looks_like_export(path, head)


def carries(path: Path, head: bytes, key: str) -> bool:
    """Whether a file is an OTLP export whose first bytes hold the attribute `key` (as a
    JSON string in OTLP/JSON; protobuf holds the key's bytes as they are)."""
    if is_otlp(head):
        return f'"{key}"'.encode() in head
    return otlp_proto.looks_like_export(path, head) and key.encode() in head


def read_spans(
    path: Path, display: str, max_file_bytes: int, classify: Callable[[Span], R]
) -> Iterator[Placed[R]]:
    """Every span of an OTLP/JSON file, as `classify` makes it, in the order read (grouped
    per trace by `span_groups.grouped`).

    Raises `InputError` with one line naming the file and the line (or span) for input that
    is not OTLP/JSON, a span without ids or an end, or a single document over the limit.
    """
    for span in _spans(path, display, max_file_bytes):
        yield Placed(
            span.trace_id, span.span_id, span.parent_id, span.start, span.line, classify(span)
        )


def _spans(path: Path, display: str, max_file_bytes: int) -> Iterator[Span]:
    try:
        with path.open("rb") as stream:
            head = stream.read(otlp_proto.HEAD_BYTES)
            if otlp_proto.is_protobuf(path, head):
                for number, (where, doc) in enumerate(
                    otlp_proto.exports(path, display, max_file_bytes), start=1
                ):
                    yield from _export_spans(doc, where, number, display)
                return
            stream.seek(0)
            first = stream.readline(max_file_bytes + 1)
            if _whole_object(first):
                yield from _export(first, 1, display)
                number = 1
                while line := stream.readline(max_file_bytes + 1):
                    number += 1
                    if len(line) > max_file_bytes:
                        raise _problem(
                            display,
                            f"line {number}",
                            "limit.max_file_bytes",
                            f"one export longer than max_file_bytes={max_file_bytes}; "
                            "raise the limit (--max-file-bytes) or export in smaller batches",
                        )
                    if line.strip():
                        yield from _export(line, number, display)
                return
        size = path.stat().st_size
        if size > max_file_bytes:
            raise _problem(
                display,
                "$",
                "limit.max_file_bytes",
                f"a single OTLP/JSON document of {size} bytes, more than max_file_bytes="
                f"{max_file_bytes}; raise the limit (--max-file-bytes) or write one export "
                "per line (the Collector's file exporter does)",
            )
        yield from _export(path.read_bytes(), 1, display)
    except OSError as exc:
        raise _problem(display, "$", "file.unreadable", f"cannot read: {exc.strerror}") from None


def _whole_object(line: bytes) -> bool:
    try:
        return isinstance(_parsed_export(line), dict)
    except ValueError:  # TooDeep too: read whole, the line's problem is said there
        return False


def loads_bounded(data: bytes | str) -> Any:
    """JSON text parsed, refusing (`TooDeep`) JSON nested deeper than `MAX_JSON_DEPTH`: what
    walks the result, or writes it again inside an ATIF document, would recurse past
    Python's stack. Text with no more brackets than the limit cannot nest deeper: most
    attribute values are parsed without counting the levels."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH:
        BoundedReader(io.BytesIO(raw)).read()
    return _loads(raw)


def _loads(raw: bytes) -> Any:
    """orjson's parse, or json's where orjson refuses what json takes (a lone surrogate's
    escape, NaN): a producer that truncated an emoji has not broken its export."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def _parsed_export(data: bytes) -> Any:
    """One export parsed by orjson, which refuses more than 254 levels itself (and the
    readers walk an export's attributes at most that deep); when it fails, the levels are
    counted (too deep, `TooDeep`) before json tries (see `_loads`). Counting every line's
    levels first would cost as much as parsing it."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        BoundedReader(io.BytesIO(data)).read()  # raises TooDeep when that was the fault
        return json.loads(data)


def _export(data: bytes, line: int, display: str) -> Iterator[Span]:
    where = f"line {line}"
    try:
        doc = _parsed_export(data)
    except TooDeep:
        raise _problem(
            display,
            where,
            "otlp.too_deep",
            f"JSON nested more than {MAX_JSON_DEPTH} levels deep: no OTLP export is",
        ) from None
    except ValueError as exc:
        raise _problem(
            display, where, "otlp.json_invalid", f"not valid JSON ({exc}); fix or remove the line"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
        raise _problem(
            display,
            where,
            "otlp.not_export",
            "not an OTLP trace export: expected an object with a 'resourceSpans' list",
        )
    yield from _export_spans(doc, where, line, display)


def _export_spans(doc: dict[str, Any], where: str, line: int, display: str) -> Iterator[Span]:
    """The spans of one parsed export; `where` names it in messages (line or record)."""
    for resource_spans in doc["resourceSpans"]:
        resource = attributes(_obj(resource_spans, "resource").get("attributes"))
        for scope_spans in _list(resource_spans, "scopeSpans"):
            for raw in _list(scope_spans, "spans"):
                yield _span(raw, resource, where, line, display)


def _span(raw: Any, resource: Mapping[str, Any], at: str, line: int, display: str) -> Span:
    if not isinstance(raw, dict):
        raise _problem(display, at, "otlp.span_type", "a span must be a JSON object")
    trace_id, span_id = raw.get("traceId"), raw.get("spanId")
    if not isinstance(trace_id, str) or not trace_id or not isinstance(span_id, str) or not span_id:
        raise _problem(
            display,
            at,
            "otlp.span_ids",
            f"span {clip(repr(raw.get('name')))} has no traceId or spanId; every span needs both",
        )
    where = f"{at}: trace {clip(trace_id)} span {clip(span_id)}"
    start, end = _nanos(raw.get("startTimeUnixNano")), _nanos(raw.get("endTimeUnixNano"))
    if start is None:
        raise _problem(display, where, "otlp.span_start", "span has no startTimeUnixNano")
    if end is None or end == 0:
        raise _problem(
            display,
            where,
            "otlp.span_end",
            "span has no endTimeUnixNano: it never ended; export the trace after its spans end",
        )
    parent = raw.get("parentSpanId")
    status = _obj(raw, "status")
    error = None
    if status.get("code") in _STATUS_ERROR:
        message = status.get("message")
        error = message if isinstance(message, str) else ""
    events = tuple(
        SpanEvent(str(event.get("name", "")), attributes(event.get("attributes")))
        for event in raw.get("events") or ()
        if isinstance(event, dict)
    )
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent if isinstance(parent, str) and parent else None,
        name=str(raw.get("name", "")),
        start=start,
        end=end,
        error=error,
        attributes=attributes(raw.get("attributes")),
        events=events,
        resource=resource,
        line=line,
    )


def attributes(raw: Any) -> dict[str, Any]:
    """OTLP key/value attributes as a plain dict of Python values."""
    if not isinstance(raw, list):
        return {}
    return {
        item["key"]: any_value(item.get("value"))
        for item in raw
        if isinstance(item, dict) and isinstance(item.get("key"), str)
    }


def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` as a Python value (int64 values are strings in OTLP/JSON)."""
    if not isinstance(value, dict) or not value:
        return None
    kind, inner = next(iter(value.items()))
    if kind == "intValue":
        try:
            return int(inner)
        except (TypeError, ValueError):
            return None
    if kind == "arrayValue":
        return [any_value(v) for v in (inner or {}).get("values", ())]
    if kind == "kvlistValue":
        return attributes((inner or {}).get("values"))
    return inner  # stringValue, boolValue, doubleValue, bytesValue (base64 text)


def _nanos(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _obj(parent: Any, key: str) -> dict[str, Any]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else {}


def _list(parent: Any, key: str) -> list[Any]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, list) else []


def _problem(display: str, where: str, rule: str, message: str) -> InputError:
    return InputError([Problem(display, where, rule, message)])
