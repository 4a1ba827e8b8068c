"""The verdicts of a score run that can be sent back to the traces they judged.

Each judged step read from a trace (its `origin` names a trace and a span) and each agent
whose `invoke_agent` (or AGENT) span is known becomes one `Evaluation`: what a
`gen_ai.evaluation.result` event carries (docs/formats.md, "Evaluations sent back").
Pure; `report/otlp_send.py` sends them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentjudge.results.score import NodeRecord, ScoreResults, StepRecord

EVENT_NAME = "gen_ai.evaluation.result"
STEP_EVALUATION = "agentjudge.step_score"
AGENT_EVALUATION = "agentjudge.agent_score"
# A rationale past this is cut (with an ellipsis): receivers index attributes, and a
# judge's reasoning of a few sentences fits well within it.
MAX_EXPLANATION = 1000
_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_SPAN_ID = re.compile(r"[0-9a-f]{16}")
_ZERO_TRACE, _ZERO_SPAN = "0" * 32, "0" * 16


@dataclass(frozen=True)
class Evaluation:
    """One verdict on one span: what a `gen_ai.evaluation.result` event carries."""

    trace_id: str
    """32 lowercase hex digits, as OTLP/JSON writes it."""
    span_id: str
    """16 lowercase hex digits."""
    name: str
    score: float
    label: str
    """`pass` or `fail`, by the run's failure threshold (an agent: whether it passed)."""
    explanation: str
    step_id: int | None = None
    """A step's id in its run (a user input and the model turn it led to share a span)."""

    def attributes(self) -> dict[str, str | float | int]:
        """The event's attributes, named as the GenAI semantic conventions name them; a
        step's id beside them, under our own prefix."""
        found: dict[str, str | float | int] = {
            "gen_ai.evaluation.name": self.name,
            "gen_ai.evaluation.score.value": self.score,
            "gen_ai.evaluation.score.label": self.label,
            "gen_ai.evaluation.explanation": self.explanation,
        }
        if self.step_id is not None:
            found["agentjudge.step_id"] = self.step_id
        return found


def evaluations(results: ScoreResults) -> list[Evaluation]:
    """Every verdict of `results` that can be tied to a span: each judged step with an
    origin span, then each scored agent whose span is known; nothing from a run that
    failed. Steps without a verdict and nodes without a score are left out (there is no
    value to send)."""
    if results["error"] is not None:
        return []
    threshold = results["run_parameters"]["failure_threshold"]
    found: list[Evaluation] = []
    for trajectory in results["trajectories"]:
        for node in trajectory["nodes"]:
            found.extend(_step(step, threshold) for step in node["steps"] if _spot(step))
            agent = _agent(node)
            if agent is not None:
                found.append(agent)
    return found


def _spot(step: StepRecord) -> tuple[str, str] | None:
    """The judged span of a step that has a verdict and an origin span; else None."""
    origin = step.get("origin") or {}
    spot = _ids(origin.get("trace_id"), origin.get("span_id"))
    return spot if spot is not None and step["score"] is not None else None


def _ids(trace_id: Any, span_id: Any) -> tuple[str, str] | None:
    if not (isinstance(trace_id, str) and isinstance(span_id, str)):
        return None
    trace_id, span_id = trace_id.lower(), span_id.lower()
    if not (_TRACE_ID.fullmatch(trace_id) and _SPAN_ID.fullmatch(span_id)):
        return None
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return trace_id, span_id


def _step(step: StepRecord, threshold: float) -> Evaluation:
    trace_id, span_id = _spot(step) or ("", "")
    score = step["score"]
    assert score is not None  # _spot keeps judged steps only
    return Evaluation(
        trace_id=trace_id,
        span_id=span_id,
        name=STEP_EVALUATION,
        score=score,
        label="fail" if score < threshold else "pass",
        explanation=_shortened(step["rationale"]),
        step_id=step["step_id"],
    )


def _agent(node: NodeRecord) -> Evaluation | None:
    """An agent's verdict on its `invoke_agent` span: a trace reader names the run by
    the trace (`session_id`) and the agent's span (`trajectory_id`); a node whose steps
    come from that trace is one a trace file made."""
    spot = _ids(node["session_id"], node["trajectory_id"])
    score = node["aggregate"]
    if spot is None or score is None:
        return None
    from_trace = any((s.get("origin") or {}).get("trace_id") == spot[0] for s in node["steps"])
    if not from_trace:
        return None
    judged = sum(step["score"] is not None for step in node["steps"])
    return Evaluation(
        trace_id=spot[0],
        span_id=spot[1],
        name=AGENT_EVALUATION,
        score=score,
        label="pass" if node["passed"] else "fail",
        explanation=(
            f"{node['agent']['name'] or 'agent'}: {node['subtree_step_count']} steps with its "
            f"subagents, {judged} of its own judged, {node['failure_candidates']} below the "
            "failure threshold"
        ),
    )


def _shortened(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_EXPLANATION else text[: MAX_EXPLANATION - 1] + "…"
