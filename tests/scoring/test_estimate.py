"""The token estimate a plan uses when the judge's tokenizer is unknown."""

from __future__ import annotations

import math

from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.scoring.estimate import (
    DIGIT_TOKENS,
    MESSAGE_TOKENS,
    NON_ASCII_LETTER_TOKENS,
    SHORT_WORD_TOKENS,
    estimated_tokens,
)


def request(*contents: str) -> JudgeRequest:
    return JudgeRequest(tuple(Message("user", c) for c in contents), "v")


def test_an_empty_message_costs_its_frame() -> None:
    assert estimated_tokens(request("")) == MESSAGE_TOKENS
    assert estimated_tokens(request("", "")) == 2 * MESSAGE_TOKENS


def test_words_digits_and_letters_outside_ascii_are_counted() -> None:
    words = estimated_tokens(request("the cat sat on the mat"))
    assert words == math.ceil(MESSAGE_TOKENS + 6 * SHORT_WORD_TOKENS)
    digits = estimated_tokens(request("1234567890"))
    assert digits == math.ceil(MESSAGE_TOKENS + 10 * DIGIT_TOKENS)
    accented = estimated_tokens(request("élan"))  # a short word with one letter past ASCII
    assert accented == math.ceil(MESSAGE_TOKENS + SHORT_WORD_TOKENS + NON_ASCII_LETTER_TOKENS)
    # a long word costs by its letters, more than a short one
    assert estimated_tokens(request("internationalization")) > estimated_tokens(request("cat"))


def test_the_count_does_not_depend_on_lines_already_seen() -> None:
    """Lines are counted once while they recur: the same text, split or repeated, counts
    the same as on its own."""
    a, b = '{"message":"Running the tests now"}', '{"observation":["3 passed in 0.2s"]}'
    alone = estimated_tokens(request(a)) + estimated_tokens(request(b)) - MESSAGE_TOKENS
    assert estimated_tokens(request(f"{a}\n{b}")) in (alone, alone + 1)  # rounding once
    first = estimated_tokens(request(f"{a}\n{b}\n{a}"))
    assert estimated_tokens(request(f"{a}\n{b}\n{a}")) == first
