"""The warnings a graded run carries: fake sides, cut tool results, unrecorded turns, and
cases graph-agents-cli's first-match matching would fail.

They go into the results file (`warnings`, `fake_model`) in graph-agents-cli's order, then
ours, so a gate met on a fake model or on partial evidence never looks like a real pass, and
a team swapping graders knows which cases each grades differently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentjudge.cases.loading import EvalConfig
from agentjudge.cases.outcome.gate import CaseTally

FAKE_AGENT = (
    "the agent ran on the deterministic fake model (MODEL_PROVIDER=fake): its replies are "
    "canned, so a met gate is a plumbing check only, not a quality signal; run the agent on "
    "its real provider before trusting the gate."
)
FAKE_URL_AGENT = (
    "the project's settings name the deterministic fake model (MODEL_PROVIDER=fake): if the "
    "agent at the traced URL runs them, its replies are canned and the gate is a plumbing "
    "check only."
)
FAKE_JUDGE = (
    "the judge is the deterministic fake (provider 'fake'): it gives every judge metric the "
    "scale's maximum without reading the reply, so judge scores and quality rates are a "
    "plumbing check only, not a quality signal. Set JUDGE_MODEL_PROVIDER (or judge.provider "
    "in eval_config.yaml) to a real judge to measure quality."
)


def some(ids: list[str], limit: int = 5) -> str:
    """The first few ids, and an ellipsis when there are more."""
    return ", ".join(ids[:limit]) + ("..." if len(ids) > limit else "")


def fake_sides(meta: dict[str, Any], judge_provider: str | None, judged: bool) -> list[str]:
    """`agent` when a local agent ran on the fake model, `judge` when a fake judge scored."""
    sides = []
    if meta.get("target") == "local" and _fake(meta.get("model_provider")):
        sides.append("agent")
    if judged and _fake(judge_provider):
        sides.append("judge")
    return sides


def warnings(
    config: EvalConfig,
    grades: Sequence[CaseTally],
    fake: list[str],
    meta: dict[str, Any],
    judge_note: str | None = None,
) -> list[str]:
    """The run's warnings, in a fixed order; `judge_note` is what the judge itself says of
    its verdicts (the embedded judge: weak, for offline use and smoke tests)."""
    out: list[str] = []
    if "agent" in fake:
        out.append(FAKE_AGENT)
    elif meta.get("target") == "url" and _fake(meta.get("model_provider")):
        out.append(FAKE_URL_AGENT)
    if "judge" in fake:
        out.append(FAKE_JUDGE)
    if judge_note:
        out.append(judge_note)
    cut = [g for g in grades if g.truncated_results]
    if cut:
        where = config.source.name if config.source else "eval_config.yaml"
        out.append(
            f"{sum(g.truncated_results for g in cut)} tool result(s) in {len(cut)} case(s) were "
            f"longer than judge.max_tool_result_chars ({config.max_tool_result_chars}) and were "
            "cut in the judge prompt with a TRUNCATED marker (the judge is told not to count "
            f"the omitted part as unsupported): {some([g.id for g in cut])}. Raise "
            f"judge.max_tool_result_chars in {where}, or set it to null, to show them in full."
        )
    final_only = [g.id for g in grades if g.final_turn_only]
    if final_only:
        out.append(
            f"{len(final_only)} case(s) declare expect.scope: all_turns but their traces have "
            f"no per-turn records, so their checks read the final turn only: {some(final_only)}. "
            "Regenerate the traces to record every turn."
        )
    lacking: dict[str, list[str]] = {}
    for grade in grades:
        for need in grade.lacking:
            lacking.setdefault(need, []).append(grade.id)
    for need, ids in lacking.items():
        metric, _, what = need.partition(": ")
        fix = "reference" if metric == "task_success" else "context"
        out.append(
            f"{len(ids)} case(s) give {metric} {what} to judge against, so it judges without: "
            f"{some(ids)}. Add {fix}: to these cases in the dataset."
        )
    unrecorded = [g.id for g in grades if g.unrecorded_turns]
    if unrecorded:
        out.append(
            f"{len(unrecorded)} multi-turn case(s) have traces without per-turn records, so "
            "their judges saw the earlier user messages but not the agent's earlier replies: "
            f"{some(unrecorded)}. Regenerate the traces to record every turn."
        )
    first_match = [g.id for g in grades if g.first_match_fails]
    if first_match:
        # every id, not a few: each is a case whose status (or whose judging, and with it
        # the quality rates) changes with the grader, and such cases are rare
        out.append(
            f"{len(first_match)} case(s) pass their expect checks here that first-match "
            f"matching, as graph-agents-cli 0.3.1 does it, fails: {', '.join(first_match)}. "
            "agentjudge gives each expected tool call or approval its own recorded one "
            "whenever some assignment does; graph-agents-cli gives each the first remaining "
            "one that fits, and fails these cases without judging them."
        )
    return out


def _fake(provider: Any) -> bool:
    return str(provider or "").strip().lower() == "fake"
