"""Why a node is incomplete, as the job's error would say it: the judge's HTTP status and
its own words, or the file's first problem (it said `failed: judge_error` and no more)."""

from __future__ import annotations

from pathlib import Path

from agentjudge.api import score_trajectories
from agentjudge.scoring.config import load_config
from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write


def test_a_failed_node_says_what_the_judge_said_and_a_bad_file_its_rule(
    tmp_path: Path,
) -> None:
    good = doc(2)
    good["steps"][1]["message"] = "fine [[score=0.8]]"
    write(tmp_path / "runs" / "good.json", good)
    refused = doc(2)
    refused["steps"][1]["message"] = "refused [[fault=503]]"
    write(tmp_path / "runs" / "refused.json", refused)
    (tmp_path / "runs" / "broken.json").write_text("{not json")
    with JudgeServer() as judge:
        config = load_config(
            None,
            {
                "trajectory_path": [str(tmp_path / "runs")],
                "judge_url": judge.base_url,
                "judge_model": "judge",
                "output": str(tmp_path / "out.json"),
                "cache": False,
                "partial_result_policy": "skip_failed_trajectory",
                "judge_max_attempts": 1,
                "judge_retry_round_pause_seconds": 0,
            },
        )
        run = score_trajectories(config)
    reasons = {Path(n["file"]).name: n["reason"] for n in run.document["incomplete"]}
    assert reasons["refused.json"] == "failed: judge_error (http_503: scripted 503)"
    assert reasons["broken.json"].startswith(
        f"failed: invalid_input ({tmp_path / 'runs' / 'broken.json'}: $: not valid JSON"
    )
    assert reasons["broken.json"].endswith("[schema.json_invalid])")
