"""Reading a case judge's score: graph-agents-cli's reading order, and our range rule."""

from __future__ import annotations

import re

import jsonschema
import pytest

from agentjudge.errors import ProtocolError
from agentjudge.judge.scaled import case_score_schema, parse_case_score


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"score": 4, "reasoning": "Correct and brief."}', (4.0, "Correct and brief.")),
        ('{"reasoning": "Mostly right.", "score": 3.5}', (3.5, "Mostly right.")),
        ('{"score": 2, "explanation": "Off topic."}', (2.0, "Off topic.")),
        ('{"score": 2, "reasoning": "", "explanation": "fallback"}', (2.0, "fallback")),
        ('{"score": 5}', (5.0, "")),
        ('{"score": "4"}', (4.0, "")),  # graph-agents-cli converts with float()
        ('{"score": 1, "reasoning": ["a", "b"]}', (1.0, "['a', 'b']")),
        ('```json\n{"score": 4, "reasoning": "ok"}\n```', (4.0, "ok")),
        ('Here is my verdict: {"score": 3, "reasoning": "partial"} Thanks.', (3.0, "partial")),
        ("4", (4.0, "")),
        ("  2.5\n", (2.5, "")),
        ("5", (5.0, "")),
        ("1", (1.0, "")),
    ],
)
def test_accepted_replies(reply: str, expected: tuple[float, str]) -> None:
    assert parse_case_score(reply, 5) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "Score: 4. The answer is right.",
        "SCORE = 4/5, fine",
        'I would say "score": 4 overall',
        # A JSON object without `score` falls through to the phrase.
        '{"rating": 2} final score: 4',
    ],
)
def test_a_score_phrase_is_read_and_the_reasoning_is_the_whole_reply(reply: str) -> None:
    assert parse_case_score(f"  {reply}\n", 5) == (4.0, reply)


def test_a_minus_sign_before_the_number_is_read_as_a_sign() -> None:
    # graph-agents-cli's greedy gap reads "score: -2" as 2; a negative score is out of range.
    with pytest.raises(ProtocolError, match="score_out_of_range"):
        parse_case_score("Score: -2", 5)
    assert parse_case_score("score - 3 overall", 5) == (3.0, "score - 3 overall")


def test_the_scale_bounds_the_score() -> None:
    assert parse_case_score('{"score": 10}', 10) == (10.0, "")
    assert parse_case_score('{"score": 7.5}', 7.5) == (7.5, "")


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("", "empty_answer"),
        ("   \n", "empty_answer"),
        ('{"score": null, "reasoning": "x"}', "score_missing"),
        ("The reply is good.", "score_missing"),
        ('{"rating": 4}', "score_missing"),
        ("true", "score_missing"),
        ("four", "score_missing"),
        ('{"score": true}', "score_not_number"),
        ('{"score": false}', "score_not_number"),
        ('{"score": [4]}', "score_not_number"),
        ('{"score": {"value": 4}}', "score_not_number"),
        ('{"score": "high"}', "score_not_number"),
        ('{"score": NaN}', "score_out_of_range"),
        ('{"score": Infinity}', "score_out_of_range"),
        ('{"score": -Infinity}', "score_out_of_range"),
        ('{"score": "nan"}', "score_out_of_range"),
        ('{"score": 0}', "score_out_of_range"),
        ('{"score": 0.99}', "score_out_of_range"),
        ('{"score": 6}', "score_out_of_range"),
        ('{"score": 5.01}', "score_out_of_range"),
        ("score: 9", "score_out_of_range"),
        ("0", "score_out_of_range"),
        ('{"score": 1' + "0" * 400 + "}", "score_out_of_range"),
        ("1" + "0" * 400, "score_out_of_range"),
    ],
)
def test_rejected_replies_raise_a_fixed_kind(reply: str, kind: str) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_case_score(reply, 5)
    assert err.value.kind == kind
    # the reply itself never reaches the error's kind and detail: at most the number
    # refused, shown by us (graph-agents-cli's words, which quote it, are apart: below)
    if kind == "score_out_of_range":
        shown = r"(\S+|a number too large to show)"
        assert re.fullmatch(rf"{kind}: {shown} is outside 1\.\.5", str(err.value))
    else:
        assert str(err.value) == kind


NO_SCORE = "ValueError: could not parse a score from judge reply: "
REFUSED = "TypeError: float() argument must be a string or a real number, not "


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        ("", NO_SCORE + "''"),
        (" no verdict here\n", NO_SCORE + "'no verdict here'"),
        ("it's " + "x" * 300, NO_SCORE + "\"it's " + "x" * 195 + '"'),  # 200 characters
        ('{"score": null}', REFUSED + "'NoneType'"),
        ('{"score": [4]}', REFUSED + "'list'"),
        ('{"score": "high"}', "ValueError: could not convert string to float: 'high'"),
        ("1" + "0" * 400, "OverflowError: int too large to convert to float"),
        # graph-agents-cli reads a score from these: it has no words for them
        ('{"score": true}', ""),
        ('{"score": 7}', ""),
        ('{"score": NaN}', ""),
    ],
)
def test_graph_agents_cli_s_words_for_a_reply_it_reads_no_score_from(
    reply: str, words: str
) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_case_score(reply, 5)
    assert err.value.reply_error == words


def test_the_refused_number_is_shown() -> None:
    with pytest.raises(ProtocolError) as err:
        parse_case_score('{"score": 7, "reasoning": "secret prompt text"}', 5)
    assert str(err.value) == "score_out_of_range: 7 is outside 1..5"
    with pytest.raises(ProtocolError) as err:
        parse_case_score('{"score": ' + "9" * 400 + "}", 5)
    assert str(err.value) == "score_out_of_range: a number too large to show is outside 1..5"


def test_a_null_score_does_not_fall_back_to_the_phrase() -> None:
    # graph-agents-cli raises on `"score": null` rather than reading further; so do we.
    with pytest.raises(ProtocolError, match="score_missing"):
        parse_case_score('{"score": null, "reasoning": "score: 4"}', 5)


def test_the_schema_asks_for_reasoning_then_a_score_in_1_to_scale() -> None:
    schema = case_score_schema(5.0)
    assert list(schema["properties"]) == ["reasoning", "score"]
    assert schema["properties"]["score"] == {
        "type": "number",
        "minimum": 1,
        "maximum": 5,
        "enum": [1, 2, 3, 4, 5],
    }
    assert isinstance(schema["properties"]["score"]["maximum"], int)
    assert schema["required"] == ["reasoning", "score"]
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"reasoning": "ok", "score": 4})
    assert not validator.is_valid({"reasoning": "ok", "score": 4.5})  # whole numbers
    assert not validator.is_valid({"reasoning": "ok", "score": 6})
    assert not validator.is_valid({"reasoning": "ok", "score": 0})
    assert not validator.is_valid({"score": 3})
    assert not validator.is_valid({"reasoning": "ok", "score": 3, "extra": 1})
    assert case_score_schema(7.5)["properties"]["score"]["maximum"] == 7.5
    assert "enum" not in case_score_schema(7.5)["properties"]["score"]
