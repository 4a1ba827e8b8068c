"""Parse one ATIF document from bytes: the schema (models) plus the rules, as `Problem`s."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentjudge.atif.models import SCHEMA_VERSIONS, Trajectory
from agentjudge.atif.rules import check_trajectory
from agentjudge.errors import InputError, Problem

MAX_PROBLEMS_PER_FILE = 50

# Tags of our discriminated unions: pydantic puts them in an error's location, users do not
# need them in a JSON path.
_UNION_TAGS = frozenset({"str", "list", "object"})

_FRIENDLY: dict[str, str] = {
    "missing": "required key is missing",
    "extra_forbidden": (
        "unknown key: ATIF objects forbid extra keys (put custom data under 'extra')"
    ),
    "json_invalid": "not valid JSON",
    "model_type": "must be a JSON object",
    "model_attributes_type": "must be a JSON object",
}


def parse_trajectory(data: bytes, file: str) -> Trajectory:
    """Validate `data` as an ATIF document; raise `InputError` listing every problem."""
    try:
        traj = Trajectory.model_validate_json(data)
    except ValidationError as exc:
        marked = _byte_order_mark(data)
        if marked is not None:  # the parser says only "expected value at line 1 column 1"
            fix = f"the file starts with a {marked} byte order mark; save it as UTF-8 without one"
            raise InputError([Problem(file, "$", "schema.json_invalid", fix)]) from None
        raise InputError(_cap(schema_problems(exc, file))) from None
    problems = list(check_trajectory(traj, file))
    if problems:
        raise InputError(_cap(problems))
    return traj


# what editors on Windows and UTF-16 exports put first; JSON text has none (RFC 8259 8.1),
# and every ATIF reader we know refuses them
_BYTE_ORDER_MARKS = (
    (b"\xef\xbb\xbf", "UTF-8"),
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def _byte_order_mark(data: bytes) -> str | None:
    return next((name for mark, name in _BYTE_ORDER_MARKS if data.startswith(mark)), None)


def schema_problems(exc: ValidationError, file: str) -> list[Problem]:
    """One `Problem` per pydantic error, with a JSON path and a message that says the fix."""
    problems = []
    for err in exc.errors(include_url=False, include_input=False):
        kind = err["type"]
        loc = [part for part in err["loc"] if part not in _UNION_TAGS]
        path = json_path(loc)
        message = _FRIENDLY.get(kind, err["msg"])
        if kind == "json_invalid":
            said = err["msg"].removeprefix("Invalid JSON: ")
            # ATIF is UTF-8 JSON: bytes of another encoding are the usual cause, and a
            # code point is not what the user needs to hear about
            fix = "; save the file as UTF-8" if "unicode" in said or "utf-8" in said else ""
            message = f"not valid JSON ({said}){fix}"
        elif kind == "literal_error" and loc == ["schema_version"]:
            message = f"schema_version must be one of {', '.join(SCHEMA_VERSIONS)}"
        elif kind == "value_error":
            message = message.removeprefix("Value error, ")
        problems.append(Problem(file, path, f"schema.{kind}", message))
    return problems


def json_path(loc: list[Any] | tuple[Any, ...]) -> str:
    """`('steps', 3, 'message')` -> `$.steps[3].message`."""
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _cap(problems: list[Problem]) -> list[Problem]:
    if len(problems) <= MAX_PROBLEMS_PER_FILE:
        return problems
    kept = problems[:MAX_PROBLEMS_PER_FILE]
    rest = len(problems) - MAX_PROBLEMS_PER_FILE
    kept.append(Problem(kept[0].file, "$", "problems.truncated", f"... and {rest} more problems"))
    return kept
