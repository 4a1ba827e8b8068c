"""A provider's automatic prompt cache as OpenAI documents it: a prompt whose start repeats
an earlier prompt's (same model) has that start read from the cache, counted in
`usage.prompt_tokens_details.cached_tokens` from 1,024 tokens, in steps of 128. The answer's
schema (structured outputs) "serves as a prefix to the system message" (OpenAI's prompt
caching guide): prompts held to different schemas share no start, whatever their messages.

Tokens are the mimics' estimate (four characters a token), so the cache remembers each
prompt's text at every 128-token boundary past 1,024: a lookup is one set probe a boundary,
whatever the number of prompts seen.
"""

from __future__ import annotations

import hashlib
import json

from agentjudge.testing.scripted import Prompt

CHARS_PER_TOKEN = 4
MIN_TOKENS = 1024  # a shorter common start is not cached
STEP_TOKENS = 128  # cached tokens grow in these steps past the minimum


class PromptCache:
    """The starts of prompts already seen, by model; `read` counts a prompt's cached start
    and remembers the prompt."""

    def __init__(self) -> None:
        self._starts: set[bytes] = set()

    def read(self, prompt: Prompt) -> int:
        """Tokens of `prompt`'s start an earlier prompt of the same model and answer schema
        shared (0 under the minimum); then `prompt` is one of the earlier prompts. The
        schema's own tokens are not counted (the mimics count message text only)."""
        text = "".join(message["content"] for message in prompt.messages)
        cached = 0
        # the schema comes before the messages: in the digest every key starts from
        schema = json.dumps(prompt.schema, sort_keys=True) if prompt.schema is not None else ""
        digest = hashlib.sha256(f"{prompt.model}\0{schema}\0".encode())
        tokens, consumed = MIN_TOKENS, 0
        while tokens * CHARS_PER_TOKEN <= len(text):
            digest.update(text[consumed : tokens * CHARS_PER_TOKEN].encode())
            consumed = tokens * CHARS_PER_TOKEN
            key = digest.copy().digest()
            # a key holds the whole start: a miss here is a miss at every later boundary
            if key in self._starts:
                cached = tokens
            self._starts.add(key)
            tokens += STEP_TOKENS
        return cached


# Anthropic's cache, as documented: nothing is cached unless a block carries
# `cache_control`; the prefix up to such a breakpoint (tools, system, messages, in that
# order) is written when it reaches the model's minimum, and a request reads the longest
# entry found at a block boundary up to LOOKBACK_BLOCKS before one of its breakpoints.
# Other tools change every entry; another `tool_choice`, only those past the system
# prompt ("Changes to `tool_choice` parameter only affect message blocks").
LOOKBACK_BLOCKS = 20
MAX_BREAKPOINTS = 4


class BreakpointCache:
    """The prefixes written at breakpoints, by model, tools and (for the messages'
    blocks) `tool_choice`; `use` counts a request's
    cache reads and writes (in the mimics' tokens) and keeps what it wrote."""

    def __init__(self) -> None:
        self._entries: set[bytes] = set()

    def use(
        self,
        model: str,
        tools: str,
        blocks: list[tuple[str, bool]],
        minimum: int,
        tool_choice: str = "",
        messages_from: int | None = None,
    ) -> tuple[int, int]:
        """(read, written) tokens of a request of `blocks` (text, marked), in order, the
        messages' from `messages_from` on (their entries keyed by `tool_choice` too)."""
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        if not marks:
            return 0, 0
        digest = hashlib.sha256(f"{model}\0{tools}\0".encode())
        keys: list[bytes] = []
        tokens: list[int] = []
        chars = 0
        for index, (text, _) in enumerate(blocks):
            if index == messages_from:
                digest.update(f"\0{tool_choice}\0".encode())
            digest.update(text.encode())
            chars += len(text)
            keys.append(digest.copy().digest())
            tokens.append(chars // CHARS_PER_TOKEN)
        read = 0
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK_BLOCKS), -1):
                if keys[i] in self._entries:
                    read = max(read, tokens[i])
                    break
        written = 0
        for mark in marks:
            if tokens[mark] >= minimum and tokens[mark] > read:
                written = tokens[mark] - read
                self._entries.add(keys[mark])
        return read, written
