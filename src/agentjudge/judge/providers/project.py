"""The `project` judge: a graph-agents-cli project's own judge model, for providers that
agentjudge does not speak itself (Vertex, Bedrock, a model class of the project's...).

The project's `get_judge_model()` runs in the project's environment, in the worker of
`agentjudge.projectenv`; this provider hands it each request's messages through an
in-process transport, so the judge client's retries, limits, verdict store and error kinds
apply as to any other judge. The model is asked in prose (the prompt itself asks for the
JSON), as graph-agents-cli asks it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import orjson

from agentjudge.errors import UsageError
from agentjudge.judge.providers.base import fit_to_show
from agentjudge.judge.providers.openai_compatible import OpenAICompatible, ResponseMode
from agentjudge.judge.secrets import redact
from agentjudge.projectenv.process import ProjectProcess


class ProjectJudge(OpenAICompatible):
    """The project's judge model, called through its worker process."""

    modes: ClassVar[tuple[ResponseMode, ...]] = ("prompt",)

    def __init__(
        self,
        process: ProjectProcess,
        provider: str,
        model: str | None,
        root: Path,
        package: str,
        env_secrets: tuple[str, ...] = (),
    ) -> None:
        super().__init__("project://judge/v1", model or "", None)
        self.name = provider  # as the project names it: the results record it so
        self.root = root
        self.package = package
        self._process = process
        self._env_secrets = env_secrets

    @property
    def secrets(self) -> tuple[str, ...]:
        """The credentials in the project's settings: its judge model is built from them,
        so its errors may echo any of them."""
        return (*super().secrets, *self._env_secrets)

    @property
    def identity(self) -> str:
        # the project's code decides the judge: its folder is part of who answers
        return f"project|{self.name}|{self.model}|{self.root}"

    @property
    def safe_endpoint(self) -> str:
        return f"the project's get_judge_model() in {self.root}"

    def transport(self) -> httpx.AsyncBaseTransport | None:
        return _WorkerTransport(self._process)

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Build the project's judge model before the first call: one that cannot be built
        (no key, an unknown provider) is a usage error with the project's own words."""
        built = await self._process.request(
            {"kind": "build", "provider": self.name, "model": self.model, "package": self.package}
        )
        if built.get("error"):
            said = " ".join(redact(str(built["error"]), self.secrets).split())[:300]
            raise UsageError(
                f"the project's judge ({self.name}/{self.model or '?'}, from "
                f"{self.package}.app_utils.model.get_judge_model()) could not be built: {said}"
            )
        yield


class _WorkerTransport(httpx.AsyncBaseTransport):
    """Chat requests answered by the worker, in the shape of a chat completion."""

    def __init__(self, process: ProjectProcess) -> None:
        self._process = process

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = orjson.loads(await request.aread())
        answer = await self._process.request({"kind": "judge", "messages": body["messages"]})
        if answer.get("error") is None:
            usage = {
                "prompt_tokens": answer.get("input_tokens") or 0,
                "completion_tokens": answer.get("output_tokens") or 0,
            }
            choice = {"message": {"role": "assistant", "content": answer.get("text") or ""}}
            return httpx.Response(200, json={"choices": [choice], "usage": usage})
        if answer.get("transport"):
            # the model's exception text is the failure's message, shown as a server's is
            raise httpx.ConnectError(fit_to_show(str(answer["error"])), request=request)
        status: Any = answer.get("status")
        # a failure with no HTTP status of its own is taken as the server's (retried)
        code = status if isinstance(status, int) and 400 <= status < 600 else 502
        return httpx.Response(code, json={"error": {"message": str(answer["error"])}})
