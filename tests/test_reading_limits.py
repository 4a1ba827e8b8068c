"""The reading limits of issue 33 at the unit level: nesting (`agentjudge.nesting`), capped
reads (`agentjudge.files`), a key file, a judge URL, escaped names, a NUL byte in a ref."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentjudge.atif.collection import ref_target
from agentjudge.confine import shown_path
from agentjudge.errors import UsageError
from agentjudge.files import read_capped, read_json, read_text_capped
from agentjudge.judge.providers import checked_url
from agentjudge.judge.secrets import load_api_key
from agentjudge.nesting import MAX_YAML_DEPTH, BoundedReader, TooDeep, load_yaml


def test_yaml_at_the_depth_limit_loads_and_past_it_is_one_usage_error() -> None:
    def nested(depth: int) -> str:  # the mapping is the first level
        return "a: " + "[" * (depth - 1) + "]" * (depth - 1)

    assert load_yaml(nested(MAX_YAML_DEPTH), "c.yaml") is not None
    for depth in (MAX_YAML_DEPTH + 1, 100_000):
        with pytest.raises(UsageError, match=r"^c\.yaml: nested more than 100 levels deep"):
            load_yaml(nested(depth), "c.yaml")


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _refused(data: bytes, limit: int, size: int) -> bool:
    """Whether reading `data` `size` bytes at a time through a `BoundedReader` is refused."""
    reader = BoundedReader(io.BytesIO(data), limit)
    try:
        while reader.read(size):
            pass
    except TooDeep:
        return True
    return False


# strings made of what the reader must see through: quotes, backslashes, brackets, UTF-8
_TEXT = st.text(alphabet='"\\[]{}x é配\n', max_size=8)
_JSON = st.recursive(
    st.none() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=_JSON, limit=st.integers(1, 6), size=st.integers(1, 9), ascii_only=st.booleans())
def test_the_bounded_reader_refuses_exactly_what_nests_deeper_than_its_limit(
    value: Any, limit: int, size: int, ascii_only: bool
) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert _refused(data, limit, size) == (_depth(value) > limit)


def test_the_bounded_reader_hands_on_every_byte_and_stops_before_the_deep_ones() -> None:
    data = b'{"a": "[[[[\\\\", "b": "\\"{{{{", "c": [[1]]}'
    reader = BoundedReader(io.BytesIO(data), 3)
    assert b"".join(iter(lambda: reader.read(4), b"")) == data
    deep = BoundedReader(io.BytesIO(b"[" * 50 + b"]" * 50), 3)
    assert deep.read(3) == b"[[["
    with pytest.raises(TooDeep):
        deep.read(3)


def test_capped_reads_refuse_devices_big_files_and_bytes_that_are_not_utf8(
    tmp_path: Path,
) -> None:
    with pytest.raises(UsageError, match="config /dev/zero is a device, not a file"):
        read_capped(Path("/dev/zero"), "config", 10)
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"1," * 100 + b"1]")
    with pytest.raises(UsageError, match="larger than 100 bytes"):
        read_json(big, "results file", max_bytes=100)
    assert read_json(big, "results file")[0] == 1
    odd = tmp_path / "odd.yaml"
    odd.write_bytes(b"ok: 1\n\xff")
    with pytest.raises(UsageError, match=r"odd\.yaml is not UTF-8 text \(at byte 6\)"):
        read_text_capped(odd, "config")


def test_a_key_file_that_is_not_utf8_never_shows_the_key(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_bytes(b"sk-abcdef\xff\n")
    with pytest.raises(UsageError) as caught:
        load_api_key(key)
    assert "not UTF-8" in str(caught.value)
    assert "abcdef" not in str(caught.value)


def test_a_judge_url_that_does_not_parse_is_a_usage_error_without_its_password() -> None:
    with pytest.raises(UsageError) as caught:
        checked_url("http://me:hunter2@[::1/v1")
    assert str(caught.value).startswith("--judge-url: http://***@[::1/v1 is not a valid URL")
    assert "hunter2" not in str(caught.value)


def test_names_that_are_not_utf8_are_shown_escaped() -> None:
    name = os.fsdecode(b"runs/\xff.json")
    assert shown_path(name) == "runs/\\xff.json"
    assert shown_path(Path("runs/é.json")) == "runs/é.json"


def test_a_ref_with_a_nul_byte_leads_nowhere(tmp_path: Path) -> None:
    assert ref_target("sub\x00.json", tmp_path, tmp_path) is None
