"""Results files for the review tests, written by the real writers: a score run through the
Python API with the fake judge over real ATIF files (a tree with embedded subagents, and a
Who&When run converted), and graph-agents-cli's golden grade results."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentjudge.results.score import SCORE, ScoreResults

ROOT = Path(__file__).resolve().parents[2]
MULTIAGENT = (
    ROOT / "tests" / "fixtures" / "atif" / "fast-agent__golden-multiagent-embedded-v1.7.json"
)
WHO_AND_WHEN = ROOT / "tests" / "fixtures" / "who-and-when" / "hand-crafted" / "1.json"
GOLDEN = ROOT / "tests" / "fixtures" / "graph-agents-cli" / "golden" / "basic"


def score_run(folder: Path) -> Path:
    """`folder/results.json`: the fake judge's scores (3 samples) of two runs copied into
    `folder/runs`, every root given a decisive step (`decisive_roots: all`)."""
    from agentjudge.api import score_trajectories
    from agentjudge.convert.who_and_when import to_trajectory
    from agentjudge.scoring.config import load_config

    runs = folder / "runs"
    runs.mkdir(parents=True)
    shutil.copy(MULTIAGENT, runs / "multiagent.json")
    run = json.loads(WHO_AND_WHEN.read_text())
    (runs / "who-and-when.json").write_text(json.dumps(to_trajectory(run, "hand-crafted-1")))
    results = folder / "results.json"
    config = load_config(None, {
        "trajectory_path": [str(runs / "multiagent.json"), str(runs / "who-and-when.json")],
        "judge": "fake", "samples": 3, "judge_temperature": 0.5, "decisive_roots": "all",
        "output": str(results), "cache": False,
    })  # fmt: skip
    score_trajectories(config)
    return results


def edit_score(path: Path, change: Callable[[dict[str, Any]], None]) -> ScoreResults:
    """Change a results file in place (kept valid: checked against the contract)."""
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(SCORE.check(document, str(path))))
    return document  # type: ignore[no-any-return]


def grade_run(folder: Path, traces: bool = True) -> Path:
    """graph-agents-cli's golden grade results, naming a copy of its traces file in `folder`
    (or a path that is not there)."""
    document = json.loads((GOLDEN / "results" / "all_pass.results.json").read_text())
    copy = folder / "traces.json"
    if traces:
        shutil.copy(GOLDEN / "traces" / "all_pass.json", copy)
    document["traces_files"] = [str(copy)]
    path = folder / "grade-results.json"
    path.write_text(json.dumps(document))
    return path
