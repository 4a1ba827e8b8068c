"""The progress bar counts a step when its score is in, not when its whole node is done:
a node's categorizations (and a long trajectory's other steps) must not hold it at 0."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentjudge.api import score_trajectories
from agentjudge.atif.node import Node
from agentjudge.judge.client import JudgeClient
from agentjudge.scoring.config import ScoreConfig
from agentjudge.testing.judge_server import JudgeServer
from tests.atif.docs import doc, write


def test_the_bar_moves_as_steps_are_scored_before_the_node_is_categorized(
    tmp_path: Path,
) -> None:
    document = doc(6)
    for agent_step in document["steps"][1:]:  # every agent step low: each is categorized
        agent_step["message"] = "wrong [[score=0.1]]"
    write(tmp_path / "runs" / "a.json", document)
    seen: list[tuple[int, int]] = []  # (steps advanced, requests the judge had had)

    with JudgeServer() as server:

        def progress(roots: list[Node], total: int, client: JudgeClient) -> Callable[[int], None]:
            assert total == 6
            return lambda steps: seen.append((steps, len(server.log)))

        config = ScoreConfig(
            trajectory_path=[str(tmp_path / "runs")],
            judge_url=server.base_url,
            judge_model="m",
            cache=False,
            output=str(tmp_path / "out.json"),
        )
        score_trajectories(config, progress=progress)

    assert sum(steps for steps, _ in seen) == 6
    # every step was counted by the time its own score came back: before any of the five
    # categorizations the node asks for afterwards had reached the judge
    assert [steps for steps, _ in seen] == [1] * 6
    assert max(requests for _, requests in seen) <= 6
