"""`agentjudge analyze`: the failure patterns of a results file."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from rich.console import Console

from agentjudge.cases.loading import RESULTS_DIR, find_root
from agentjudge.cli.options import ResultsFile, TopK
from agentjudge.errors import UsageError
from agentjudge.files import write_atomic


def analyze_command(results: ResultsFile = None, top_k: TopK = None) -> int:
    """Cluster the reasons of every non-passed case into failure patterns.

    The analysis is saved as artifacts/analysis_<ts>.json."""
    from agentjudge.cases.outcome import analysis_path, analyze_results
    from agentjudge.report.grade_analysis_console import render_analysis
    from agentjudge.results.grade import GRADE

    root = find_root()
    if results is not None and not results.exists() and root is not None:
        results = root / results
    path = results or _newest_results(root)
    now = datetime.now().astimezone()
    report = analyze_results(GRADE.read(path), str(path), now)
    target = analysis_path(root or Path.cwd(), now)
    write_atomic(target, report, indent=2)
    render_analysis(report, Console(soft_wrap=True), top_k, target.resolve())
    return 0


def _newest_results(root: Path | None) -> Path:
    if root is None:
        raise UsageError(
            "--results: not inside a graph-agents-cli project; pass --results RESULTS_FILE"
        )
    folder = root / RESULTS_DIR
    files = sorted(folder.glob("results_*.json"), key=lambda p: p.stat().st_mtime)
    if not files:
        raise UsageError(f"--results: no results_*.json in {folder}; run agentjudge grade first")
    return files[-1]
