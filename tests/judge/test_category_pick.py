"""Category picks (the embedded judge's): a category's number, its confidence the judge's
probability of that number; a number that names no category is an error."""

from __future__ import annotations

import math

import pytest

from agentjudge.errors import ProtocolError
from agentjudge.judge.binary_verdict import TokenChoice
from agentjudge.judge.category_pick import CATEGORY_LINES, parse_category_pick, pick_schema
from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.judge.taxonomy import CATEGORIES


def test_every_category_is_listed_by_its_number() -> None:
    listed = [line.split(" = ")[1].split(":")[0] for line in CATEGORY_LINES.splitlines()]
    assert listed == list(CATEGORIES)
    assert pick_schema() == {"type": "integer", "enum": [1, 2, 3, 4, 5]}


def test_the_confidence_is_the_probability_of_the_number_among_the_numbers() -> None:
    top = {"3": math.log(0.6), "1": math.log(0.2), "The": math.log(0.2)}
    verdict = parse_category_pick("3", [TokenChoice("3", top)])
    assert verdict.fields == {"category": CATEGORIES[2]}
    assert verdict.score == pytest.approx(0.75)
    assert verdict.reasoning == f"picked 3 ({CATEGORIES[2]}), p 0.75"


def test_without_probabilities_the_written_number_is_certain() -> None:
    verdict = parse_category_pick(" 5 ", [])
    assert (verdict.fields["category"], verdict.score) == ("none", 1.0)


@pytest.mark.parametrize(
    ("content", "kind"),
    [("", "empty_answer"), ("two", "answer_not_json"), ("0", "category_invalid"),
     ("6", "category_invalid"), ("true", "category_invalid"), ('"1"', "category_invalid")],
)  # fmt: skip
def test_no_category_is_a_protocol_error(content: str, kind: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_category_pick(content, [])
    assert caught.value.kind == kind


def test_a_pick_request_accepts_only_a_category_of_the_taxonomy() -> None:
    request = JudgeRequest((Message("user", "which?"),), "v", answer="category_pick")
    verdict = request.parse("1", [TokenChoice("1", {"1": 0.0})])
    assert verdict.fields["category"] == CATEGORIES[0]
    assert request.accepts(verdict)
    assert not request.accepts(type(verdict)(0.5, "", {"category": "made_up"}))
