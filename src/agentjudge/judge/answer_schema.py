"""The JSON schema of each answer kind, as the judges that can be held to one are given it.

`reasoning` (or `rationale`) comes first: a model that writes its reasons before the number
scores better, and grammar-constrained servers emit properties in the order listed. Answers
are still parsed strictly (`verdict.py`): the schema guides the judge, it proves nothing.
"""

from __future__ import annotations

from typing import Any

from agentjudge.judge.binary_verdict import binary_schema
from agentjudge.judge.category_pick import pick_schema
from agentjudge.judge.request import JudgeRequest
from agentjudge.judge.taxonomy import CATEGORIES

# Keywords that every structured-output API takes. OpenAI's strict mode also takes
# minimum/maximum, but Azure OpenAI's refuses them (and min/maxLength, min/maxItems...).
PORTABLE_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "description"}
)
TENTHS = [round(tenth / 10, 1) for tenth in range(11)]  # 0.0, 0.1, ..., 1.0


def answer_schema(
    request: JudgeRequest, *, tenths: bool = False, reasoning_chars: int | None = None
) -> dict[str, Any]:
    """The schema of the answer `request` asks for (its own `response_schema` if it has one).

    `tenths` makes scores one of 0.0, 0.1, ..., 1.0 and `reasoning_chars` bounds the
    reasoning: for a small model behind a grammar, which ignores minimum/maximum and left
    free answers "100", and spends ~0.1 s a token on reasons.
    """
    if request.response_schema is not None:
        return request.response_schema
    reasoning: dict[str, Any] = {"type": "string"}
    if reasoning_chars is not None:
        reasoning["maxLength"] = reasoning_chars
    score: dict[str, Any] = (
        {"enum": TENTHS} if tenths else {"type": "number", "minimum": 0, "maximum": 1}
    )
    if request.answer == "binary":
        return binary_schema(len(request.criteria))
    if request.answer == "category_pick":
        return pick_schema()
    if request.answer == "category":
        return _object(
            rationale=reasoning,
            category={"type": "string", "enum": list(CATEGORIES)},
            confidence=score,
        )
    if request.answer == "rubric":
        criterion = _object(
            name={"type": "string", "maxLength": 60},
            description={"type": "string", "maxLength": 300},
            weight={"type": "integer", "enum": [1, 2, 3]},  # positive, as a rubric needs
        )
        return _object(criteria={"type": "array", "items": criterion, "minItems": 1, "maxItems": 5})
    if request.answer == "decisive":
        # no enum of the listed numbers: providers keep one schema per answer kind
        return _object(reason=reasoning, order={"type": "integer"})
    if request.criteria:
        scores = _object(**dict.fromkeys(request.criteria, score))
        return _object(reasoning=reasoning, scores=scores)
    return _object(reasoning=reasoning, score=score)


def portable(schema: Any) -> Any:
    """`schema` with only the keywords every structured-output API accepts (recursively);
    what the others said (ranges, lengths) the parser still checks."""
    if isinstance(schema, list):
        return [portable(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: portable(sub) for name, sub in value.items()}
        elif key in PORTABLE_KEYWORDS:
            out[key] = portable(value) if key == "items" else value
    return out


def schema_name(request: JudgeRequest) -> str:
    """A name for the answer's schema (OpenAI: a-z, A-Z, 0-9, _ and -, at most 64)."""
    names = {
        "category": "failure_category",
        "rubric": "rubric",
        "scaled": "case_score",
        "decisive": "decisive_step",
        "binary": "step_verdict_binary",
        "category_pick": "failure_category_number",
    }
    return names.get(request.answer, "step_verdict")


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
