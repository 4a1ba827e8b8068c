"""Checking: the deterministic ``expect`` checks of each case, applied to its trace.

`checks` runs the checks a case declares; `assignment` gives each expected tool call or
approval gate its own recorded one; `json_answer` finds the JSON a reply answers with.
Pure and without I/O: everything was loaded and validated before (`cases.loading`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from agentjudge.cases.checking.checks import CheckResult, declared_checks, run_checks

__all__ = ["CheckResult", "declared_checks", "run_checks"]

# Each name's module, imported on first use (jsonschema loads only when checks run).
_HOMES = {"checks": ("CheckResult", "declared_checks", "run_checks")}

if not TYPE_CHECKING:  # mypy reads the imports above, so an unknown name stays an error
    __getattr__ = lazy_exports(__name__, _HOMES)
