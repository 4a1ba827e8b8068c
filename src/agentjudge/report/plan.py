"""A dry run's report: the planned calls, tokens and cost, as lines or as JSON."""

from __future__ import annotations

from typing import Any

from agentjudge.scoring.estimate import PlanFigures


def plan_document(
    figures: PlanFigures, price_in: float | None, price_out: float | None
) -> dict[str, Any]:
    """The figures of a plan, and its cost (USD) when prices per million tokens are given:
    `input_to_send` (the input tokens of the calls to send) and `at_most` (every
    categorization and decisive pick made, every answer at its full token budget)."""
    document: dict[str, Any] = {"dry_run": True, **figures.as_dict(), "cost": None}
    if price_in is not None or price_out is not None:
        inputs = figures.input_tokens_to_send
        inputs_most = (
            inputs
            + figures.categorization_input_tokens_at_most
            + figures.decisive_input_tokens_at_most
        )
        calls_most = (
            figures.calls_to_send + figures.categorizations_at_most + figures.decisive_picks_at_most
        )
        outputs_most = calls_most * figures.output_tokens_per_call_at_most
        per_in, per_out = (price_in or 0.0) / 1e6, (price_out or 0.0) / 1e6
        document["cost"] = {
            "price_in_per_million": price_in,
            "price_out_per_million": price_out,
            "input_to_send": round(inputs * per_in, 6),
            "at_most": round(inputs_most * per_in + outputs_most * per_out, 6),
        }
    return document


def plan_lines(document: dict[str, Any]) -> list[str]:
    """What `score --dry-run` prints."""
    d = document
    judged = d["nodes"] - d["nodes_not_judged"]
    lines = [
        f"dry run, no judge call: {d['trajectories']:,} trajectories, {d['nodes']:,} nodes "
        f"({judged:,} to judge)",
        f"judge calls: {d['step_calls']:,} step scores ({d['step_calls_stored']:,} already in "
        f"the verdict store), {d['derivations']:,} criteria derivations, and at most "
        f"{d['categorizations_at_most']:,} categorizations (one per step that scores below "
        f"the failure threshold): {d['calls_to_send']:,} calls to send before categorizations",
        f"input tokens: ~{d['input_tokens_to_send']:,} to send, and at most "
        f"~{d['categorization_input_tokens_at_most']:,} more for categorizations "
        f"({d['tokenizer']}); answers: at most {d['output_tokens_per_call_at_most']:,} "
        "tokens each",
    ]
    if d["decisive_picks_at_most"]:
        lines.append(
            f"decisive_rule judge_pick: at most {d['decisive_picks_at_most']:,} more calls (one "
            f"per root that does not pass), ~{d['decisive_input_tokens_at_most']:,} input tokens"
        )
    cost = d["cost"]
    if cost is not None:
        lines.append(
            f"cost: ~${cost['input_to_send']:,.4f} for the input to send; at most "
            f"${cost['at_most']:,.4f} with every categorization and full-length answers"
        )
    return lines
