"""Reading big JSON files an item at a time, so that a 100,000-case dataset or traces
file never sits in memory as one parsed document.

Two readers give the same items. The fast one (`_split`) reads a megabyte at a time
and parses the top-level array's objects with orjson, one piece each: first up to the
nearest `}` followed by `,{`; if that piece does not parse (the cut fell inside a string
or a nested value, which it then ends inside), orjson reads on from the item's start and
says where its first value ends, and that piece is parsed alone. It vouches only for
what it is sure of: at anything else (an item that is not an object, a top-level shape
it does not know, a number of 19 digits or more, which orjson and ijson read
differently, a piece that will not parse) it stops, and ijson's C backend reads the
file from the start, skipping the items already handed out, and says what is wrong. A
top-level key met twice is an error for `drain_array` (ijson would hand on both arrays'
items or the second's, depending on where its reads end). The fast reader spends less
than ijson, which builds a new string for every key (figures in docs/cases.md).

A file ijson rejects is read again by `read_json`, whose message (orjson's, naming the line
and column) is the one a user sees for any invalid file, streamed or not.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import ijson
import orjson

from agentjudge.errors import UsageError
from agentjudge.files import MAX_JSON_BYTES, open_input, read_json
from agentjudge.nesting import MAX_JSON_DEPTH, TooDeep, bounded_events, check_depth

# ijson's bytes per read; also how often the traces' finished items are taken away
BUFFER = 64 * 1024
# levels above an item: the top-level object and its array (the fast reader parses an
# item alone, and checks its depth itself)
_ITEM_LEVELS = 2


def array_items(path: Path, key: str, what: str) -> Iterator[Any]:
    """The items of the top-level object's `key` array, one at a time; nothing when the
    file holds no such array (the caller tells an empty array from a wrong shape)."""
    given = 0
    try:
        with open_input(path, what) as handle:
            if handle.seekable():
                try:
                    for item in _split(handle, key):
                        yield item
                        given += 1
                    return
                except _Unsure:
                    handle.seek(0)
            items = ijson.items(_events(handle), f"{key}.item")
            yield from itertools.islice(items, given, None)
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        raise _invalid(path, what, exc) from None
    except TooDeep:
        raise _too_deep(path, what) from None


def drain_array(path: Path, key: str, what: str, take: Callable[[Any], None]) -> Any:
    """Parse `path` in one pass and return its top-level value; the items of the top-level
    object's `key` array go to `take` as each is finished and are not kept in it.

    ijson, when the fast reader cannot vouch for the file, builds the whole document, but
    the `key` list it fills is the one the first object it makes (the top level) holds:
    each time ijson reads more of the file, every item of that list but the last (which
    may still be growing) is handed on and removed; those the fast reader gave are skipped.
    """
    given = 0
    with open_input(path, what) as handle:
        if handle.seekable():
            try:
                split = _split(handle, key)
                while True:
                    take(next(split))
                    given += 1
            except StopIteration as end:
                return end.value
            except _KeyTwice:
                raise UsageError(
                    f"{what} {path}: its top-level object has {key!r} twice; keep one"
                ) from None
            except TooDeep:
                raise _too_deep(path, what) from None
            except _Unsure:
                handle.seek(0)
        return _drain(handle, path, key, what, take, given)


def _drain(
    handle: BinaryIO, path: Path, key: str, what: str, take: Callable[[Any], None], skip: int
) -> Any:
    top: dict[str, Any] = {}
    # C-level: the first map ijson asks for is `top`, every later one a new dict
    maps = itertools.chain([top], iter(dict, None)).__next__
    skipped = 0

    def drain(final: bool) -> None:
        nonlocal skipped
        items = top.get(key)
        if not isinstance(items, list):
            return
        done = len(items) if final else len(items) - 1
        if done > 0:
            for item in items[:done]:
                if skipped < skip:
                    skipped += 1
                else:
                    take(item)
            del items[:done]

    try:
        reader = _Draining(handle, drain)
        value = next(ijson.items(_events(reader), "", map_type=maps))
    except (ijson.JSONError, UnicodeDecodeError, StopIteration) as exc:
        raise _invalid(path, what, exc) from None
    except TooDeep:
        raise _too_deep(path, what) from None
    if value is top:
        drain(True)
    return value


def compact(value: Any) -> str:
    """One item kept as compact JSON text (a tenth of its parsed size)."""
    try:
        # a str: orjson's bytes keep their whole growth buffer, kilobytes each
        return orjson.dumps(value).decode()
    except TypeError:  # an integer wider than 64 bits
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def expand(text: str) -> Any:
    """An item `compact` kept, parsed again."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # what `compact` wrote with json
        return json.loads(text)


