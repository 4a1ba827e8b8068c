"""How deeply an input may nest, enforced while it is read, before its structure is built.

JSON cases (a dataset's or traces file's items): `MAX_JSON_DEPTH` levels, well below the
254 orjson writes (a case is written again inside results and records, and json, where
orjson refuses, recurses until Python's stack runs out). ijson builds a path string for
every level it enters (its length grows with the depth), so a file nested 100,000 deep
would cost memory quadratic in the depth: its events are counted here and it stops at the
limit. YAML: `MAX_YAML_DEPTH` levels (configs are small hand-written files; PyYAML composes
recursively and would exhaust the stack).

This module imports only `agentjudge.errors`, like `agentjudge.confine`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import yaml

from agentjudge.errors import UsageError

MAX_JSON_DEPTH = 100
MAX_YAML_DEPTH = 100

_OPENS = frozenset({"start_map", "start_array"})
_CLOSES = frozenset({"end_map", "end_array"})


class TooDeep(ValueError):
    """A document nested deeper than its limit; `depth` is that limit."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        super().__init__(f"nested more than {depth} levels deep")


def bounded_events(
    events: Iterable[tuple[str, Any]], limit: int = MAX_JSON_DEPTH
) -> Iterator[tuple[str, Any]]:
    """ijson's `basic_parse` events, raising `TooDeep` at the first one past `limit` levels."""
    depth = 0
    for event in events:
        kind = event[0]
        if kind in _OPENS:
            depth += 1
            if depth > limit:
                raise TooDeep(limit)
        elif kind in _CLOSES:
            depth -= 1
        yield event


def check_depth(value: Any, openings: int, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise `TooDeep` if `value` (parsed JSON) nests deeper than `limit`. `openings`, the
    count of `[` and `{` in its text, bounds its depth: only a value with that many is
    walked (iteratively, as deep as it goes)."""
    if openings <= limit:
        return
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                raise TooDeep(limit)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


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
