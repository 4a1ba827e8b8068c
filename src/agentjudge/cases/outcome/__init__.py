"""Outcome: the gate over the graded cases, what a run shows, and reading results later.

`gate` turns checks and metric results into each case's status, the quality rates and the
exit code (`status` names the statuses); `run_warnings` says what a met gate may not mean;
`console` and `junit` show a run; `compare` and `analyze` read results files afterwards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from agentjudge.cases.outcome.analyze import analysis_path, analyze_results, render_analysis
    from agentjudge.cases.outcome.compare import (
        compare_exit_code,
        compare_json,
        compare_results,
        load_results,
        render_compare,
    )
    from agentjudge.cases.outcome.console import print_summary
    from agentjudge.cases.outcome.gate import STATUSES, CaseGrade
    from agentjudge.cases.outcome.junit import junit_xml, write_junit
    from agentjudge.cases.outcome.status import STATUS_RANK

__all__ = [
    "STATUSES",
    "STATUS_RANK",
    "CaseGrade",
    "analysis_path",
    "analyze_results",
    "compare_exit_code",
    "compare_json",
    "compare_results",
    "junit_xml",
    "load_results",
    "print_summary",
    "render_analysis",
    "render_compare",
    "write_junit",
]

# Each name's module, imported on first use: `compare` and `analyze` never load the gate.
_HOMES = {
    "analyze": ("analysis_path", "analyze_results", "render_analysis"),
    "compare": (
        "compare_exit_code",
        "compare_json",
        "compare_results",
        "load_results",
        "render_compare",
    ),
    "console": ("print_summary",),
    "gate": ("STATUSES", "CaseGrade"),
    "junit": ("junit_xml", "write_junit"),
    "status": ("STATUS_RANK",),
}

if not TYPE_CHECKING:  # mypy reads the imports above, so an unknown name stays an error
    __getattr__ = lazy_exports(__name__, _HOMES)
