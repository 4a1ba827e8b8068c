"""`agentjudge compare`: two results files, case by case."""

from __future__ import annotations

import json

import typer
from rich.console import Console

from agentjudge.cli.options import Baseline, Candidate, CompareJson, FailOnRegression


def compare_command(
    baseline: Baseline,
    candidate: Candidate,
    fail_on_regression: FailOnRegression = False,
    as_json: CompareJson = False,
) -> int:
    """Compare two results files case by case: regressions, improvements, score deltas."""
    from agentjudge.cases.outcome import (
        compare_exit_code,
        compare_results,
        load_results,
        render_compare,
    )

    report = compare_results(
        load_results(baseline), load_results(candidate), baseline.name, candidate.name
    )
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        render_compare(report, Console(soft_wrap=True))
    return compare_exit_code(report, fail_on_regression)
