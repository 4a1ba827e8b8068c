"""Eval datasets: `{"cases": [...]}` files, validated and merged, with their canonical hash.

Every problem is a configuration error (exit 3) naming the file, the case and the field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from agentjudge.cases.loading.expect import canonical_case, normalise_expect
from agentjudge.cases.loading.json_stream import array_items
from agentjudge.errors import UsageError, clip
from agentjudge.files import read_json

ROLES = ("user", "assistant", "system")


@dataclass(slots=True)
class Case:
    """One planned case. `raw` is the dataset's own object (what custom metrics receive)."""

    id: str
    messages: list[dict[str, Any]]
    expect: dict[str, Any]
    judge: dict[str, dict[str, Any]]
    reference: str | None
    context: str | None
    raw: dict[str, Any]

    def user_turns(self) -> int:
        """How many user messages the case sends (more than one makes it multi-turn)."""
        return sum(1 for m in self.messages if m.get("role") == "user")


@dataclass(slots=True)
class Dataset:
    """The planned cases, in order, with the hash of their canonical JSON."""

    cases: list[Case]
    hash: str
    sources: list[Path] = field(default_factory=list)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    @property
    def count(self) -> int:
        return len(self.cases)


class PlannedCases(Protocol):
    """The cases a run grades, in order: a `Dataset` (all held) or a `CaseStream`."""

    sources: list[Path]

    @property
    def count(self) -> int: ...

    @property
    def hash(self) -> str: ...

    def __iter__(self) -> Iterator[Case]: ...


class CaseStream:
    """The planned cases, validated and yielded one at a time, never all held: iterate it
    once; `hash` (of their canonical JSON, as `Dataset.hash`) and `count` are known after.

    `raws` yields each raw case with where it is (for error messages) and the file it is
    in; `at_end` is called with the hash once the last case has been yielded."""

    def __init__(
        self,
        raws: Iterable[tuple[Any, str, str]],
        sources: list[Path] | None = None,
        at_end: Callable[[str], None] | None = None,
    ) -> None:
        self.sources = sources or []
        self.count = 0
        self._raws = raws
        self._at_end = at_end
        self._hash: str | None = None

    @property
    def hash(self) -> str:
        if self._hash is None:
            raise RuntimeError("the stream's hash is known once every case has been read")
        return self._hash

    def __iter__(self) -> Iterator[Case]:
        # the hash of {"cases": [...]} in sorted-key compact JSON, written a case at a time
        digest = hashlib.sha256(b'{"cases":[')
        seen: dict[str, str] = {}  # case id: the file it came from
        for raw, where, origin in self._raws:
            case = parse_case(raw, where)
            if case.id in seen:
                raise UsageError(
                    f"{where}.id {clip(repr(case.id))} is already used in {seen[case.id]}; "
                    "give every case a unique id"
                )
            seen[case.id] = origin
            if self.count:
                digest.update(b",")
            digest.update(_canonical(case.raw))
            self.count += 1
            yield case
        digest.update(b"]}")
        self._hash = digest.hexdigest()
        if self._at_end is not None:
            self._at_end(self._hash)


def canonical_hash(value: Any) -> str:
    """sha256 of sorted-key, compact, non-ASCII-preserving JSON (graph-agents-cli's hash)."""
    return hashlib.sha256(_canonical(value)).hexdigest()


def _canonical(value: Any) -> bytes:
    """`value` as graph-agents-cli hashes it: sorted keys, compact, non-ASCII kept."""
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        if not _json_differs(data):
            return data
    except TypeError:  # an integer wider than 64 bits, a lone surrogate
        pass
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


_DIGITS = frozenset(b"0123456789")


def _json_differs(data: bytes) -> bool:
    """Whether json may write `data`'s value otherwise: orjson writes a float below 1e-4 as
    0.0000… or with a one-digit exponent (1e-5), where json writes 1e-05. A string holding
    such text also answers yes (json then writes it, to be sure). Plain searches, not a
    regular expression: this runs on every case, and a pattern starting with a digit class
    costs a tenth of a case's grading."""
    if b"0.0000" in data:
        return True
    at = data.find(b"e-")
    while at > 0:
        if data[at - 1] in _DIGITS:
            return True
        at = data.find(b"e-", at + 2)
    return False


