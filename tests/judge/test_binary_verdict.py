"""Binary answers (the embedded judge's): `true`/`false` weighed by the judge's probability
of `true`; no answer is an error, never a score."""

from __future__ import annotations

import math

import pytest

from agentjudge.errors import ProtocolError
from agentjudge.judge.binary_verdict import (
    TokenChoice,
    binary_schema,
    parse_binary_answer,
    probability_true,
    written_answers,
)
from agentjudge.judge.request import JudgeRequest, Message


def choice(token: str, **probabilities: float) -> TokenChoice:
    """A token whose alternatives have these probabilities."""
    return TokenChoice(token, {k: math.log(p) for k, p in probabilities.items()})


def test_the_probability_of_true_is_renormalized_over_true_and_false() -> None:
    top = {"true": math.log(0.5), "false": math.log(0.2), "The": math.log(0.3)}
    assert probability_true(top) == pytest.approx(0.5 / 0.7)


def test_every_spelling_of_true_and_false_counts() -> None:
    top = {"true": math.log(0.3), "True": math.log(0.1), " false": math.log(0.2), "FALSE": -2.0}
    assert probability_true(top) == pytest.approx(0.4 / (0.4 + 0.2 + math.exp(-2.0)))
    assert probability_true({"true": -0.1, "yes": -0.01}) == 1.0


@pytest.mark.parametrize(
    "top", [{}, {"yes": -0.1}, {"true": float("nan")}, {"false": float("-inf")}]
)
def test_no_usable_probability_is_none(top: dict[str, float]) -> None:
    assert probability_true(top) is None


def test_an_answer_is_weighed_by_its_tokens_alternatives() -> None:
    verdict = parse_binary_answer("true", [choice("true", true=0.6, false=0.2)])
    assert verdict.score == pytest.approx(0.75)
    assert verdict.fields == {"answers": [True]}
    assert verdict.reasoning == "answered true (p(true) 0.75)"
    assert verdict.scores == {}
    # a `false` answer keeps the weight the judge gave `true`: never 0 just for its word
    assert parse_binary_answer("false", [choice("false", true=0.4, false=0.6)]).score == (
        pytest.approx(0.4)
    )


def test_without_alternatives_the_written_answer_is_the_score() -> None:
    assert parse_binary_answer("true", []).score == 1.0
    assert parse_binary_answer(" false\n", []).reasoning == "answered false"
    assert parse_binary_answer(" false\n", []).score == 0.0
    # tokens that do not match what was written are not used
    assert parse_binary_answer("false", [choice("true", true=0.9, false=0.1)]).score == 0.0


def test_several_criteria_get_a_probability_each_and_their_mean() -> None:
    tokens = [
        TokenChoice("[", {"[": 0.0}),
        choice("true", true=0.9, false=0.1),
        TokenChoice(",", {",": 0.0}),
        choice(" false", false=0.75, true=0.25),
        TokenChoice("]", {"]": 0.0}),
    ]
    verdict = parse_binary_answer("[true, false]", tokens, ("correct", "safe"))
    assert verdict.scores == pytest.approx({"correct": 0.9, "safe": 0.25})
    assert verdict.score == pytest.approx((0.9 + 0.25) / 2)
    assert verdict.reasoning == (
        "correct: answered true (p(true) 0.90); safe: answered false (p(true) 0.25)"
    )


@pytest.mark.parametrize(
    ("content", "criteria", "kind"),
    [
        ("", (), "empty_answer"),
        ("  ", (), "empty_answer"),
        ("yes", (), "answer_not_json"),
        ("1", (), "answer_not_boolean"),
        ('"true"', (), "answer_not_boolean"),
        ("null", (), "answer_not_boolean"),
        ("[true, false]", (), "answers_mismatch"),
        ("[true]", ("a", "b"), "answers_mismatch"),
        ("[true, 0]", ("a", "b"), "answer_not_boolean"),
    ],
)
def test_no_answer_is_a_protocol_error_never_a_score(
    content: str, criteria: tuple[str, ...], kind: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_binary_answer(content, [choice("true", true=1.0)], criteria)
    assert caught.value.kind == kind


def test_written_answers_reads_a_bare_boolean_or_an_array() -> None:
    assert written_answers("true", 1) == [True]
    assert written_answers("[false,true,true]", 3) == [False, True, True]


def test_the_schema_is_a_bare_boolean_or_one_per_criterion() -> None:
    assert binary_schema(1) == {"type": "boolean"}
    assert binary_schema(3) == {
        "type": "array",
        "items": {"type": "boolean"},
        "minItems": 3,
        "maxItems": 3,
    }


def test_a_binary_request_parses_its_answer_with_the_tokens_and_accepts_its_verdict() -> None:
    request = JudgeRequest((Message("user", "is it right?"),), "v", answer="binary")
    verdict = request.parse("true", [choice("true", true=0.9, false=0.1)])
    assert verdict.score == pytest.approx(0.9)
    assert request.accepts(verdict)
