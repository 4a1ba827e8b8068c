"""Eval datasets: `{"cases": [...]}` files, validated and merged, with their canonical hash.

Every problem is a configuration error (exit 3) naming the file, the case and the field.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjudge.cases.loading.expect import canonical_case, normalise_expect
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


def canonical_hash(value: Any) -> str:
    """sha256 of sorted-key, compact, non-ASCII-preserving JSON (graph-agents-cli's hash)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_dataset(paths: list[Path]) -> Dataset:
    """Read and merge dataset files; a duplicate case id across them is an error."""
    cases: list[Case] = []
    raws: list[Any] = []
    seen: dict[str, Path] = {}
    for path in paths:
        data = read_json(path, "dataset")
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
            raise UsageError(f'dataset {path}: must be an object {{"cases": [...]}}')
        if not data["cases"]:
            raise UsageError(f"dataset {path}: cases is empty; add at least one case")
        for index, raw in enumerate(data["cases"]):
            case = parse_case(raw, f"{path}: cases[{index}]")
            if case.id in seen:
                raise UsageError(
                    f"dataset {path}: cases[{index}].id {clip(repr(case.id))} is already used in "
                    f"{seen[case.id]}; give every case a unique id"
                )
            seen[case.id] = path
            cases.append(case)
            raws.append(case.raw)
    return Dataset(cases, canonical_hash({"cases": raws}), list(paths))


def cases_from_raw(raws: list[Any], where: str) -> Dataset:
    """The cases embedded in traces (`trace.case`), validated like a dataset's."""
    cases = [parse_case(raw, f"{where}: case {i}") for i, raw in enumerate(raws)]
    return Dataset(cases, canonical_hash({"cases": [case.raw for case in cases]}))


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
