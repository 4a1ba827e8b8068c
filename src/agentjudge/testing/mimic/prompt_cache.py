"""A provider's automatic prompt cache as OpenAI documents it: a prompt whose start repeats
an earlier prompt's (same model) has that start read from the cache, counted in
`usage.prompt_tokens_details.cached_tokens` from 1,024 tokens, in steps of 128.

Tokens are the mimics' estimate (four characters a token), so the cache remembers each
prompt's text at every 128-token boundary past 1,024: a lookup is one set probe a boundary,
whatever the number of prompts seen.
"""

from __future__ import annotations

import hashlib

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
        """Tokens of `prompt`'s start an earlier prompt of the same model shared (0 under
        the minimum); then `prompt` is one of the earlier prompts."""
        text = "".join(message["content"] for message in prompt.messages)
        cached = 0
        digest = hashlib.sha256(prompt.model.encode() + b"\0")
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
