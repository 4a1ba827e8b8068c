"""The worker agentjudge runs inside a graph-agents-cli project's own environment.

This file imports nothing from agentjudge: it is run there as a script (`uv run python
worker.py` when the project uses uv, else `.venv/bin/python worker.py`), from the project
folder, so that what it calls imports the project's modules with the project's
dependencies. It serves two kinds of work, many at a time:

- custom metrics (`module:function` called with `(case, trace)`);
- judge calls through the project's own judge model: `<package>.app_utils.model.
  get_judge_model()` (the scaffold's contract: no arguments, the judge chosen from
  `JUDGE_MODEL_PROVIDER`/`JUDGE_MODEL_NAME`), invoked as a LangChain chat model.

Protocol: one JSON object per line on stdin, one per line on stdout, matched by `id`:
- `{"id", "kind": "custom", "callable", "case", "trace"}` -> `{"id", "score", "reasoning",
  "error"}`;
- `{"id", "kind": "build", "provider", "model", "package"}` -> `{"id", "error"}` (builds the
  judge model once; `error` is null when it was built);
- `{"id", "kind": "judge", "messages": [{"role", "content"}]}` -> `{"id", "text",
  "input_tokens", "output_tokens", "error", "status", "transport"}`: `status` is the HTTP
  status of a failed call when the model's client says one, `transport` whether the call
  never got an answer.
Anything the project's code prints goes to stderr.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO


def resolve(target: str) -> Callable[..., Any]:
    """The function named by `module:function` (the project folder is on sys.path)."""
    module_name, _, name = target.partition(":")
    function = getattr(importlib.import_module(module_name), name)
    if not callable(function):
        raise TypeError(f"{target} is not callable")
    return function  # type: ignore[no-any-return]


def run_custom(item: dict[str, Any]) -> dict[str, Any]:
    """Call one metric on `(case, trace)`; any exception becomes the item's error text."""
    result: dict[str, Any] = {"id": item.get("id"), "score": None, "reasoning": "", "error": None}
    try:
        value = resolve(str(item["callable"]))(item.get("case") or {}, item.get("trace") or {})
        result["score"], result["reasoning"] = _score(value, str(item["callable"]))
    except Exception as exc:  # a metric's own failure is that item's error, not the run's
        result["error"] = f"{type(exc).__name__}: {exc}"
    return result


def _score(value: Any, target: str) -> tuple[float, str]:
    reasoning = ""
    if isinstance(value, dict) and "score" in value:
        reasoning = str(value.get("reasoning") or value.get("explanation") or "")
        value = value["score"]
    if isinstance(value, bool):
        return (1.0 if value else 0.0), reasoning
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value), reasoning
    raise ValueError(
        f"{target} returned {type(value).__name__}; return a bool, a number or "
        "{'score': n, 'reasoning': str}"
    )


class Judge:
    """The project's judge model, built once and invoked from many threads."""

    def __init__(self) -> None:
        self.model: Any = None

    def build(self, item: dict[str, Any]) -> dict[str, Any]:
        # the scaffold's get_judge_model() reads these when it is called
        for name, value in (("JUDGE_MODEL_PROVIDER", item.get("provider")),
                            ("JUDGE_MODEL_NAME", item.get("model"))):  # fmt: skip
            if value:
                os.environ[name] = str(value)
        try:
            module = importlib.import_module(f"{item.get('package') or 'app'}.app_utils.model")
            self.model = module.get_judge_model()
        except Exception as exc:
            return {"id": item.get("id"), "error": f"{type(exc).__name__}: {exc}"}
        return {"id": item.get("id"), "error": None}

    def invoke(self, item: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {"id": item.get("id"), "text": None, "error": None}
        try:
            reply = self.model.invoke(_messages(item.get("messages") or []))
        except Exception as exc:
            result.update(error=f"{type(exc).__name__}: {exc}", status=_status(exc))
            result["transport"] = result["status"] is None and _unanswered(exc)
            return result
        result["text"] = _text(getattr(reply, "content", reply))
        usage = getattr(reply, "usage_metadata", None) or {}
        result["input_tokens"] = usage.get("input_tokens") or 0
        result["output_tokens"] = usage.get("output_tokens") or 0
        return result


def _messages(messages: list[dict[str, Any]]) -> Any:
    try:
        # the project's LangChain, not ours (we do not depend on it)
        from langchain_core.messages import (  # type: ignore[import-not-found]
            AIMessage,
            HumanMessage,
            SystemMessage,
        )
    except ImportError:  # a model that is not LangChain's takes the text
        return "\n\n".join(str(m.get("content", "")) for m in messages)
    kinds = {"system": SystemMessage, "assistant": AIMessage}
    return [
        kinds.get(str(m.get("role")), HumanMessage)(content=m.get("content", "")) for m in messages
    ]


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


def _status(exc: BaseException) -> int | None:
    """The HTTP status of a failed call, as the provider SDKs (openai, anthropic, httpx)
    record it on their errors."""
    for owner in (exc, getattr(exc, "response", None)):
        status = getattr(owner, "status_code", None)
        if isinstance(status, int) and not isinstance(status, bool):
            return status
    return None


def _unanswered(exc: BaseException) -> bool:
    names = " ".join(cls.__name__ for cls in type(exc).__mro__).lower()
    return any(word in names for word in ("connect", "timeout", "network", "transport"))


def main() -> int:
    """Serve requests from stdin until it closes, `argv[1]` (default 16) at a time."""
    # Answers go to a copy of stdout; file descriptor 1 itself now writes to stderr, so
    # nothing the project's code prints (a subprocess, a C library) gets into them.
    out: TextIO = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.path.insert(0, str(Path.cwd()))
    with contextlib.suppress(ImportError):  # the scaffold depends on python-dotenv
        from dotenv import load_dotenv

        load_dotenv(Path.cwd() / ".env")  # never over what the environment already says
    lock = threading.Lock()
    judge = Judge()

    def answer(handler: Callable[[dict[str, Any]], dict[str, Any]], item: dict[str, Any]) -> None:
        try:
            result = handler(item)
        except BaseException as exc:  # sys.exit() in a metric too: every request is answered
            result = {"id": item.get("id"), "error": f"{type(exc).__name__}: {exc}"}
        line = json.dumps(result, default=str) + "\n"
        with lock:
            out.write(line)
            out.flush()

    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    # judge calls apart from custom metrics: a slow metric never holds a judge call (whose
    # deadline is running) in a queue
    with ThreadPoolExecutor(workers) as judging, ThreadPoolExecutor(workers) as metrics:
        for line in sys.stdin:
            if not line.strip():
                continue
            item = json.loads(line)
            kind = item.get("kind")
            if kind == "build":  # before any judge call: answered at once, in order
                answer(judge.build, item)
            elif kind == "judge":
                judging.submit(answer, judge.invoke, item)
            else:
                metrics.submit(answer, run_custom, item)
    return 0


if __name__ == "__main__":
    sys.exit(main())
