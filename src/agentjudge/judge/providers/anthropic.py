"""Anthropic's Messages API (`anthropic`), as documented.

`POST {base}/v1/messages` with `x-api-key` and `anthropic-version: 2023-06-01`;
`max_tokens` is required, the system prompt is the top-level `system` field (there is no
system role), and the JSON answer comes from a tool the model is made to call
(`tool_choice: {"type": "tool", ...}`): its `input` is the verdict, shaped by the tool's
`input_schema`. Errors are `{"type": "error", "error": {"type", "message"}}`; 529
(overloaded) is retried like a 5xx. Models that refuse a temperature (Opus 4.7 and later)
are sent none once they have said so.

Prompt caching, as documented (docs/judge.md, "Prompt caching"): a message whose text
marks the prefixes later requests repeat (`Message.cache_points`) is sent as text blocks
cut there, and `cache_control` breakpoints go on at most four of them, only where the
prefix (tools, system, messages, in that order) reaches the model's minimum cacheable
length: the end of the system prompt, the end of the opening every step of a trajectory
shares, and the end of the growing prefix. The API looks for an earlier request's entry at
every block boundary up to 20 blocks before a breakpoint, so each step finds the one the
step before it wrote.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx
import orjson

from agentjudge.errors import ProtocolError
from agentjudge.judge.answer_schema import answer_schema
from agentjudge.judge.providers.base import (
    FORM,
    Answer,
    Provider,
    json_body,
    post_json,
    token_count,
)
from agentjudge.judge.request import JudgeRequest

ANTHROPIC_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
TOOL = "record_verdict"
AnswerMode = Literal["tool", "prompt"]
MAX_BREAKPOINTS = 4  # `cache_control` blocks a request may carry
CHARS_PER_TOKEN = 4  # a prefix's tokens, estimated low: a breakpoint is never under the minimum
EPHEMERAL = {"type": "ephemeral"}
# The minimum cacheable prompt length, by model (Anthropic's prompt caching page): a
# shorter prefix is not cached, whatever it is marked. Names are matched by their start;
# a model not listed gets the most common minimum.
MIN_CACHEABLE_TOKENS = (
    ("claude-opus-4-5", 4096),
    ("claude-opus-4-6", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-opus-4-7", 2048),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
)
DEFAULT_MIN_CACHEABLE_TOKENS = 1024  # Sonnet 4.x, Opus 4 and 4.1, Sonnet 3.7


def min_cacheable_tokens(model: str) -> int:
    """The shortest prefix, in tokens, that `model` caches."""
    name = model.lower().rsplit("/", 1)[-1]
    for prefix, tokens in MIN_CACHEABLE_TOKENS:
        if name.startswith(prefix):
            return tokens
    return DEFAULT_MIN_CACHEABLE_TOKENS


class Anthropic(Provider):
    """Claude models through the Messages API."""

    name: str = "anthropic"
    prompt_cache = True

    def __init__(self, base_url: str, model: str, api_key: str | None = None) -> None:
        base = base_url.rstrip("/")
        endpoint = f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"
        super().__init__(model, endpoint, api_key)
        self._url = httpx.URL(self.endpoint)
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        self._headers = httpx.Headers(headers)
        self.mode: AnswerMode = "tool"
        self.tool_answered = False  # once a forced tool call is answered, it is never dropped
        self.send_temperature = True
        self._tools: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]] = {}

    def _form(self) -> tuple[object, ...]:
        return (self.mode, self.send_temperature)

    def build(self, request: JudgeRequest) -> httpx.Request:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": [
                {"role": m.role, "content": m.content}
                for m in request.messages
                if m.role != "system"
            ],
        }
        if system:
            body["system"] = system
        if self.send_temperature:
            body["temperature"] = request.temperature
        if self.mode == "tool":
            body["tools"] = self._tool(request)
            body["tool_choice"] = {"type": "tool", "name": TOOL}
        if any(m.cache_points for m in request.messages):
            self._mark_cache(body, request)
        built = post_json(self._url, self._headers, body)
        built.extensions[FORM] = self._form()
        return built

    def _mark_cache(self, body: dict[str, Any], request: JudgeRequest) -> None:
        """Put breakpoints at the end of the system prompt, of the first marked prefix and
        of the last one, where each reaches the model's minimum, cutting the messages into
        text blocks at their marks (see the module's docstring). A request with no prefix
        that long is sent as it was."""
        minimum = min_cacheable_tokens(self.model) * CHARS_PER_TOKEN
        # the prefix's characters so far: tools come first, then the system prompt
        chars = len(orjson.dumps(body["tools"])) if "tools" in body else 0
        chars += len(body.get("system", ""))
        system_marked = "system" in body and chars >= minimum
        contents: list[list[dict[str, Any]] | None] = []
        marked: list[tuple[int, dict[str, Any]]] = []  # (the prefix's characters, its block)
        asked = [m for m in request.messages if m.role != "system"]
        for message in asked:
            if not message.cache_points:
                contents.append(None)
                chars += len(message.content)
                continue
            blocks: list[dict[str, Any]] = []
            start = 0
            for point in message.cache_points:
                if point > start:
                    blocks.append({"type": "text", "text": message.content[start:point]})
                    marked.append((chars + point, blocks[-1]))
                start = point
            if start < len(message.content):  # what changes from one request to the next
                blocks.append({"type": "text", "text": message.content[start:]})
            contents.append(blocks)
            chars += len(message.content)
        chosen = {id(b): b for prefix, b in marked[:1] + marked[-1:] if prefix >= minimum}
        if not chosen and not system_marked:
            return
        if system_marked:
            body["system"] = [{"type": "text", "text": body["system"], "cache_control": EPHEMERAL}]
        for block in list(chosen.values())[: MAX_BREAKPOINTS - system_marked]:
            block["cache_control"] = EPHEMERAL
        for sent, blocks_of in zip(body["messages"], contents, strict=True):
            if blocks_of is not None:
                sent["content"] = blocks_of

    def _tool(self, request: JudgeRequest) -> list[dict[str, Any]]:
        key = (request.answer, request.criteria)
        tools = self._tools.get(key) if request.response_schema is None else None
        if tools is None:
            tools = [
                {
                    "name": TOOL,
                    "description": "Record your verdict on what you were asked to judge.",
                    "input_schema": answer_schema(request),
                }
            ]
            if request.response_schema is None:
                self._tools[key] = tools
        return tools

    def parse(self, status: int, body: bytes) -> Answer:
        data = json_body(body)
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise ProtocolError("malformed_completion")
        content = None
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == TOOL:
                content = orjson.dumps(block.get("input")).decode()
                break
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                content = (content or "") + block["text"]
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        # `input_tokens` counts only what follows the last cache breakpoint: the cache's
        # reads and writes are billed on top of it (docs/judge.md, usage fields)
        read = token_count(usage.get("cache_read_input_tokens"))
        written = token_count(usage.get("cache_creation_input_tokens"))
        prompt = token_count(usage.get("input_tokens")) + read + written
        output = token_count(usage.get("output_tokens"))
        stop = data.get("stop_reason")
        if stop == "refusal" and not content:
            return Answer(
                "", prompt, output, "refused", cache_read_tokens=read, cache_write_tokens=written
            )
        if not content and stop != "max_tokens":
            raise ProtocolError("malformed_completion")
        truncated = stop == "max_tokens"
        return Answer(
            content or "",
            prompt,
            output,
            "truncated" if truncated else "done",
            cache_read_tokens=read,
            cache_write_tokens=written,
        )

    def adapt(self, status: int, message: str, refused: httpx.Request) -> str | None:
        if status != 400:
            return None
        if refused.extensions.get(FORM) != self._form():
            return ""
        text = message.lower()
        if self.send_temperature and "temperature" in text:
            self.send_temperature = False
            return "the model takes no temperature: judging at its default"
        if self.mode == "tool" and not self.tool_answered and "tool" in text:
            self.mode = "prompt"
            return "a forced tool call refused: the prompt alone asks for the JSON"
        return None

    def accepted(self, built: httpx.Request) -> str | None:
        form = built.extensions.get(FORM)
        if isinstance(form, tuple) and form[0] == "tool":
            self.tool_answered = True
        return None

    def settled(self) -> dict[str, Any]:
        return {"answer": self.mode, "temperature": self.send_temperature}
