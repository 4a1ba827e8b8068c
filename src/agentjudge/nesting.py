"""How deeply an input may nest, enforced while it is read, before its structure is built.

JSON cases (a dataset's or traces file's items): `MAX_JSON_DEPTH` levels, well below the
254 orjson writes (a case is written again inside results and records, and json, where
orjson refuses, recurses until Python's stack runs out). ijson builds a path string for
every level it enters (its length grows with the depth), so a file nested 100,000 deep
would cost memory quadratic in the depth: `BoundedReader` counts the levels in the bytes
before ijson is handed them, and stops at the limit. YAML: `MAX_YAML_DEPTH` levels
(configs are small hand-written files; PyYAML composes recursively and would exhaust the
stack).

This module imports only `agentjudge.errors`, like `agentjudge.confine`.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any, BinaryIO

import yaml

from agentjudge.errors import UsageError

MAX_JSON_DEPTH = 100
MAX_YAML_DEPTH = 100

# what counts in JSON's bytes: quotes (strings) and brackets (levels), nothing else
_NOT_COUNTED = bytes(b for b in range(256) if b not in b'"[]{}')
_STEP = tuple(1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256))
_STRING = re.compile(rb'"[^"]*"')
_ESCAPE = re.compile(rb"\\.", re.DOTALL)  # a backslash and the byte it escapes
_ONE_KIND = bytes.maketrans(b"[]", b"{}")  # levels, whatever their bracket


class TooDeep(ValueError):
    """A document nested deeper than its limit; `depth` is that limit."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        super().__init__(f"nested more than {depth} levels deep")


class BoundedReader:
    """A binary file for ijson to read, whose every read raises `TooDeep` before handing on
    bytes that nest JSON more than `limit` levels deep (the top-level value is one).

    The levels are counted in the bytes, with no parse and nothing in Python per value:
    each read's escapes (a backslash and the byte after it) are dropped, then every byte but
    quotes and brackets, then the strings (from a quote to the next); the running count of
    the brackets left is the depth. For valid JSON that is exact (no byte of a multi-byte UTF-8
    character is ASCII); past a fault it may not be, but ijson stops at the fault.
    """

    def __init__(self, handle: BinaryIO, limit: int = MAX_JSON_DEPTH) -> None:
        self._handle = handle
        self._limit = limit
        self._depth = 0
        self._in_string = False  # the last read ended inside a string
        self._escaping = b""  # a backslash ending the last read, escaping this one's first byte

    def read(self, size: int = -1) -> bytes:
        data = self._handle.read(size)
        if data:
            self._count(data)
        return data

    def _count(self, data: bytes) -> None:
        text, self._escaping = self._escaping + data, b""
        if b"\\" in text:
            if text.endswith(b"\\") and (len(text) - len(text.rstrip(b"\\"))) % 2:
                # an odd run of backslashes ends the read: its last escapes the next byte
                text, self._escaping = text[:-1], b"\\"
            text = _ESCAPE.sub(b"", text)
        # two quotes side by side change no bracket's side of a string (an empty string,
        # or one string's end and the next one's start): most strings go here, at C speed
        kept = text.translate(None, _NOT_COUNTED).replace(b'""', b"")
        if self._in_string:
            kept = b'"' + kept
        if b'"' in kept:
            self._in_string = kept.count(b'"') % 2 == 1
            kept = _STRING.sub(b"", kept + b'"' if self._in_string else kept)
        # `kept` is now the brackets outside strings: each may go one level in or out
        allowed = self._limit - self._depth
        if len(kept) > allowed and _rise_bound(kept, allowed) > allowed:
            # walked bracket by bracket in Python: only where the bound does not clear it
            deepest = max(accumulate(map(_STEP.__getitem__, kept), initial=self._depth))
            if deepest > self._limit:
                raise TooDeep(self._limit)
        self._depth += 2 * (kept.count(b"[") + kept.count(b"{")) - len(kept)


def _rise_bound(brackets: bytes, allowed: int) -> int:
    """A bound, at C speed, on how many levels above its start a run of brackets goes (past
    `allowed` it stops counting). Each round drops every opening bracket directly followed
    by a closing one, the innermost levels, so the rounds count the deepest nesting of the
    brackets that close within the run; the ones left open add at most one level each."""
    levels = brackets.translate(_ONE_KIND)
    rounds = 0
    while b"{}" in levels and rounds <= allowed:
        levels = levels.replace(b"{}", b"")
        rounds += 1
    return rounds + levels.count(b"{")


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a node nested deeper than `MAX_YAML_DEPTH`."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise TooDeep(MAX_YAML_DEPTH)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml(text: str, where: str) -> Any:
    """`text` parsed as YAML (safely); nested too deeply is a `UsageError` naming `where`.

    Other YAML faults raise `yaml.YAMLError` for the caller to word.
    """
    try:
        return yaml.load(text, Loader=_BoundedLoader)
    except TooDeep as exc:
        raise UsageError(f"{where}: {exc}, the limit; flatten the file") from None
