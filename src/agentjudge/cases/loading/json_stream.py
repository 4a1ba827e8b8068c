"""Reading big JSON files an item at a time (ijson's C backend), so that a 100,000-case
dataset or traces file never sits in memory as one parsed document. Nesting is bounded as
the bytes are read, before ijson builds anything from them (`nesting.BoundedReader`).

A file ijson rejects is read again by `read_json`, whose message (orjson's, naming the line
and column) is the one a user sees for any invalid file, streamed or not.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ijson
import orjson

from agentjudge.errors import UsageError
from agentjudge.files import MAX_JSON_BYTES, open_input, read_json
from agentjudge.nesting import MAX_JSON_DEPTH, BoundedReader, TooDeep

# ijson's bytes per read; also how often the traces' finished items are taken away
BUFFER = 64 * 1024
# levels above an item, which the limit does not count: the top-level object and its array
_ITEM_LEVELS = 2


def array_items(path: Path, key: str, what: str) -> Iterator[Any]:
    """The items of the top-level object's `key` array, one at a time; nothing when the
    file holds no such array (the caller tells an empty array from a wrong shape). A key
    met twice gives both arrays' items."""
    try:
        with open_input(path, what) as handle:
            reader = BoundedReader(handle, MAX_JSON_DEPTH + _ITEM_LEVELS)
            yield from ijson.items(reader, f"{key}.item", use_float=True, buf_size=BUFFER)
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        raise _invalid(path, what, exc) from None
    except TooDeep:
        raise _too_deep(path, what) from None


def drain_array(path: Path, key: str, what: str, take: Callable[[Any], None]) -> Any:
    """Parse `path` in one pass and return its top-level value; the items of the top-level
    object's `key` array go to `take` as each is finished and are not kept in it (a key
    met twice: both arrays' items, as `array_items` gives them).

    ijson builds the whole document, but the `key` list it fills is the one the first
    object it makes (the top level, a `_Top`) holds: each time ijson reads more of the
    file, every item of that list but the last (which may still be growing) is handed on
    and removed.
    """
    top = _Top(key, take)
    # C-level: the first map ijson asks for is `top`, every later one a new dict
    maps = itertools.chain([top], iter(dict, None)).__next__
    try:
        with open_input(path, what) as handle:
            reader = _Draining(BoundedReader(handle, MAX_JSON_DEPTH + _ITEM_LEVELS), top.drain)
            value = next(ijson.items(reader, "", map_type=maps, use_float=True, buf_size=BUFFER))
    except (ijson.JSONError, UnicodeDecodeError, StopIteration) as exc:
        raise _invalid(path, what, exc) from None
    except TooDeep:
        raise _too_deep(path, what) from None
    if value is top:
        top.drain(True)
    return value


class _Top(dict[str, Any]):
    """The top-level object as ijson fills it, whose `key` array's finished items are
    handed on (`drain`): a second `key` replacing the first array, the first's rest."""

    def __init__(self, key: str, take: Callable[[Any], None]) -> None:
        super().__init__()
        self._key = key
        self._take = take

    def __setitem__(self, name: str, value: Any) -> None:
        if name == self._key:  # met again, its array is finished: all of it goes on
            self.drain(True)
        super().__setitem__(name, value)

    def drain(self, final: bool) -> None:
        """Hand on the array's items but the last, or all of them if `final`."""
        items = self.get(self._key)
        if not isinstance(items, list):
            return
        done = len(items) if final else len(items) - 1
        if done > 0:
            for item in items[:done]:
                self._take(item)
            del items[:done]


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

    def __init__(self, handle: BoundedReader, drain: Callable[[bool], None]) -> None:
        self._handle = handle
        self._drain = drain

    def read(self, size: int = -1) -> bytes:
        self._drain(False)
        return self._handle.read(size)


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