class _Draining:
    """A binary file whose every read first hands on what ijson has finished."""

    def __init__(self, handle: BinaryIO, drain: Callable[[bool], None]) -> None:
        self._handle = handle
        self._drain = drain

    def read(self, size: int = -1) -> bytes:
        self._drain(False)
        return self._handle.read(size)


class _Unsure(Exception):
    """The fast reader cannot vouch for the rest of the file: ijson reads it."""


class _KeyTwice(_Unsure):
    """The top-level object has the key twice (ijson then hands on the items of both
    arrays, or only of the second, depending on where its reads end)."""


_WINDOW = 1 << 20  # bytes the fast reader reads at a time (its memory: a few of them)
_HEAD_BYTES = 8 << 20  # the key must be found within this much of the file's start
_NEXT_ITEM = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")
_SPACES = re.compile(rb"[ \t\r\n]*")
_OPENING = re.compile(rb"[ \t\r\n]*:[ \t\r\n]*\[[ \t\r\n]*")
_WHITESPACE = b" \t\r\n"
# every digit to "0", every other byte to " ": a run of 19 zeros is a number orjson reads
# otherwise than ijson (wider than 64 bits, or a float where ijson fails)
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_NUMBER = b"0" * 19


def _split(handle: BinaryIO, key: str) -> Generator[Any, None, dict[str, Any]]:
    """The objects of the top-level object's `key` array, then (as the generator's value)
    the top-level object with that array emptied; `_Unsure` where it cannot vouch."""
    buffer = _read(handle, b"")
    quoted = orjson.dumps(key)
    at = buffer.find(quoted)
    while at < 0:  # its first occurrence must be the top-level key (checked below)
        if len(buffer) > _HEAD_BYTES:  # not near the top (an ATIF file has none)
            raise _Unsure
        searched = max(0, len(buffer) - len(quoted))
        buffer += _read(handle, buffer)
        at = buffer.find(quoted, searched)
    before = _members_before(buffer[:at], key)
    opening = _OPENING.match(buffer, at + len(quoted))
    while opening is None or opening.end() == len(buffer):
        buffer += _read(handle, buffer)
        opening = _OPENING.match(buffer, at + len(quoted))
    start = opening.end()
    if buffer[start : start + 1] == b"]":
        return _members_after(buffer[start + 1 :] + _read(handle, buffer, rest=True), before, key)
    while True:  # `start`: where an item begins
        if buffer[start : start + 1] != b"{":
            raise _Unsure
        item, end = _item_at(buffer, start)
        if item is _MORE:  # the item runs past what was read
            buffer, start = buffer[start:] + _read(handle, buffer), 0
            continue
        check_depth(item, buffer.count(b"[", start, end) + buffer.count(b"{", start, end))
        yield item
        after = _skip_spaces(buffer, end)
        while after == len(buffer):  # what follows the item is not read yet
            buffer, end, start = buffer[start:] + _read(handle, buffer), end - start, 0
            after = _skip_spaces(buffer, end)
        if buffer[after : after + 1] == b"]":
            return _members_after(
                buffer[after + 1 :] + _read(handle, buffer, rest=True), before, key
            )
        if buffer[after : after + 1] != b",":
            raise _Unsure
        start = _skip_spaces(buffer, after + 1)
        while start == len(buffer):  # all read so far was spaces: none of it is needed
            buffer = _read(handle, buffer)
            start = _skip_spaces(buffer, 0)


_MORE = object()  # `_item_at`: read more first


def _skip_spaces(buffer: bytes, at: int) -> int:
    """Where the first byte at or after `at` that is not JSON whitespace is."""
    spaces = _SPACES.match(buffer, at)
    assert spaces is not None  # the pattern matches the empty string
    return spaces.end()


