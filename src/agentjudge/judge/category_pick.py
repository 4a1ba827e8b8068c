"""Reading a category pick: the number of a failure category (the embedded judge's answer
for a step that scored low; see scoring/small_prompt.py), its confidence the probability the
judge gave that number among the categories' numbers (`top_logprobs`), or 1.0 as written
when the answer carries no probabilities. A number that names no category is an error
(`ProtocolError`): the step stays uncategorized, never gets a made-up category.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from agentjudge.errors import ProtocolError
from agentjudge.judge.binary_verdict import TokenChoice
from agentjudge.judge.taxonomy import CATEGORIES
from agentjudge.judge.verdict import Verdict, answer_json

DESCRIPTIONS = {
    "tool_selection_failure": "the wrong tool, or a tool with wrong arguments",
    "context_loss": "lost track of what the task requires or of earlier evidence",
    "policy_boundary_violation": "crossed a limit the task or a policy sets",
    "reasoning_failure": "its conclusion does not follow from what it knew",
    "none": "no actionable failure",
}
# the categories as the prompt lists them: `1 = tool_selection_failure: ...`
CATEGORY_LINES = "\n".join(
    f"{number} = {name}: {DESCRIPTIONS[name]}" for number, name in enumerate(CATEGORIES, 1)
)
_NUMBERS = {str(number): number for number in range(1, len(CATEGORIES) + 1)}


def pick_schema() -> dict[str, object]:
    """One of the categories' numbers."""
    return {"type": "integer", "enum": list(range(1, len(CATEGORIES) + 1))}


def parse_category_pick(content: str, tokens: Sequence[TokenChoice]) -> Verdict:
    """`{"category": name}` with the confidence described above."""
    number = answer_json(content)
    if isinstance(number, bool) or not isinstance(number, int) or str(number) not in _NUMBERS:
        raise ProtocolError("category_invalid")
    category = CATEGORIES[number - 1]
    confidence = 1.0
    place = next((t for t in tokens if t.token.strip() == str(number)), None)
    if place is not None:
        mass: dict[int, float] = {}
        for token, logprob in place.top.items():
            found = _NUMBERS.get(token.strip())
            if found is not None and isinstance(logprob, int | float) and not math.isnan(logprob):
                mass[found] = mass.get(found, 0.0) + math.exp(min(float(logprob), 0.0))
        total = sum(mass.values())
        if total > 0.0 and math.isfinite(total):
            confidence = mass.get(number, 0.0) / total
    rationale = f"picked {number} ({category}), p {confidence:.2f}"
    return Verdict(confidence, rationale, {"category": category})
