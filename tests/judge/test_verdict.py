"""Strict verdict parsing: only a finite number in [0, 1] is a score."""

from __future__ import annotations

import pytest

from agentjudge.errors import ProtocolError
from agentjudge.judge.verdict import MAX_RATIONALE_CHARS, parse_verdict


@pytest.mark.parametrize(
    ("content", "score"),
    [
        ('{"reasoning": "fine", "score": 0.5}', 0.5),
        ('{"score": 0}', 0.0),
        ('{"score": 1}', 1.0),
        ('```json\n{"score": 0.25}\n```', 0.25),
    ],
)
def test_valid_scores(content: str, score: float) -> None:
    assert parse_verdict(content).score == score


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("", "empty_answer"),
        ("the score is 0.7", "answer_not_json"),
        ("[0.5]", "answer_not_object"),
        ('{"reasoning": "no score"}', "score_missing"),
        ('{"score": true}', "score_not_number"),
        ('{"score": "0.5"}', "score_not_number"),
        ('{"score": 1.5}', "score_out_of_range"),
        ('{"score": -0.1}', "score_out_of_range"),
        ('{"score": NaN}', "score_out_of_range"),
        ('{"score": Infinity}', "score_out_of_range"),
    ],
)
def test_unusable_answers_are_protocol_errors(content: str, kind: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_verdict(content)
    assert caught.value.kind == kind
    assert content[:10] not in str(caught.value) or not content


def test_rationale_is_cut_and_extra_fields_kept() -> None:
    verdict = parse_verdict('{"reasoning": "%s", "score": 0.2, "category": "none"}' % ("x" * 5000))
    assert len(verdict.reasoning) == MAX_RATIONALE_CHARS
    assert verdict.fields == {"category": "none"}
