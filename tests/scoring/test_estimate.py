"""The token estimate a plan uses when the judge's tokenizer is unknown."""

from __future__ import annotations

import math

from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.scoring.estimate import (
    CACHE_MIN_TOKENS,
    DIGIT_TOKENS,
    MESSAGE_TOKENS,
    NON_ASCII_LETTER_TOKENS,
    SHORT_WORD_TOKENS,
    PrefixReuse,
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


def test_a_step_prompt_reads_from_the_cache_the_start_it_shares_with_the_previous_one() -> None:
    reuse = PrefixReuse()
    head = "x" * 4000
    # 3,000 tokens each, sharing 4,000 of their 6,000 characters: 2,000 tokens
    reuse.add(request(head + "a" * 2000), 3000, 1)
    assert (reuse.read, reuse.written) == (0, 0)  # the first call finds nothing cached
    reuse.add(request(head + "b" * 2000), 3000, 1)
    assert (reuse.read, reuse.written) == (2000, 2000)  # the first call wrote what it reads
    reuse.add(request(head + "b" * 2000 + "c" * 400), 3200, 1)
    # it shares 6,000 of 6,400 characters with the previous: reads 3,000, of which the
    # previous call wrote the 1,000 beyond what it read itself
    assert (reuse.read, reuse.written) == (3000, 1000)
    # a start shorter than the shortest a provider caches is read at the full price
    short = PrefixReuse()
    short.add(request("y" * 1000 + "a"), 500, 1)
    short.add(request("y" * 1000 + "b"), 500, 1)
    assert (short.read, short.written) == (0, 0)
    # a call the verdict store answers is not sent: it reads and writes nothing
    stored = PrefixReuse()
    stored.add(request(head + "a"), 3000, 1)
    stored.add(request(head + "b"), 3000, 0)
    assert (stored.read, stored.written) == (0, 0)
    assert CACHE_MIN_TOKENS == 1024
