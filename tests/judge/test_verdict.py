"""Strict verdict parsing: only a finite number in [0, 1] is a score."""

from __future__ import annotations

import base64

import pytest

from agentjudge.errors import ProtocolError
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.verdict import MAX_RATIONALE_CHARS, Verdict, parse_verdict, without_secrets


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


def test_a_verdict_keeps_no_secret_of_the_judge() -> None:
    provider = OpenAICompatible(
        "https://bob:pa%24%24word-77@judge.example/v1?key=AIzaQueryKey1234&api-version=2024",
        "m",
        api_key="sk-the-key-0123456789",
    )
    basic = base64.b64encode(b"bob:pa$$word-77").decode()
    said = f"you sent Bearer sk-the-key-0123456789, Basic {basic}, key=AIzaQueryKey1234 and "
    verdict = Verdict(0.5, said + "sk-the-key-01", {"notes": ["pa$$word-77"], "version": 2024})
    clean = without_secrets(verdict, provider.secrets)
    assert clean == Verdict(
        0.5,
        "you sent Bearer ***, Basic ***, key=*** and ***",  # a cut-off key's start too
        {"notes": ["***"], "version": 2024},
    )
    plain = Verdict(0.9, "nothing to hide", {"category": "context_loss"})
    assert without_secrets(plain, provider.secrets) is plain
