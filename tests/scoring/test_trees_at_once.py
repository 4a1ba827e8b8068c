"""`trajectory_concurrency_limit` (an eval-hub job's `concurrency_limit`): root trees in
flight, whatever the judge-call limit lets through."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentjudge.api import score_trajectories
from agentjudge.scoring.config import load_config
from agentjudge.testing import JudgeServer, Script
from tests.atif.docs import doc, write


@pytest.mark.parametrize(("limit", "peak"), [(2, 2), (None, 6)])
def test_roots_in_flight_are_bounded(tmp_path: Path, limit: int | None, peak: int) -> None:
    for index in range(6):  # one step each, scored high: one call per root, no category
        root = doc(1)
        root["steps"][0]["message"] = f"task {index} [[score=0.9]]"
        write(tmp_path / "runs" / f"r{index}.json", root)
    with JudgeServer(Script(latency=0.3)) as judge:
        config = load_config(
            None,
            {
                "trajectory_path": [str(tmp_path / "runs")],
                "judge_url": judge.base_url,
                "judge_model": "judge",
                "output": str(tmp_path / "out.json"),
                "cache": False,
                "trajectory_concurrency_limit": limit,
            },
        )
        run = score_trajectories(config)
        assert judge.peak_in_flight == peak
    assert run.document["metrics"]["atif_trajectory_count"] == 6
