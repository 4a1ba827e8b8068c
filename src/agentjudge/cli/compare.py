"""`agentjudge compare`: two results files, case by case (grade) or trajectory by trajectory
(score)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from agentjudge.cli.options import (
    AllowIncomparable,
    Baseline,
    BootstrapResamples,
    BootstrapSeed,
    Candidate,
    CompareJson,
    FailOnRegression,
    Significance,
)


def compare_command(
    baseline: Baseline,
    candidate: Candidate,
    fail_on_regression: FailOnRegression = False,
    as_json: CompareJson = False,
    allow_incomparable: AllowIncomparable = False,
    significance: Significance = 0.05,
    bootstrap_seed: BootstrapSeed = None,
    bootstrap_resamples: BootstrapResamples = None,
) -> int:
    """Compare two results files: grade results case by case (regressions, improvements,
    score deltas); score results trajectory by trajectory (paired deltas, interval, p-value).

    Exit 0; 1 --fail-on-regression and a regression (score: a significant drop); 2 a score
    and a grade results file; 3 an unreadable file, score results that break their contract
    (docs/results.md), or score runs that are not comparable.
    """
    from agentjudge.files import read_json
    from agentjudge.report.score_compare import check_same_kind

    documents = read_json(baseline, "results file"), read_json(candidate, "results file")
    if check_same_kind(*documents, (baseline.name, candidate.name)):
        return _compare_scores(
            documents, (baseline, candidate), fail_on_regression, as_json,
            allow_incomparable, significance, (bootstrap_seed, bootstrap_resamples),
        )  # fmt: skip
    from agentjudge.cases.outcome import compare_exit_code, compare_results
    from agentjudge.report.grade_compare_console import render_compare
    from agentjudge.results.grade import GRADE

    report = compare_results(
        GRADE.check(documents[0], str(baseline)),
        GRADE.check(documents[1], str(candidate)),
        baseline.name,
        candidate.name,
    )
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        render_compare(report, Console(soft_wrap=True))
    return compare_exit_code(report, fail_on_regression)


def _compare_scores(
    documents: tuple[Any, Any],
    paths: tuple[Path, Path],
    fail_on_regression: bool,
    as_json: bool,
    allow_incomparable: bool,
    significance: float,
    bootstrap: tuple[int | None, int | None],
) -> int:
    from agentjudge.report.score_compare import (
        compare_score_results,
        score_compare_exit_code,
        score_compare_json,
    )
    from agentjudge.report.score_compare_console import render_score_compare
    from agentjudge.results.score import SCORE
    from agentjudge.trust.intervals import Bootstrap

    seed, resamples = bootstrap
    report = compare_score_results(
        SCORE.check(documents[0], str(paths[0])),
        SCORE.check(documents[1], str(paths[1])),
        (paths[0].name, paths[1].name),
        allow_incomparable=allow_incomparable,
        significance=significance,
        bootstrap=Bootstrap(seed=0 if seed is None else seed, resamples=resamples or 1000),
    )
    if as_json:
        typer.echo(score_compare_json(report))
    else:
        render_score_compare(report, Console(soft_wrap=True))
    return score_compare_exit_code(report, fail_on_regression)
