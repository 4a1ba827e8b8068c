"""Anthropic's Messages API (`POST /v1/messages`), as Anthropic documents it: `x-api-key`
and `anthropic-version` headers, a top-level system prompt, `max_tokens` required, tools
for structured answers."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from agentjudge.judge.providers.anthropic import min_cacheable_tokens
from agentjudge.testing.mimic.base import Dialect, Refusal, Route, completion_tokens, text_of
from agentjudge.testing.mimic.prompt_cache import MAX_BREAKPOINTS, BreakpointCache
from agentjudge.testing.scripted import Answer, Prompt

KNOWN = frozenset(
    [
        "model",
        "messages",
        "max_tokens",
        "system",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "stream",
        "tools",
        "tool_choice",
        "thinking",
        "metadata",
        "service_tier",
        "output_config",
        "container",
        "mcp_servers",
    ]
)
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
TOOL_CHOICES = ("auto", "any", "tool", "none")
THINKING_TOKENS = 48  # what the scripted model thinks, when thinking is on
SYSTEM_ROLE = (
    'messages: Unexpected role "system". The Messages API accepts a top-level system '
    'parameter, not "system" as an input message role.'
)


class Anthropic(Dialect):
    """Anthropic: errors are `{"type": "error", "error": {"type", "message"}, "request_id"}`."""

    title = "Anthropic"
    base_path = ""
    routes = (Route("POST", "/v1/messages", "chat"),)

    def __init__(
        self,
        api_key: str | None = None,
        reasoning_models: Iterable[str] = (),
        models: Iterable[str] | None = None,
    ) -> None:
        super().__init__(api_key, reasoning_models, models)
        self.cache = BreakpointCache()  # what `cache_control` asked it to keep

    def check_access(
        self, path: str, query: dict[str, str], headers: dict[str, str]
    ) -> Refusal | None:
        key = headers.get("x-api-key")
        if not key:
            return self.error(401, "x-api-key header is required")
        if self.api_key is not None and key != self.api_key:
            return self.error(401, "invalid x-api-key")
        if not headers.get("anthropic-version"):
            return self.error(400, "anthropic-version: header is required")
        return None

    def check_body(self, path: str, body: dict[str, Any]) -> Refusal | None:
        for field in ("model", "max_tokens", "messages"):
            if body.get(field) is None:
                return self.invalid(f"{field}: Field required")
        extra = next((name for name in body if name not in KNOWN), None)
        if extra is not None:
            return self.invalid(f"{extra}: Extra inputs are not permitted")
        if not isinstance(body["model"], str):
            return self.invalid("model: Input should be a valid string")
        max_tokens = body["max_tokens"]
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            return self.invalid("max_tokens: Input should be a valid integer")
        if max_tokens < 1:
            return self.invalid("max_tokens: Input should be greater than or equal to 1")
        temperature = body.get("temperature")
        if temperature is not None:
            if not isinstance(temperature, int | float) or isinstance(temperature, bool):
                return self.invalid("temperature: Input should be a valid number")
            if temperature > 1:
                return self.invalid("temperature: Input should be less than or equal to 1")
            if temperature < 0:
                return self.invalid("temperature: Input should be greater than or equal to 0")
        return (
            self._check_system(body.get("system"))
            or self._check_messages(body["messages"])
            or self._check_tools(body)
            or self._check_thinking(body)
            or self._check_cache_control(body)
        )

    def _check_cache_control(self, body: dict[str, Any]) -> Refusal | None:
        marks = [block["cache_control"] for block in _blocks(body) if "cache_control" in block]
        for mark in marks:
            if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
                return self.invalid("cache_control.type: Input should be 'ephemeral'")
        if len(marks) > MAX_BREAKPOINTS:
            return self.invalid(
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {len(marks)}."
            )
        return None

    def _check_system(self, system: Any) -> Refusal | None:
        if system is None or isinstance(system, str):
            return None
        if isinstance(system, list):
            for i, block in enumerate(system):
                if not _is_text_block(block):
                    return self.invalid(f"system.{i}: Input should be a valid text block")
            return None
        return self.invalid("system: Input should be a valid string")

    def _check_messages(self, messages: Any) -> Refusal | None:
        if not isinstance(messages, list):
            return self.invalid("messages: Input should be a valid list")
        if not messages:
            return self.invalid("messages: at least one message is required")
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                return self.invalid(f"messages.{i}: Input should be a valid dictionary")
            role = message.get("role")
            if role == "system":
                return self.invalid(SYSTEM_ROLE)
            if role not in ("user", "assistant"):
                return self.invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
            content = message.get("content")
            if content is None:
                return self.invalid(f"messages.{i}.content: Field required")
            if isinstance(content, list):
                for j, block in enumerate(content):
                    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                        return self.invalid(
                            f"messages.{i}.content.{j}: Input should be a valid dictionary"
                        )
                    if block["type"] == "text" and not isinstance(block.get("text"), str):
                        return self.invalid(f"messages.{i}.content.{j}.text: Field required")
            elif not isinstance(content, str):
                return self.invalid(f"messages.{i}.content: Input should be a valid list")
        if messages[0].get("role") != "user":
            return self.invalid('messages: first message must use the "user" role')
        return None

    def _check_tools(self, body: dict[str, Any]) -> Refusal | None:
        tools = body.get("tools")
        if tools is not None and not isinstance(tools, list):
            return self.invalid("tools: Input should be a valid list")
        for i, tool in enumerate(tools or []):
            if not isinstance(tool, dict):
                return self.invalid(f"tools.{i}: Input should be a valid dictionary")
            for field in ("name", "input_schema"):
                if tool.get(field) is None:
                    return self.invalid(f"tools.{i}.custom.{field}: Field required")
            schema = tool["input_schema"]
            if not isinstance(schema, dict) or schema.get("type") != "object":
                return self.invalid(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
        choice = body.get("tool_choice")
        if choice is None:
            return None
        if not isinstance(choice, dict) or choice.get("type") not in TOOL_CHOICES:
            return self.invalid(
                "tool_choice: Input tag found using 'type' does not match any of the expected "
                "tags: 'auto', 'any', 'tool', 'none'"
            )
        if choice["type"] in ("any", "tool") and not tools:
            return self.invalid("tool_choice may only be specified while providing tools.")
        if choice["type"] == "tool":
            name = choice.get("name")
            if name is None:
                return self.invalid("tool_choice.tool.name: Field required")
            if name not in [tool["name"] for tool in tools or []]:
                return self.invalid(f"tool_choice.name: tool '{name}' was not found in tools")
        return None

    def _check_thinking(self, body: dict[str, Any]) -> Refusal | None:
        thinking = body.get("thinking")
        if thinking is None:
            return None
        kind = thinking.get("type") if isinstance(thinking, dict) else None
        if kind not in ("enabled", "disabled", "adaptive"):
            return self.invalid(
                "thinking: Input tag found using 'type' does not match any of the expected "
                "tags: 'enabled', 'disabled', 'adaptive'"
            )
        if kind == "disabled":
            return None
        if kind == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024:
                return self.invalid(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                )
            if budget >= body["max_tokens"]:
                return self.invalid("`max_tokens` must be greater than `thinking.budget_tokens`.")
        if _forced_tool(body) is not None:
            return self.invalid("Thinking may not be enabled when tool_choice forces tool use.")
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1:
            return self.invalid("`temperature` may only be set to 1 when thinking is enabled.")
        return None

    def read(self, path: str, body: dict[str, Any]) -> Prompt:
        messages = [{"role": m["role"], "content": text_of(m["content"])} for m in body["messages"]]
        system = text_of(body.get("system"))
        if system:
            messages.insert(0, {"role": "system", "content": system})
        tool = _forced_tool(body)
        return Prompt(messages, body["model"], tool["input_schema"] if tool else _format(body))

    def reply(self, prompt: Prompt, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        output_tokens = completion_tokens(answer)
        if _thinks(body):
            thought = "The scripted judge applies its markers."
            signature = hashlib.sha256(thought.encode()).hexdigest()
            content.append({"type": "thinking", "thinking": thought, "signature": signature})
            output_tokens += THINKING_TOKENS
        tool = _forced_tool(body)
        if tool is not None and answer.verdict is not None:
            use = {
                "type": "tool_use",
                "id": f"toolu_{self.next_id()}",
                "name": tool["name"],
                "input": answer.verdict,
            }
            content.append(use)
            stop_reason = "tool_use"
        else:
            content.append({"type": "text", "text": answer.text})
            stop_reason = "end_turn"
        return {
            "id": f"msg_{self.next_id()}",
            "type": "message",
            "role": "assistant",
            "model": prompt.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": self._usage(prompt, body, output_tokens),
        }

    def _usage(self, prompt: Prompt, body: dict[str, Any], output_tokens: int) -> dict[str, Any]:
        # `input_tokens` is what follows the last cache breakpoint: the cache's reads and
        # writes are counted apart, and only where `cache_control` asked for them
        head = _head_blocks(body)
        sent = head + _message_blocks(body)
        blocks = [(block.get("text", ""), "cache_control" in block) for block in sent]
        tools = json.dumps(body.get("tools"), sort_keys=True)
        # another tool_choice keeps the tools' and system's entries, not the messages'
        choice = json.dumps(body.get("tool_choice"), sort_keys=True)
        minimum = min_cacheable_tokens(prompt.model)
        read, written = self.cache.use(
            prompt.model, tools, blocks, minimum, choice, messages_from=len(head)
        )
        return {
            "input_tokens": max(1, prompt.tokens() - read - written),
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }

    def no_such_model(self, model: str) -> Refusal:
        return self.error(404, f"model: {model}")

    def error(self, status: int, message: str) -> Refusal:
        kind = ERROR_TYPES.get(status, "api_error")
        body = {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": f"req_{self.next_id()}",
        }
        return Refusal(status, body)

    def too_long(self, tokens: int, limit: int) -> Refusal | None:
        return self.invalid(f"prompt is too long: {tokens} tokens > {limit} maximum")

    def not_found(self, method: str, path: str) -> Refusal | None:
        return self.error(404, "Not Found")

    def invalid(self, message: str) -> Refusal:
        """An `invalid_request_error`."""
        return self.error(400, message)


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's cacheable blocks in the order the cache reads them: the tools (as one,
    marked if any is), the system prompt's blocks, the messages' content blocks."""
    return _head_blocks(body) + _message_blocks(body)


