"""The two readers of `json_stream` give the same items, top-level value and errors: the
fast one (cuts checked by orjson) where it can vouch for a file, ijson where it cannot.
Every file here is read both ways, the fast reader switched off for the reference."""

from __future__ import annotations

import json
from collections.abc import Iterator
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


def _without_fast_reader() -> Iterator[None]:
    def unsure(handle: Any, key: str) -> Iterator[Any]:
        raise json_stream._Unsure
        yield  # a generator, as `_split` is

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_stream, "_split", unsure)
        yield


def _both(path: Path, key: str = "cases") -> tuple[Any, Any]:
    """(items, top value) or the error, read the fast way and with ijson only."""

    def read() -> Any:
        items: Any
        try:
            items = list(json_stream.array_items(path, key, "dataset"))
        except UsageError as exc:
            items = f"error: {exc}"
        taken: list[Any] = []
        try:
            top = json_stream.drain_array(path, key, "dataset", taken.append)
        except UsageError as exc:  # the items handed on before it may differ: not compared
            return items, f"error: {exc}"
        return items, taken, top

    fast = read()
    for _ in _without_fast_reader():
        slow = read()
    return fast, slow


@pytest.mark.parametrize("layout", list(_layouts(ITEMS)))
def test_every_layout_reads_the_same_both_ways(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "data.json"
    path.write_bytes(_layouts(ITEMS)[layout])
    fast, slow = _both(path)
    assert fast == slow
    assert fast[0] == fast[1] == ITEMS  # and is right
    assert fast[2] == json.loads(_layouts(ITEMS)[layout]) | {"cases": []}


def test_the_fast_reader_vouches_for_plain_files(tmp_path: Path) -> None:
    """It must not just hand everything to ijson: for these it reads the whole file."""
    for name, data in _layouts(ITEMS).items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        with path.open("rb") as handle:
            split = json_stream._split(handle, "cases")
            got, top = [], None
            try:
                while True:
                    got.append(next(split))
            except StopIteration as end:
                top = end.value
        assert got == ITEMS, name
        assert top == json.loads(data) | {"cases": []}, name


UNSURE = {
    "long-number": b'{"cases": [{"id": "a", "n": 123456789012345678901234567890}]}',
    "uint64": b'{"cases": [{"id": "a"}, {"id": "b", "n": 18446744073709551615}]}',
    "lone-surrogate": b'{"cases": [{"id": "a"}, {"id": "\\ud800"}]}',
    "nan": b'{"cases": [{"id": "a"}, {"id": "b", "n": NaN}]}',
    "not-object-item": b'{"cases": [{"id": "a"}, 5, {"id": "b"}]}',
    "key-in-a-string-first": b'{"note": "x\\"cases\\": [", "cases": [{"id": "a"}]}',
    "trailing-garbage": b'{"cases": [{"id": "a"}, {"id": "b"}]} tail',
    "cut-short": b'{"cases": [{"id": "a"}, {"id": "b", "te',
    "trailing-comma": b'{"cases": [{"id": "a"}, {"id": "b",}]}',
    "bad-tail": b'{"cases": [{"id": "a"}], "x": }',
    "top-level-array": b'[{"cases": [{"id": "a"}]}]',
    "no-key": b'{"other": [{"id": "a"}]}',
    "empty": b'{"cases": []}',
    "comma-before-close": b'{"cases": [{"id": "a"}],}',
    "comma-after-open": b'{,"cases": [{"id": "a"}]}',
    "comma-spaced": b'{ , "cases": [{"id": "a"}] , }',
    "comma-after-array": b'{"cases": [{"id": "a"}],]}',
    "item-then-nothing": b'{"cases": [{"id": "a"}',
    "item-then-space": b'{"cases": [{"id": "a"}   ',
    "comma-then-end": b'{"cases": [{"id": "a"}, ',
    "comma-then-number": b'{"cases": [{"id": "a"}, 5]}',
    "fault-in-item": b'{"cases": [{"id": "a",, "b": 1}, {"id": "c"}]}',
    "empty-spaced": b'{ "cases" : [ ] , "x" : 1 }',
    "not-json": b"hello",
    "invalid-utf8": b'{"cases": [{"id": "a\xff"}]}',
    "bom": b'\xef\xbb\xbf{"cases": [{"id": "a"}]}',
}


@pytest.mark.parametrize("name", list(UNSURE))
def test_what_the_fast_reader_cannot_vouch_for_reads_as_ijson_reads_it(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / "data.json"
    path.write_bytes(UNSURE[name])
    fast, slow = _both(path)
    assert fast == slow


@pytest.mark.parametrize(
    "data",
    [b'{"cases": [{"id": "a"}], "cases": [{"id": "b"}]}',
     b'{"ca\\u0073es": [{"id": "a"}], "cases": [{"id": "b"}]}'],
    ids=["plain", "escaped"],
)  # fmt: skip
def test_a_key_met_twice_gives_both_arrays_items_or_an_error(tmp_path: Path, data: bytes) -> None:
    """As ijson streams a dataset, its cases are both arrays' items; traces, which ijson
    would hand on in an order that depends on where its reads end, are refused."""
    path = tmp_path / "data.json"
    path.write_bytes(data)
    assert list(json_stream.array_items(path, "cases", "dataset")) == [{"id": "a"}, {"id": "b"}]
    with pytest.raises(UsageError, match="its top-level object has 'cases' twice; keep one"):
        json_stream.drain_array(path, "cases", "traces file", lambda item: None)


def test_items_with_many_false_cuts_are_read_by_the_fast_reader(tmp_path: Path) -> None:
    crowded = {"id": "z", "calls": [{"n": i, "s": "}, {"} for i in range(200)]}
    items = [{"id": "a"}, crowded, {"id": "b", "calls": [{"n": 1}, {"n": 2}]}, crowded]
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"cases": items, "after": [{"x": 1}, {"y": 2}]}))
    fast, slow = _both(path)
    assert fast == slow
    assert fast[0] == items
    with path.open("rb") as handle:  # not through ijson
        assert list(json_stream._split(handle, "cases")) == items


