"""What the console says of the files a run did not score because they are not valid input
(`skip_failed_trajectory`; under `fail_fast` the job's error names them)."""

from __future__ import annotations

from agentjudge.errors import Problem
from agentjudge.results.score import ScoreResults
from agentjudge.scoring.invalid import LISTED


def invalid_input_lines(document: ScoreResults, limit: int = LISTED) -> list[str]:
    """`not scored, invalid input:` and a line per problem (file, JSON path, message, rule),
    at most `limit` of them; no lines when every file was valid."""
    problems = [
        Problem(**problem)
        for tree in document["trajectories"]
        for node in tree["nodes"]
        for problem in node["problems"]
    ]
    if not problems:
        return []
    lines = ["not scored, invalid input:"] + [f"  {problem}" for problem in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"  … and {len(problems) - limit} more (agentjudge validate lists them)")
    return lines