def _head_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools (as one block, marked if any is) and the system prompt's blocks."""
    tools = body.get("tools") or []
    marked = [t["cache_control"] for t in tools if isinstance(t, dict) and "cache_control" in t]
    out: list[dict[str, Any]] = [{"cache_control": marked[-1]} if marked else {}]
    system = body.get("system")
    if isinstance(system, str):
        out.append({"type": "text", "text": system})
    elif isinstance(system, list):
        out += system
    return out


def _message_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages' content blocks, in order (a string content is one block)."""
    out: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            out.append({"type": "text", "text": content})
        elif isinstance(content, list):
            out += [block for block in content if isinstance(block, dict)]
    return out


def _is_text_block(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _forced_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """The tool the model must call: the one `tool_choice` names, or with `any` the first."""
    choice = body.get("tool_choice")
    tools = body.get("tools") or []
    if not isinstance(choice, dict) or not tools:
        return None
    if choice.get("type") == "any":
        first: dict[str, Any] = tools[0]
        return first
    if choice.get("type") == "tool":
        return next((tool for tool in tools if tool["name"] == choice.get("name")), None)
    return None


def _thinks(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _format(body: dict[str, Any]) -> dict[str, Any] | None:
    # structured outputs: `output_config: {"format": {"type": "json_schema", "schema": ...}}`
    config = body.get("output_config")
    answer_format = config.get("format") if isinstance(config, dict) else None
    if isinstance(answer_format, dict) and answer_format.get("type") == "json_schema":
        schema = answer_format.get("schema")
        return schema if isinstance(schema, dict) else None
    return None
