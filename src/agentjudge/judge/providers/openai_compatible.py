"""Any server that speaks OpenAI's `/v1/chat/completions`: vLLM, Ollama, a LiteLLM proxy,
llama.cpp, LM Studio... (`openai-compatible`); the base of the `openai`, `azure`, `gemini`,
`local` and `fake` judges.

Servers differ in what they accept, so the request adapts, once per run, to what the
server says when it refuses one (`adapt`):
- the response format, tried in the order of `modes`: `json_schema` (OpenAI's structured
  outputs), `json_object` with the schema attached (llama.cpp's form), plain `json_object`,
  then no `response_format` at all (the prompt still asks for the JSON, and the answer is
  parsed as strictly);
- `max_completion_tokens` instead of `max_tokens`, no `temperature`, a `developer` role
  instead of `system`: what reasoning models require.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import httpx

from agentjudge.errors import ProtocolError
from agentjudge.judge.answer_schema import answer_schema, portable, schema_name
from agentjudge.judge.binary_verdict import TokenChoice
from agentjudge.judge.providers.base import (
    FORM,
    Answer,
    Provider,
    Stop,
    json_body,
    post_json,
    token_count,
)
from agentjudge.judge.request import JudgeRequest

ResponseMode = Literal["json_schema", "json_object_schema", "json_object", "prompt"]
MODE_NAMES: dict[ResponseMode, str] = {
    "json_schema": "response_format json_schema",
    "json_object_schema": "response_format json_object with a schema",
    "json_object": "response_format json_object",
    "prompt": "no response_format (the prompt asks for the JSON)",
}
# Tokens a reasoning model may spend thinking before its answer, on top of the answer's own
# budget: they count against the same limit, and an answer cut off by it is lost.
REASONING_TOKENS = 8192
# Alternatives asked for at each token of a `binary` answer: enough that `true` and `false`
# (and their other spellings) are among them (see judge/binary_verdict.py).
BINARY_TOP_LOGPROBS = 10
# A refusal that names one of these is about the response format. One that names none and
# says nothing (some servers) is taken as such too; one that says something else (say, a
# prompt longer than the model's context) is not, and changes nothing.
_FORMAT_WORDS = (
    "response_format",
    "response format",
    "json",
    "schema",
    "structured",
    "grammar",
    "guided",
)
_REFUSED_WORDS = (
    "unsupported",
    "not supported",
    "does not support",
    "deprecated",
    "only the default",
    "not allowed",
    "not permitted",
    "extra inputs",
    "unrecognized",
    "unknown",
)


class OpenAICompatible(Provider):
    """Builds chat-completion requests and reads their answers."""

    name: str = "openai-compatible"
    modes: ClassVar[tuple[ResponseMode, ...]] = (
        "json_schema",
        "json_object_schema",
        "json_object",
        "prompt",
    )

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        reasoning_effort: str | None = None,
        endpoint: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        super().__init__(model, endpoint or f"{self.base_url}/chat/completions", api_key)
        self._url = httpx.URL(self.endpoint)  # parsed once, not per call
        self._headers = httpx.Headers(  # the same for every request
            {"content-type": "application/json", **self.auth_headers(api_key)}
        )
        self.reasoning_effort = reasoning_effort
        self.mode: ResponseMode = self.modes[0]
        self.token_field = "max_tokens"
        self.send_temperature = True
        self.system_role = "system"
        self.reasoning = False  # the model thinks first: its answer gets REASONING_TOKENS more
        # The response format is stepped down only while no call has been answered in the
        # current one, and a step is tentative until a call in the new format is answered:
        # the same refusal again (or an answer to a call in the earlier format) shows it was
        # about one request, not the format, and the step is undone.
        self._confirmed: ResponseMode | None = None
        self._origin: ResponseMode | None = None  # the format before tentative steps
        self._stepped_on: set[str] = set()  # the refusals that made them
        self._not_format: set[str] = set()  # refusals known to be about something else
        self._schemas: dict[tuple[str, tuple[str, ...], ResponseMode], dict[str, Any]] = {}
        self.known_model()

    def known_model(self) -> None:
        """Build requests as this provider's model, known by its name, takes them (the
        server's refusals adapt the rest)."""

    @property
    def identity(self) -> str:
        # the effort a reasoning model is asked for changes its answers
        effort = f"|reasoning_effort={self.reasoning_effort}" if self.reasoning_effort else ""
        return super().identity + effort

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        """The headers that carry the key (a bearer token here)."""
        return {"authorization": f"Bearer {api_key}"} if api_key else {}

    def reasoning_model(self) -> None:
        """Build requests as reasoning models take them (OpenAI's o-series and gpt-5)."""
        self.reasoning = True
        self.token_field = "max_completion_tokens"
        self.send_temperature = False
        self.system_role = "developer"

    def _form(self) -> tuple[object, ...]:
        return (self.mode, self.token_field, self.send_temperature, self.system_role)

    def build(self, request: JudgeRequest) -> httpx.Request:
        role = self.system_role
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": role if m.role == "system" else m.role, "content": m.content}
                for m in request.messages
            ],
            self.token_field: self.answer_tokens(request.max_tokens),
        }
        if self.send_temperature:
            body["temperature"] = request.temperature
        if self.reasoning_effort is not None:
            body["reasoning_effort"] = self.reasoning_effort
        response_format = self.response_format(request)
        if response_format is not None:
            body["response_format"] = response_format
        if request.answer in ("binary", "category_pick"):  # weighed by the judge's probabilities
            body["logprobs"] = True
            body["top_logprobs"] = BINARY_TOP_LOGPROBS
        self.extend(body, request)
        built = post_json(self._url, self._headers, body)
        built.extensions[FORM] = self._form()
        return built

    def answer_tokens(self, max_tokens: int) -> int:
        return max_tokens + (REASONING_TOKENS if self.reasoning else 0)

    def extend(self, body: dict[str, Any], request: JudgeRequest) -> None:
        """Add to a request's `body` what only this provider's API takes (nothing here)."""

    def response_format(self, request: JudgeRequest) -> dict[str, Any] | None:
        """The `response_format` of the current mode (None: the prompt alone asks)."""
        mode = self.mode
        if mode == "prompt":
            return None
        if mode == "json_object":
            return {"type": "json_object"}
        schema = self._schema(request, mode)
        if mode == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        return {
            "type": "json_schema",
            "json_schema": {"name": schema_name(request), "schema": schema, "strict": True},
        }

    def _schema(self, request: JudgeRequest, mode: ResponseMode) -> dict[str, Any]:
        # built once per answer kind: a job sends thousands of requests of a few kinds
        if request.response_schema is not None:
            return self.schema_for(request, mode)
        key = (request.answer, request.criteria, mode)
        schema = self._schemas.get(key)
        if schema is None:
            schema = self._schemas[key] = self.schema_for(request, mode)
        return schema

    def schema_for(self, request: JudgeRequest, mode: ResponseMode) -> dict[str, Any]:
        """The answer's schema as this server is given it: for strict structured outputs
        only the keywords every such API accepts; attached to `json_object`, all of it."""
        schema = answer_schema(request)
        return portable(schema) if mode == "json_schema" else schema

    def parse(self, status: int, body: bytes) -> Answer:
        data = json_body(body)
        try:
            choice = data["choices"][0]
            message = choice["message"]
            content = message.get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ProtocolError("malformed_completion") from None
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        prompt = token_count(usage.get("prompt_tokens"))
        answered = token_count(usage.get("completion_tokens"))
        # Gemini leaves its thinking out of completion_tokens but not out of total_tokens
        completion = max(answered, token_count(usage.get("total_tokens")) - prompt)
        details = usage.get("completion_tokens_details")
        reasoning = token_count(details.get("reasoning_tokens")) if isinstance(details, dict) else 0
        # Gemini reports no reasoning_tokens: its thinking is the gap found above
        reasoning = max(reasoning, completion - answered)
        cached = usage.get("prompt_tokens_details")
        read = token_count(cached.get("cached_tokens")) if isinstance(cached, dict) else 0
        read = min(read, prompt)  # a part of the prompt: a server saying more is wrong
        if isinstance(message.get("refusal"), str) and message["refusal"] and not content:
            return Answer(
                "",
                prompt,
                completion,
                "refused",
                cache_read_tokens=read,
                reasoning_tokens=reasoning,
            )
        truncated = isinstance(choice, dict) and choice.get("finish_reason") == "length"
        if not isinstance(content, str) or (not content and not truncated):
            raise ProtocolError("malformed_completion")
        stop: Stop = "truncated" if truncated else "done"
        choices = token_choices(choice)
        return Answer(
            content,
            prompt,
            completion,
            stop,
            choices,
            cache_read_tokens=read,
            reasoning_tokens=reasoning,
        )

    def adapt(self, status: int, message: str, refused: httpx.Request) -> str | None:
        # 400/422: a refused request. 500: only when the server says what it refused
        # (llama-cpp-python and old llama.cpp builds answer a format they lack that way).
        if status not in (400, 422) and not (status == 500 and message):
            return None
        if refused.extensions.get(FORM) != self._form():
            return ""  # built before another call adapted: try again as requests are now built
        text = message.lower()
        refused_word = any(word in text for word in _REFUSED_WORDS)
        if self.token_field == "max_tokens" and "max_tokens" in text and refused_word:
            self.token_field = "max_completion_tokens"
            self.reasoning = True
            return "the model takes max_completion_tokens, not max_tokens: sending that"
        if self.send_temperature and "temperature" in text and refused_word:
            self.send_temperature = False
            return "the model takes no temperature: judging at its default"
        if self.system_role == "system" and "'system'" in text and "role" in text:
            self.system_role = "developer"
            return "the model takes no system role: sending the instructions as developer"
        if self.system_role == "developer" and "'developer'" in text and "role" in text:
            self.system_role = "user"  # o1-mini and o1-preview take neither
            return "the model takes no developer role: sending the instructions as user"
        return self._step_down(status, message)

    def _step_down(self, status: int, message: str) -> str | None:
        """The next response format, if the refusal may be about this one."""
        if self._confirmed == self.mode or message in self._not_format:
            return None  # the server takes this format: the refusal is about this request
        if message in self._stepped_on and self._origin is not None:
            self._undo_steps()
            return None
        index = self.modes.index(self.mode)
        text = message.lower()
        about_format = any(word in text for word in _FORMAT_WORDS) or (not text and status != 500)
        if index + 1 >= len(self.modes) or not about_format:
            return None
        if self._origin is None:
            self._origin = self.mode
        self._stepped_on.add(message)
        refused_mode, self.mode = self.mode, self.modes[index + 1]
        return f"{MODE_NAMES[refused_mode]} refused: using {MODE_NAMES[self.mode]}"

    def _undo_steps(self) -> None:
        assert self._origin is not None
        self.mode, self._origin = self._origin, None
        self._not_format |= self._stepped_on
        self._stepped_on.clear()

    def accepted(self, built: httpx.Request) -> str | None:
        form = built.extensions.get(FORM)
        mode = next((m for m in self.modes if isinstance(form, tuple) and form[0] == m), None)
        if mode is None:
            return None
        if mode == self.mode:
            self._confirmed = mode
            self._origin = None
            self._stepped_on.clear()
        elif self.modes.index(mode) < self.modes.index(self.mode):
            # a call built before a step down was answered: the format was never the problem
            if self._origin is not None:
                self._undo_steps()
            self.mode = self._confirmed = mode
            return f"back to {MODE_NAMES[mode]}: the refusal was about one request"
        return None

    def settled(self) -> dict[str, Any]:
        return {
            "response_format": self.mode,
            "token_field": self.token_field,
            "temperature": self.send_temperature,
            "system_role": self.system_role,
        }


def token_choices(choice: Any) -> tuple[TokenChoice, ...]:
    """The generated tokens and their alternatives' log-probabilities, as OpenAI's chat
    API (and llama.cpp's) gives them: `logprobs.content[i]` = {token, logprob,
    top_logprobs: [{token, logprob}]}. Entries not of that shape are left out; () when the
    answer has none (none were asked for)."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return ()
    out = []
    for entry in content:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            continue
        top: dict[str, float] = {}
        alternatives = entry.get("top_logprobs")
        for alternative in alternatives if isinstance(alternatives, list) else ():
            if isinstance(alternative, dict):
                _keep(top, alternative.get("token"), alternative.get("logprob"))
        _keep(top, entry["token"], entry.get("logprob"))
        out.append(TokenChoice(entry["token"], top))
    return tuple(out)


def _keep(top: dict[str, float], token: object, logprob: object) -> None:
    if (
        isinstance(token, str)
        and isinstance(logprob, int | float)
        and not isinstance(logprob, bool)
    ):
        top.setdefault(token, float(logprob))
