"""The JSON answer in an agent's reply, and its JSON-schema violations.

A reply is often prose around a JSON value, or shows an example before the real answer; the
answer is the whole reply when that parses, else the last top-level JSON object or array in
it (of the schema's root type when the schema names object and/or array).
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import jsonschema
from jsonschema.protocols import Validator

# How many `{` / `[` positions one reply may try as JSON starts: a reply of thousands of
# unmatched brackets must stay cheap.
MAX_JSON_STARTS = 2000

_DECODER = json.JSONDecoder()
_ROOT_TYPES: dict[str, type] = {"object": dict, "array": list}
_BY_ID: dict[int, tuple[Any, Validator]] = {}
_BY_TEXT: dict[str, Validator] = {}
_CACHE_SIZE = 4096


class NoJsonFound(ValueError):
    """The reply holds no JSON value."""


def json_values(text: str) -> list[Any]:
    """Every top-level JSON object or array in ``text``, in order; prose between them and
    brackets that start no valid value are skipped."""
    values: list[Any] = []
    position = 0
    for _ in range(MAX_JSON_STARTS):
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            value, position = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        values.append(value)
    return values


def json_answer(reply: str, schema: object) -> Any:
    """The JSON value a reply answers with; raises `NoJsonFound` when it has none."""
    text = reply.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    values = json_values(text)
    wanted = _root_types(schema)
    if wanted:
        values = [value for value in values if isinstance(value, wanted)] or values
    if not values:
        raise NoJsonFound("no JSON object or array found")
    return values[-1]


def _root_types(schema: object) -> tuple[type, ...]:
    """The Python types the schema's root ``type`` names among object and array."""
    declared = schema.get("type") if isinstance(schema, dict) else None
    names = declared if isinstance(declared, list) else [declared]
    return tuple(_ROOT_TYPES[name] for name in names if name in _ROOT_TYPES)


def schema_errors(schema: Any, value: Any) -> list[str]:
    """Every violation of ``schema`` by ``value``, sorted by where it is, as ``$.a.0: msg``
    (``$: msg`` at the root)."""
    errors = sorted(_validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    return [
        f"$.{'.'.join(str(p) for p in error.absolute_path)}: {error.message}"
        if error.absolute_path
        else f"$: {error.message}"
        for error in errors
    ]


def _validator(schema: Any) -> Validator:
    """A validator for ``schema``, built once per distinct schema.

    Looked up by object first (each case holds its own schema object; the cache keeps the
    object alive, so its id is not reused while cached), then by content: a dataset often
    repeats one schema in many cases, and building a validator costs more than ``repr``.
    ``repr`` tells JSON values apart (``1``, ``1.0`` and ``True`` print differently).
    """
    cached = _BY_ID.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    text = repr(schema)
    validator = _BY_TEXT.get(text)
    if validator is None:
        with warnings.catch_warnings():
            # An unknown `$schema` falls back to the latest draft, as graph-agents-cli does;
            # jsonschema's DeprecationWarning would only be noise on the console.
            warnings.simplefilter("ignore", DeprecationWarning)
            validator_class = jsonschema.validators.validator_for(schema)
        validator = validator_class(schema)
    if len(_BY_ID) >= _CACHE_SIZE or len(_BY_TEXT) >= _CACHE_SIZE:
        _BY_ID.clear()
        _BY_TEXT.clear()
    _BY_ID[id(schema)] = (schema, validator)
    _BY_TEXT[text] = validator
    return validator
