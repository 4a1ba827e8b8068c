"""The job's message for invalid input: each bad file with its rule, the first ten."""

from __future__ import annotations

from agentjudge.errors import Problem
from agentjudge.scoring.invalid import invalid_input_message


def problem(file: str, rule: str = "schema.json_invalid") -> Problem:
    return Problem(file, "$", rule, "not valid JSON")


def test_none_without_problems() -> None:
    assert invalid_input_message([]) is None


def test_every_file_is_named_with_its_rule() -> None:
    message = invalid_input_message([problem("a.json"), problem("a.json", "x.y"), problem("b")])
    assert message == (
        "2 invalid trajectory file(s): a.json: $: not valid JSON [schema.json_invalid]; "
        "a.json: $: not valid JSON [x.y]; b: $: not valid JSON [schema.json_invalid]"
    )


def test_past_the_limit_the_rest_are_counted() -> None:
    message = invalid_input_message([problem(f"{i}.json") for i in range(12)], limit=10)
    assert message is not None
    assert message.startswith("12 invalid trajectory file(s): 0.json: ")
    assert "9.json" in message
    assert "10.json" not in message
    assert message.endswith("; … and 2 more (agentjudge validate lists them)")
