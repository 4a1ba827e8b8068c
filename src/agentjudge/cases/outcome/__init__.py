"""Outcome: the gate over the graded cases, the results file, and reading results later.

`gate` turns checks and metric results into each case's status, the quality rates and the
exit code; `run_warnings` says what a met gate may not mean; `results_file` writes the
results (their types: `agentjudge.results.grade`); `compare` and `analyze` read results files
afterwards. What shows them is in report/ (`grade_console.py`, `grade_junit.py`,
`grade_compare_console.py`, `grade_analysis_console.py`), called by the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from agentjudge.cases.outcome.analyze import analysis_path, analyze_results
    from agentjudge.cases.outcome.compare import (
        compare_exit_code,
        compare_json,
        compare_results,
    )
    from agentjudge.cases.outcome.gate import CaseGrade

__all__ = [
    "CaseGrade",
    "analysis_path",
    "analyze_results",
    "compare_exit_code",
    "compare_json",
    "compare_results",
]

# Each name's module, imported on first use: `compare` and `analyze` never load the gate.
_HOMES = {
    "analyze": ("analysis_path", "analyze_results"),
    "compare": (
        "compare_exit_code",
        "compare_json",
        "compare_results",
    ),
    "gate": ("CaseGrade",),
}

if not TYPE_CHECKING:  # mypy reads the imports above, so an unknown name stays an error
    __getattr__ = lazy_exports(__name__, _HOMES)
