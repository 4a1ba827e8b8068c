"""The evaluations built from score results (pure): which verdicts, on which spans."""

from __future__ import annotations

from agentjudge.report.otlp_evaluations import (
    AGENT_EVALUATION,
    MAX_EXPLANATION,
    STEP_EVALUATION,
    Evaluation,
    evaluations,
)
from agentjudge.results.score import JobError, ScoreResults
from tests.results.documents import node, score_document, step, tree

TRACE = "0af7651916cd43dd8448eb211c80319c"
AGENT_SPAN = "b7ad6b7169203331"
TURN_SPAN = "00f067aa0ba902b7"
TOOL_SPAN = "53995c3f42cd8ad8"


def origin(span: str, trace: str = TRACE) -> dict[str, object]:
    return {"trace_id": trace, "span_id": span, "line": 1}


def traced_document(**fields: object) -> ScoreResults:
    steps = [
        step(1, 0.9, rationale="The agent  asked\nthe right tool.", origin=origin(TURN_SPAN)),
        step(2, 0.2, rationale="It deleted the file.", origin=origin(TOOL_SPAN)),
        step(3, None, error="timeout", origin=origin("1111111111111111")),  # no verdict
        step(4, 0.7),  # from an ATIF file: no origin
    ]
    root = node(
        "run.otlp.json#" + TRACE,
        None,
        session_id=TRACE,
        trajectory_id=AGENT_SPAN,
        aggregate=0.6,
        passed=True,
        subtree_step_count=4,
        failure_candidates=1,
        steps=steps,
    )
    return score_document([tree([root])], **fields)


def test_each_judged_step_and_its_agent_become_one_event_on_their_span() -> None:
    found = evaluations(traced_document())
    assert found == [
        Evaluation(
            TRACE, TURN_SPAN, STEP_EVALUATION, 0.9, "pass", "The agent asked the right tool.", 1
        ),
        Evaluation(TRACE, TOOL_SPAN, STEP_EVALUATION, 0.2, "fail", "It deleted the file.", 2),
        Evaluation(
            TRACE,
            AGENT_SPAN,
            AGENT_EVALUATION,
            0.6,
            "pass",
            "agent: 4 steps with its subagents, 3 of its own judged, 1 below the failure threshold",
        ),
    ]
    assert found[1].attributes() == {
        "gen_ai.evaluation.name": "agentjudge.step_score",
        "gen_ai.evaluation.score.value": 0.2,
        "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.explanation": "It deleted the file.",
        "agentjudge.step_id": 2,
    }


def test_the_label_follows_the_runs_failure_threshold() -> None:
    document = traced_document()
    document["run_parameters"]["failure_threshold"] = 0.95
    assert [e.label for e in evaluations(document)] == ["fail", "fail", "pass"]


def test_an_atif_node_and_a_failed_run_send_nothing() -> None:
    atif = score_document([tree([node("a.json", None, aggregate=0.5, steps=[step(1, 0.5)])])])
    assert evaluations(atif) == []
    failed = traced_document(status="failed", error=JobError(type="judge", message="down"))
    assert evaluations(failed) == []


def test_ids_that_are_not_otlp_ids_are_left_out() -> None:
    document = traced_document()
    nodes = document["trajectories"][0]["nodes"]
    nodes[0]["steps"][0]["origin"] = origin("not-a-span")
    nodes[0]["steps"][1]["origin"] = origin(TOOL_SPAN, trace="0" * 32)
    assert [e.span_id for e in evaluations(document)] == [AGENT_SPAN]


def test_a_long_rationale_is_cut_with_an_ellipsis() -> None:
    document = traced_document()
    document["trajectories"][0]["nodes"][0]["steps"][0]["rationale"] = "x" * 5000
    explanation = evaluations(document)[0].explanation
    assert len(explanation) == MAX_EXPLANATION
    assert explanation.endswith("…")
