"""A dry run's report: the planned calls, tokens and cost, as lines or as JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from agentjudge.judge.price import Pricer
from agentjudge.scoring.estimate import PlanFigures
from agentjudge.scoring.foretell import foretell_cost


def plan_document(figures: PlanFigures, pricer: Pricer, batch: bool = False) -> dict[str, Any]:
    """The figures of a plan, and its cost (USD) foretold at `pricer`'s rates
    (`scoring/foretell.py`): `usd` for the calls to send, `at_most` with every
    categorization and decisive pick, each answer at its full token budget; `input_to_send`
    the input part of `usd`; `batch`: at the batch discount. A judge with no price has
    none, and the reason."""
    document: dict[str, Any] = {"dry_run": True, **figures.as_dict()}
    rates = pricer.rates()
    cost: dict[str, Any] = {
        "usd": None,
        "at_most": None,
        "input_to_send": None,
        "source": pricer.source,
        "model": pricer.model,
        "caching": pricer.caches,
        "batch": batch,
        "reason": pricer.reason,
    }
    if rates is not None:
        foretold = foretell_cost(figures, rates, pricer.caches, batch=batch)
        cost["usd"] = round(foretold.usd, 6)
        cost["at_most"] = round(foretold.at_most, 6)
        cost["input_to_send"] = round(foretold.input_usd, 6)
        cost["rates_per_million"] = asdict(rates)
    document["cost"] = cost
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
    if cost["usd"] is None:
        lines.append(f"cost: none foretold: {cost['reason']}")
    else:
        cached = ", the repeated prompt start read from the provider's cache" * cost["caching"]
        lines.append(
            f"cost: at most ${cost['usd']:,.4f} for the calls to send (input "
            f"${cost['input_to_send']:,.4f}{cached}; every answer at its full length), "
            f"${cost['at_most']:,.4f} with every categorization ({cost['source']})"
        )
    return lines
