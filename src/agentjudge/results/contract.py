"""How a results document read from a file is checked against its TypedDicts: strictly (no
value of another JSON type), with the first problem said in one line naming the file, the
field and the fix (a UsageError, exit 3).

Pydantic is imported when the first file is read back, not before: `score` and `grade` never
check what they have just written, and their start-up is on every CI gate.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from agentjudge.errors import UsageError, clip
from agentjudge.files import read_json

if TYPE_CHECKING:
    from pydantic import ConfigDict, TypeAdapter
    from pydantic_core import ErrorDetails

# a record of a document that forbids what it does not name: an unknown key is a renamed or
# newer field, never silently dropped (docs/results.md, "Versions"); field docstrings become
# the schema's descriptions
RECORD: ConfigDict = {"extra": "forbid", "strict": True, "use_attribute_docstrings": True}

T = TypeVar("T")


def record(types: type[T]) -> type[T]:
    """A TypedDict configured as `RECORD`: what `pydantic.with_config(RECORD)` does, without
    importing pydantic when the types are."""
    types.__pydantic_config__ = RECORD  # type: ignore[attr-defined]
    return types


@dataclass(frozen=True)
class Contract(Generic[T]):
    """A results document kind: its types, the `schema` value of the version they describe,
    what to do with a file that does not hold to them, and the keys that make a document
    without `schema` one of this kind (grade results written by graph-agents-cli)."""

    name: str  # its JSON Schema's file: docs/schemas/<name>.schema.json
    schema: str
    types: type[T]
    fix: str
    keys: tuple[str, ...] = ()

    @cached_property
    def adapter(self) -> TypeAdapter[T]:
        """The types' validator, built on first use."""
        # JsonValue: named by score's types for mypy only; pydantic finds it in this frame
        from pydantic import JsonValue, TypeAdapter  # noqa: F401

        return TypeAdapter(self.types)

    def claims(self, document: Any) -> bool:
        """Whether `document` says it is of this kind: its `schema` names this kind in any
        version (`check` says which it reads), or it has none and holds `keys`."""
        if not isinstance(document, dict):
            return False
        if "schema" not in document:
            return bool(self.keys) and all(key in document for key in self.keys)
        schema = document["schema"]
        return isinstance(schema, str) and _kind(schema) == _kind(self.schema)

    def check(self, document: Any, source: str) -> T:
        """`document`, read from `source`, once the types accept it, returned as read (a 3
        stays 3, not 3.0); else a UsageError: `SOURCE: not a valid SCHEMA results file:
        FIELD: PROBLEM (it is VALUE) (and N more); FIX`."""
        from pydantic import ValidationError

        what = f"{source}: not a valid {self.schema} results file"
        schema = document.get("schema", self.schema) if isinstance(document, dict) else None
        if isinstance(schema, str) and schema != self.schema:  # else the types say what it is
            raise UsageError(
                f"{what}: schema: {clip(repr(schema), 60)} is a version this agentjudge does "
                "not read; upgrade agentjudge"
            )
        try:
            self.adapter.validate_python(document, strict=True)
        except ValidationError as exc:
            raise UsageError(
                f"{what}: {first_problem(document, exc.errors())}; {self.fix}"
            ) from None
        return cast(T, document)

    def read(self, path: Path) -> T:
        """The document in `path`, checked; a missing or unreadable file is a usage error."""
        return self.check(read_json(path, "results file"), str(path))


def _kind(schema: str) -> str:
    return schema.partition("/")[0]


def first_problem(document: Any, errors: list[ErrorDetails]) -> str:
    """The first field pydantic refused, as `cases[3].status: Input should be ... (it is 1)`,
    and how many other fields it refused. One field of a union (a number: int or float)
    gives an error per member: said together."""
    fields = [field_path(document, error) for error in errors]
    said = [error["msg"] for error, field in zip(errors, fields, strict=True) if field == fields[0]]
    text = ", or ".join(
        dict.fromkeys([said[0], *(m.removeprefix("Input should be ") for m in said[1:])])
    )
    if errors[0]["type"] != "missing":
        text += f" (it is {clip(repr(errors[0]['input']), 60)})"
    if more := len(set(fields)) - 1:
        text += f" (and {more} more)"
    return f"{fields[0]}: {text}"


def field_path(document: Any, error: ErrorDetails) -> str:
    """Where an error is, as jq writes it (`cases[3].judge_scores.x.score`): the parts of
    its location that lead into the document (a union member's tag does not), and the name
    of a missing key; the document itself is `the top level`."""
    text, node = "", document
    for part in error["loc"]:
        found = (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        )
        if not found and not (error["type"] == "missing" and isinstance(node, dict)):
            break
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
        if not found:
            break
        node = node[part]
    return text or "the top level"
