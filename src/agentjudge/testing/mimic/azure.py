"""Azure OpenAI's chat completions: OpenAI's API behind deployment paths, an `api-key`
header, Azure's own 401/404 bodies and a stricter Structured Outputs."""

from __future__ import annotations

import re
from typing import Any

from agentjudge.testing.mimic.base import Refusal, Route
from agentjudge.testing.mimic.openai import OpenAI
from agentjudge.testing.mimic.strict_schema import NOT_PERMITTED
from agentjudge.testing.scripted import Answer, Prompt

DEPLOYMENT = re.compile(r"^/openai/deployments/([^/]+)/chat/completions$")
ACCESS_DENIED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
    "provide a valid key for an active subscription and use a correct regional API endpoint "
    "for your resource."
)
# Azure's content filters, as they report a prompt and an answer that pass them all
PASSED = {
    c: {"filtered": False, "severity": "safe"} for c in ("hate", "self_harm", "sexual", "violence")
}


class Azure(OpenAI):
    """Azure OpenAI: `/openai/deployments/{deployment}/chat/completions?api-version=...`
    (the deployment is the model) or the v1 path `/openai/v1/chat/completions`."""

    title = "Azure OpenAI"
    base_path = ""
    routes = (
        Route("POST", "/openai/deployments/{deployment}/chat/completions", "chat"),
        Route("POST", "/openai/v1/chat/completions", "chat"),
    )
    # Azure's strict mode also refuses the keywords that bound strings, numbers and arrays
    not_permitted = (
        *NOT_PERMITTED,
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
    )

    def check_access(
        self, path: str, query: dict[str, str], headers: dict[str, str]
    ) -> Refusal | None:
        if DEPLOYMENT.match(path) and not query.get("api-version"):
            return self.error(404, "Resource not found")
        key = headers.get("api-key")
        if key is None:
            scheme, _, token = headers.get("authorization", "").partition(" ")
            key = token.strip() if scheme.lower() == "bearer" else ""
        if not key or (self.api_key is not None and key != self.api_key):
            return self.error(401, ACCESS_DENIED)
        return None

    def check_model(self, path: str, body: dict[str, Any]) -> Refusal | None:
        # on a deployment's path the deployment is the model: the body need not name one
        if DEPLOYMENT.match(path) and body.get("model") is None:
            return None
        return super().check_model(path, body)

    def model_of(self, path: str, body: dict[str, Any]) -> str:
        deployment = DEPLOYMENT.match(path)
        return deployment.group(1) if deployment else super().model_of(path, body)

    def reply(self, prompt: Prompt, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        completion = super().reply(prompt, body, answer)
        completion["prompt_filter_results"] = [
            {"prompt_index": 0, "content_filter_results": PASSED}
        ]
        completion["choices"][0]["content_filter_results"] = PASSED
        return completion

    def error(self, status: int, message: str) -> Refusal:
        # a bad request is refused as OpenAI refuses it; Azure's gateway answers the rest
        if status == 400:
            return super().error(status, message)
        return Refusal(status, {"error": {"code": str(status), "message": message}})

    def not_found(self, method: str, path: str) -> Refusal | None:
        return self.error(404, "Resource not found")

    def no_such_model(self, model: str) -> Refusal:
        message = (
            "The API deployment for this resource does not exist. If you created the "
            "deployment within the last 5 minutes, please wait a moment and try again."
        )
        return Refusal(404, {"error": {"code": "DeploymentNotFound", "message": message}})