def test_a_big_file_spanning_many_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_stream, "_WINDOW", 97)  # cuts fall across every window's edge
    items = [{"id": f"c{i}", "text": "}, {" * (i % 5), "n": [i, {"m": i}]} for i in range(300)]
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"dataset_hash": "h", "cases": items, "z": {"a": [1]}}, indent=1))
    fast, slow = _both(path)
    assert fast == slow
    assert fast[0] == items


def test_spaces_longer_than_a_window_between_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_stream, "_WINDOW", 16)
    items = [{"id": "a", "n": [{"m": 1}, {"m": 2}]}, {"id": "b"}, {"id": "c"}]
    spaces = " " * 100
    path = tmp_path / "data.json"
    path.write_text('{"cases": [' + json.dumps(items[0]) + spaces + "," + spaces
                    + json.dumps(items[1]) + "," + spaces + json.dumps(items[2]) + spaces
                    + "]" + spaces + "}")  # fmt: skip
    fast, slow = _both(path)
    assert fast == slow
    assert fast[0] == items
    with path.open("rb") as handle:  # not through ijson
        assert list(json_stream._split(handle, "cases")) == items


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


def test_a_case_at_the_depth_limit_reads_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(_nested_case(MAX_JSON_DEPTH))
    fast, slow = _both(path)
    for items, taken, _top in (fast, slow):
        assert [item["id"] for item in items] == ["a", "deep"]
        assert _depth(items[1]) == MAX_JSON_DEPTH
        assert len(taken) == 2


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 2000, 100_000])
def test_a_case_past_the_depth_limit_is_refused_both_ways(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(_nested_case(depth))
    fast, slow = _both(path)
    said = f"nested more than {MAX_JSON_DEPTH} levels deep"
    for items, top in (fast, slow):
        assert str(path) in items
        assert said in items
        assert said in top
