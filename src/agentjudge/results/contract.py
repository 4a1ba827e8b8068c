"""How a results document read from a file is checked against its TypedDicts: strictly
(no key the contract does not name, none missing, no value of another JSON type), with the
first problem said in one line naming the file, the field and the fix."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import ConfigDict, TypeAdapter, ValidationError

from agentjudge.errors import UsageError, clip

# every record of a results document: an unknown key is a renamed or newer field, never
# silently dropped (docs/results.md, "Versions"); `strict`: JSON types as written, no
# coercion ("1" is not a number, true is not 1); field docstrings become the schema's
# descriptions
RECORD = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)

T = TypeVar("T")


def checked(adapter: TypeAdapter[T], document: Any, source: str, kind: str, fix: str) -> T:
    """`document` once `adapter` accepts it; else a UsageError (exit 3): `source: not a
    valid KIND: FIELD: PROBLEM (and N more); FIX`. The document is returned as read, not
    as validated: a number is the one in the file (pydantic would turn 1 into 1.0)."""
    try:
        adapter.validate_python(document)
    except ValidationError as exc:
        errors = exc.errors(include_input=False, include_url=False)
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise UsageError(
            f"{source}: not a valid {kind}: {clip(field_path(first['loc']))}: "
            f"{first['msg']}{more}; {fix}"
        ) from None
    return cast(T, document)


def field_path(loc: tuple[int | str, ...]) -> str:
    """`('trajectories', 0, 'nodes')` as `trajectories[0].nodes`; the top level as `(top)`."""
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    return path.lstrip(".") or "(top)"
