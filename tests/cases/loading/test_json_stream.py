"""`json_stream` reads big JSON files an item at a time with ijson: the items and the
top-level value are those of the whole document, however the reads cut it, and a file it
cannot read is one usage error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjudge.cases.loading import json_stream
from agentjudge.errors import UsageError
from agentjudge.nesting import MAX_JSON_DEPTH

ITEMS = [
    {"id": "a", "text": "ends with }, { and }] inside a string", "n": 1},
    {"id": "b", "calls": [{"name": "x"}, {"name": "y", "args": {"k": [1, 2, {"z": None}]}}]},
    {"id": "c", "nested": {"deep": [[{"a": "}"}], {"b": "]"}]}, "f": 1.5e-7, "g": -0.0},
    {"id": "d", "unicode": '配送 ¿Dónde? \u2028 \\" \\\\', "escaped": "\\u007d,\\u007b"},
    {"id": "e", "big": 999999999999999999, "small": -999999999999999999, "t": True},
    {"id": "f", "brackets": "[[[[{{{{" * 50, "quotes": '\\"[' * 40, "slashes": "\\" * 7},
]


def _layouts(items: list[Any]) -> dict[str, bytes]:
    """The same document written as people and tools write JSON."""
    doc = {"dataset_hash": None, "cases": items, "model": "m-1"}
    return {
        "compact": json.dumps(doc, separators=(",", ":")).encode(),
        "spaced": json.dumps(doc).encode(),
        "indented": json.dumps(doc, indent=2, ensure_ascii=False).encode(),
        "tabs-crlf": json.dumps(doc, indent="\t").replace("\n", "\r\n").encode(),
        "array-first": json.dumps({"cases": items, "model": "m-1"}).encode(),
        "array-last": json.dumps({"model": "m-1", "cases": items}, indent=1).encode(),
        "alone": json.dumps({"cases": items}).encode(),
    }


def _read(path: Path, key: str = "cases") -> tuple[Any, ...]:
    """(items, items handed on, top value), or the error of either reader."""
    items: Any
    try:
        items = list(json_stream.array_items(path, key, "dataset"))
    except UsageError as exc:
        items = f"error: {exc}"
    taken: list[Any] = []
    try:
        top = json_stream.drain_array(path, key, "dataset", taken.append)
    except UsageError as exc:  # the items handed on before it do not matter
        return items, f"error: {exc}"
    return items, taken, top


@pytest.mark.parametrize("buffer", [json_stream.BUFFER, 97, 7], ids=["64k", "97", "7"])
@pytest.mark.parametrize("layout", list(_layouts(ITEMS)))
def test_every_layout_reads_the_whole_documents_items_however_reads_cut_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, buffer: int
) -> None:
    monkeypatch.setattr(json_stream, "BUFFER", buffer)
    data = _layouts(ITEMS)[layout]
    path = tmp_path / "data.json"
    path.write_bytes(data)
    assert _read(path) == (ITEMS, ITEMS, json.loads(data) | {"cases": []})


INVALID = {
    "nan": b'{"cases": [{"id": "a"}, {"id": "b", "n": NaN}]}',
    "trailing-garbage": b'{"cases": [{"id": "a"}, {"id": "b"}]} tail',
    "cut-short": b'{"cases": [{"id": "a"}, {"id": "b", "te',
    "trailing-comma": b'{"cases": [{"id": "a"}, {"id": "b",}]}',
    "bad-tail": b'{"cases": [{"id": "a"}], "x": }',
    "comma-before-close": b'{"cases": [{"id": "a"}],}',
    "comma-after-open": b'{,"cases": [{"id": "a"}]}',
    "fault-in-item": b'{"cases": [{"id": "a",, "b": 1}, {"id": "c"}]}',
    "not-json": b"hello",
    "invalid-utf8": b'{"cases": [{"id": "a\xff"}]}',
    "bom": b'\xef\xbb\xbf{"cases": [{"id": "a"}]}',
    "wider-than-64-bits": b'{"cases": [{"id": "a"}, {"id": "b", "n": 18446744073709551615}]}',
}


@pytest.mark.parametrize("name", list(INVALID))
def test_a_file_ijson_cannot_read_is_one_usage_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / "data.json"
    path.write_bytes(INVALID[name])
    items, *_, top = _read(path)
    assert str(items).startswith(f"error: dataset {path} is not valid JSON: ")
    if name != "trailing-garbage":  # the top-level value ends before it: not read on
        assert str(top).startswith(f"error: dataset {path} is not valid JSON: ")


@pytest.mark.parametrize(
    ("data", "items"),
    [(b'{"cases": [{"id": "a"}, 5, {"id": "b"}]}', [{"id": "a"}, 5, {"id": "b"}]),
     (b'{"note": "x\\"cases\\": [", "cases": [{"id": "a"}]}', [{"id": "a"}]),
     (b'[{"cases": [{"id": "a"}]}]', []),
     (b'{"other": [{"id": "a"}]}', []),
     (b'{ "cases" : [ ] , "x" : 1 }', [])],
    ids=["not-object-item", "key-in-a-string-first", "top-level-array", "no-key", "empty"],
)  # fmt: skip
def test_odd_shapes_read_as_the_document_says(tmp_path: Path, data: bytes, items: Any) -> None:
    path = tmp_path / "data.json"
    path.write_bytes(data)
    document = json.loads(data)
    top = (
        document | {"cases": []} if isinstance(document, dict) and "cases" in document else document
    )
    assert _read(path) == (items, items, top)


@pytest.mark.parametrize("buffer", [json_stream.BUFFER, 5], ids=["64k", "5"])
def test_a_key_met_twice_gives_both_arrays_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, buffer: int
) -> None:
    """graph-agents-cli (json) would take the second array alone; a streaming reader has
    handed on the first's items by then, so both readers give both arrays', in order,
    wherever the reads end (the top-level object holds the second array, emptied)."""
    monkeypatch.setattr(json_stream, "BUFFER", buffer)
    path = tmp_path / "data.json"
    first = [{"id": f"a{i}"} for i in range(20)]
    second = [{"id": f"b{i}"} for i in range(20)]
    path.write_text(
        json.dumps({"cases": first, "x": 1})[:-1] + ', "cases": ' + json.dumps(second) + "}"
    )
    assert _read(path) == (first + second, first + second, {"cases": [], "x": 1})


def _nested_case(depth: int) -> bytes:
    """A dataset whose one case (an object: one level) holds arrays to `depth` levels."""
    inner = b"[" * (depth - 1) + b'"x"' + b"]" * (depth - 1)
    return b'{"cases": [{"id": "a"}, {"id": "deep", "v": ' + inner + b"}]}"


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def test_a_case_at_the_depth_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(_nested_case(MAX_JSON_DEPTH))
    items, taken, _top = _read(path)
    assert [item["id"] for item in items] == ["a", "deep"]
    assert _depth(items[1]) == MAX_JSON_DEPTH
    assert taken == items


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 2000, 100_000])
def test_a_case_past_the_depth_limit_is_refused_by_both_readers(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(_nested_case(depth))
    items, top = _read(path)
    said = f"nested more than {MAX_JSON_DEPTH} levels deep"
    for error in (items, top):
        assert str(path) in error
        assert said in error