def stream_dataset(paths: list[Path], at_end: Callable[[str], None] | None = None) -> CaseStream:
    """The cases of dataset files, streamed (see `CaseStream`); each file is checked as it
    is reached, and a duplicate case id across them is an error."""
    return CaseStream(_dataset_raws(paths), list(paths), at_end)


def _dataset_raws(paths: list[Path]) -> Iterator[tuple[Any, str, str]]:
    for path in paths:
        count, label, origin = 0, f"dataset {path}: cases", str(path)  # once per file
        for count, raw in enumerate(array_items(path, "cases", "dataset"), 1):
            yield raw, f"{label}[{count - 1}]", origin
        if count == 0:  # no `cases` items: say why (read whole, on this path only)
            data = read_json(path, "dataset")
            if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
                raise UsageError(f'dataset {path}: must be an object {{"cases": [...]}}')
            raise UsageError(f"dataset {path}: cases is empty; add at least one case")


def load_dataset(paths: list[Path]) -> Dataset:
    """Read and merge dataset files, all cases held (see `stream_dataset` for the stream)."""
    stream = stream_dataset(paths)
    cases = list(stream)
    return Dataset(cases, stream.hash, list(paths))


def cases_from_raw(raws: Iterable[Any], where: str) -> CaseStream:
    """The cases embedded in traces (`trace.case`), validated like a dataset's, streamed."""
    return CaseStream((raw, f"{where}: case {i}", where) for i, raw in enumerate(raws))


def parse_case(raw: Any, where: str) -> Case:
    """Validate one case object. `Case.raw` is its canonical form (a bare tool name in
    `expect.tool_calls` becomes `{"name": ...}`), which graph-agents-cli hashes and hands on."""
    raw = canonical_case(raw)
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: a case must be an object with id and messages")
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not case_id.strip():
        raise UsageError(f"{where}.id: must be a non-empty string")
    at = f"{where} (id {clip(repr(case_id))})"
    messages = raw.get("messages")
    if not isinstance(messages, list) or not messages:
        raise UsageError(f'{at}.messages: must be a non-empty list of {{"role", "content"}}')
    has_user = False
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise UsageError(f"{at}.messages[{i}]: must be an object with role and content")
        role = message.get("role")
        if role not in ROLES:
            raise UsageError(f"{at}.messages[{i}].role: must be one of {', '.join(ROLES)}")
        if not isinstance(message.get("content"), str):
            raise UsageError(f"{at}.messages[{i}].content: must be a string")
        has_user = has_user or role == "user"
    if not has_user:
        raise UsageError(f"{at}.messages: needs at least one user message (only those are sent)")
    normalised = normalise_expect(raw.get("expect"), at)
    for key in ("reference", "context"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"{at}.{key}: must be a string")
    metadata = raw.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise UsageError(f"{at}.metadata: must be an object")
    return Case(
        id=case_id,
        messages=messages,
        expect=normalised,
        judge=_judge_specs(raw.get("judge"), at),
        reference=raw.get("reference"),
        context=raw.get("context"),
        raw=raw,
    )


def _judge_specs(raw: Any, at: str) -> dict[str, dict[str, Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise UsageError(
            f'{at}.judge: must be an object like {{"task_success": {{"threshold": 4}}}}'
        )
    specs: dict[str, dict[str, Any]] = {}
    for name, spec in raw.items():
        spec = threshold_spec(spec)
        if not isinstance(spec, dict):
            raise UsageError(f'{at}.judge.{name}: must be an object like {{"threshold": 4}}')
        threshold = spec.get("threshold")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int | float)
        ):
            raise UsageError(f"{at}.judge.{name}.threshold: must be a number")
        specs[str(name)] = dict(spec)
    return specs


def threshold_spec(value: Any) -> Any:
    """A metric's settings as written: `null` means `{}` and a bare number its threshold
    (both a case's `judge.<m>` and the config's `quality_metrics.<m>` allow it)."""
    if value is None:
        return {}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"threshold": value}
    return value