def _item_at(buffer: bytes, start: int) -> tuple[Any, int]:
    """The item that begins at `start` and where it ends, or `_MORE` if `buffer` holds
    only part of it. First the nearest `},{` is tried as its end; if the piece does not
    parse (the cut fell inside it), orjson reads from `start` on and says where its first
    value ends (content after the document), and that piece is parsed alone. A piece
    that parses is one whole value from an item's start, so what follows is outside it."""
    view = memoryview(buffer)
    cut = _NEXT_ITEM.search(buffer, start)
    if cut is not None:
        try:
            return orjson.loads(view[start : cut.start() + 1]), cut.start() + 1
        except orjson.JSONDecodeError:
            pass
    try:
        orjson.loads(view[start:])
    except orjson.JSONDecodeError as exc:
        end = start + exc.pos
        if end >= len(buffer) or buffer[end : end + 1] not in (b",", b"]"):
            # the data ended inside the item, or a fault: more may tell (else: unsure)
            if end >= len(buffer):
                return _MORE, 0
            raise _Unsure from None
        try:
            return orjson.loads(view[start:end]), end
        except orjson.JSONDecodeError:
            raise _Unsure from None
    return _MORE, 0  # the whole rest is one value: what follows it is not read yet


def _read(handle: BinaryIO, buffer: bytes, rest: bool = False) -> bytes:
    """The next window (or, with `rest`, all that is left); `_Unsure` if there is no next
    window (the file ends before what is looked for), or if it, with the end of `buffer`
    it may continue, holds a number the two readers read differently."""
    more = handle.read() if rest else handle.read(_WINDOW)
    if not (more or rest) or (buffer[-18:] + more).translate(_DIGITS).find(_LONG_NUMBER) >= 0:
        raise _Unsure
    return more


def _members_before(head: bytes, key: str) -> dict[str, Any]:
    """The top-level members before `key`: `head` must be `{` and whole members."""
    head = head.strip(_WHITESPACE)
    if head == b"{":
        return {}
    if not head.endswith(b",") or head[:-1].rstrip(_WHITESPACE) == b"{":  # `{,` is no JSON
        raise _Unsure
    try:
        members = orjson.loads(head[:-1] + b"}")
    except orjson.JSONDecodeError:  # the key's first occurrence is not the top-level key
        raise _Unsure from None
    if not isinstance(members, dict):
        raise _Unsure
    if key in members:
        raise _KeyTwice
    return members


def _members_after(tail: bytes, before: dict[str, Any], key: str) -> dict[str, Any]:
    """The top-level object: the members before the array, the (emptied) array, and
    those of `tail`, which must close the object and end the file."""
    tail = tail.strip(_WHITESPACE)
    if tail == b"}":
        after: dict[str, Any] = {}
    elif tail.startswith(b",") and not tail[1:].lstrip(_WHITESPACE).startswith(b"}"):
        try:
            after = orjson.loads(b"{" + tail[1:])
        except orjson.JSONDecodeError:
            raise _Unsure from None
        if key in after:
            raise _KeyTwice
    else:
        raise _Unsure
    return {**before, key: [], **after}


def _events(handle: BinaryIO | _Draining) -> Any:
    """ijson's parse events of `handle`, refused past `MAX_JSON_DEPTH` levels.

    ijson's own `parse` builds a path string for each level entered, as long as the depth:
    fed from bounded `basic_parse` events, it never builds one deeper than the limit.
    """
    events = ijson.basic_parse(handle, use_float=True, buf_size=BUFFER)
    return ijson.parse(bounded_events(events, MAX_JSON_DEPTH + _ITEM_LEVELS))


def _too_deep(path: Path, what: str) -> UsageError:
    return UsageError(
        f"{what} {path}: a value is nested more than {MAX_JSON_DEPTH} levels deep (the "
        "limit, counted within one item); flatten it"
    )


def _invalid(path: Path, what: str, exc: BaseException) -> UsageError:
    """The usage error of a file ijson could not read: orjson's message when it agrees."""
    if path.is_file() and path.stat().st_size <= MAX_JSON_BYTES:
        read_json(path, what)  # raises with the line and column of the fault
    return UsageError(f"{what} {path} is not valid JSON: {exc}; fix the file")
