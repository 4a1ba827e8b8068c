"""A judge call's limits are said once (judge/defaults.py): `score`, the eval-hub adapter,
`grade` and a bare client read them there (the eval-hub
adapter's: tests/integrations/test_evalhub_job.py)."""

from __future__ import annotations

from agentjudge.cases.grade import GradeOptions, _judging
from agentjudge.cases.judging.runner import judge_settings
from agentjudge.judge import JudgeClient
from agentjudge.judge.defaults import GRADE_CALLS, SCORE_CALLS
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.scoring.config import ScoreConfig


def test_score_and_a_bare_client_take_scores_limits() -> None:
    assert ScoreConfig(trajectory_path=["t.json"], judge="fake").call_limits() == SCORE_CALLS
    client = JudgeClient(OpenAICompatible("http://127.0.0.1:9/v1", "judge"))
    limits = (client.timeout, client.max_attempts, client.retry_budget)
    assert limits == (SCORE_CALLS.timeout, SCORE_CALLS.max_attempts, SCORE_CALLS.retry_budget)
    backoff = (client.initial_backoff, client.max_backoff)
    assert backoff == (SCORE_CALLS.initial_backoff, SCORE_CALLS.max_backoff)


def test_grade_takes_grades_limits_with_its_call_timeout() -> None:
    assert judge_settings(_judging(GradeOptions())).calls == GRADE_CALLS
    flagged = judge_settings(_judging(GradeOptions(judge_call_timeout=7.0))).calls
    assert (flagged.timeout, flagged.max_attempts) == (7.0, GRADE_CALLS.max_attempts)
