"""Structured Outputs' strict mode, as OpenAI checks a `json_schema` response format's
schema before a call (Azure OpenAI refuses more keywords: `mimic/azure.py`)."""

from __future__ import annotations

from typing import Any

# Structured Outputs' strict mode rejects schemas using these keywords
NOT_PERMITTED = (
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "oneOf",
    "patternProperties",
)


def strict_schema_problem(schema: dict[str, Any], not_permitted: tuple[str, ...]) -> str | None:
    """What Structured Outputs' strict mode refuses in `schema`, or None."""
    if schema.get("type") != "object":
        return (
            "schema must be a JSON Schema of 'type: \"object\"', "
            f"got 'type: \"{schema.get('type')}\"'."
        )
    return _subschema_problem(schema, (), not_permitted)


def _subschema_problem(
    node: Any, context: tuple[str, ...], not_permitted: tuple[str, ...]
) -> str | None:
    if not isinstance(node, dict):
        return None
    where = f"In context={context!r}"
    for keyword in not_permitted:
        if keyword in node:
            return f"{where}, '{keyword}' is not permitted."
    kind = node.get("type")
    properties = node.get("properties")
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or properties:
        if node.get("additionalProperties") is not False:
            return f"{where}, 'additionalProperties' is required to be supplied and to be false."
        required = node.get("required")
        properties = properties if isinstance(properties, dict) else {}
        for name in properties:
            if not isinstance(required, list) or name not in required:
                return (
                    f"{where}, 'required' is required to be supplied and to be an array "
                    f"including every key in properties. Missing '{name}'."
                )
    children: list[tuple[tuple[str, ...], Any]] = []
    if isinstance(properties, dict):
        children += [(("properties", n), s) for n, s in properties.items()]
    if "items" in node:
        children.append((("items",), node["items"]))
    if isinstance(node.get("anyOf"), list):
        children += [(("anyOf", str(i)), s) for i, s in enumerate(node["anyOf"])]
    for defs in ("$defs", "definitions"):
        if isinstance(node.get(defs), dict):
            children += [((defs, n), s) for n, s in node[defs].items()]
    for step, child in children:
        problem = _subschema_problem(child, context + step, not_permitted)
        if problem is not None:
            return problem
    return None
