"""Runs custom metrics (`module:function`) for `agentjudge grade`.

This file imports nothing from agentjudge: when a project has its own `.venv`, it is run
there as a script (`.venv/bin/python custom_worker.py`), reading one JSON item per line on
stdin and writing one JSON result per line on stdout, so the metric can import the
project's modules with the project's dependencies. Without a `.venv` the same functions
run in agentjudge's own process.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import sys
from collections.abc import Callable
from typing import Any


def resolve(target: str) -> Callable[..., Any]:
    """The function named by `module:function` (the project folder is on sys.path)."""
    module_name, _, name = target.partition(":")
    function = getattr(importlib.import_module(module_name), name)
    if not callable(function):
        raise TypeError(f"{target} is not callable")
    return function  # type: ignore[no-any-return]


def run_item(item: dict[str, Any]) -> dict[str, Any]:
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


def main() -> int:
    """Serve items from stdin until it closes; the metrics' own prints go to stderr."""
    sys.path.insert(0, "")
    out = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        for line in sys.stdin:
            if line.strip():
                out.write(json.dumps(run_item(json.loads(line))) + "\n")
                out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
