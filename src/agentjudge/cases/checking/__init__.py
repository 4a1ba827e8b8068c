"""Checking: the deterministic ``expect`` checks of each case, applied to its trace.

`checks` runs the checks a case declares; `assignment` gives each expected tool call or
approval gate its own recorded one; `json_answer` finds the JSON a reply answers with.
Pure and without I/O: everything was loaded and validated before (`cases.loading`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentjudge.cases.checking.checks import CheckResult, declared_checks, run_checks

__all__ = ["CheckResult", "declared_checks", "run_checks"]

# Each name's module, imported on first use (jsonschema loads only when checks run).
_HOMES = {"checks": ("CheckResult", "declared_checks", "run_checks")}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

if not TYPE_CHECKING:  # mypy reads the imports above, so an unknown name stays an error

    def __getattr__(name: str) -> Any:
        module = _HOME.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)
