"""What the HTML report shows of a scoring run (`agentjudge.score/v1`): a plain view model.

The page's script renders this dict as it is; every decision about what a value means
(a failure, a step without a score, an omitted child) is taken here, where it is tested.
Every string in it may come from a trajectory or a judge and is shown as text only.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from agentjudge.judge.taxonomy import CATEGORIES, UNCATEGORIZED
from agentjudge.report.cost import cost_text
from agentjudge.results.score import (
    CriteriaRecord,
    JudgeRecord,
    Metrics,
    MetricsInterval,
    NodeRecord,
    RunMetadata,
    RunParameters,
    ScoreResults,
    StepRecord,
    TrajectoryRecord,
)

# the order categories are listed in, before any the judge made up (shown as they came)
CATEGORY_ORDER = (*CATEGORIES, UNCATEGORIZED)


def score_view(document: ScoreResults) -> dict[str, Any]:
    """The view of a scoring results document: cards, panels, root rows and their trees."""
    params = document["run_parameters"]
    threshold = params["failure_threshold"]
    raw_trees = document["trajectories"]
    base = _common_folder(raw_trees)
    trees = [_tree(tree, threshold, base) for tree in raw_trees]
    decisive = [_mark_decisive(raw, nodes) for raw, nodes in zip(raw_trees, trees, strict=True)]
    roots = [
        _root_row(index, nodes, decisive[index], raw_trees[index])
        for index, nodes in enumerate(trees)
        if nodes
    ]
    meta = document["run_metadata"]
    error = document["error"]
    return {
        "kind": "score",
        "title": "Score report",
        "status": document["status"],
        "error": error["type"] if error else None,
        "error_message": error["message"] if error else None,
        "notice": meta["judge_notice"],  # the judge's note, as the page names it
        "subtitle": _subtitle(params, meta),
        "cards": _cards(document["metrics"], meta, roots, document["metrics_interval"]),
        "categories": _categories(trees),
        "judge": _judge(document["judge"]),
        "parameters": _parameters(params, document["criteria"], meta),
        "failure_threshold": threshold,
        "roots": roots,
        "trees": trees,
    }


def _subtitle(params: RunParameters, meta: RunMetadata) -> str:
    parts = [
        f"judge {params['atif_judge']}",
        f"prompt {params['atif_prompt_version']}",
        f"{params['subagent_aggregation']} aggregation",
    ]
    if meta["started_at"]:
        parts.append(f"started {meta['started_at']}")
    return " · ".join(parts)


def _card(label: str, key: str, value: Any, fmt: str, sub: str | None = None) -> dict[str, Any]:
    # the collection metrics carry their names, as MLflow and eval-hub show them
    caption = key if key.startswith("atif_") else None
    return {
        "label": label,
        "key": key,
        "value": value,
        "format": fmt,
        "sub": sub,
        "caption": caption,
    }


def _cards(
    metrics: Metrics, meta: RunMetadata, roots: list[dict[str, Any]], intervals: MetricsInterval
) -> list[dict[str, Any]]:
    failed = sum(r["status"] == "failed" for r in roots)
    passed = sum(r["passed"] is True for r in roots)
    counts = (
        f"{passed} passed · {len(roots) - passed - failed} not passed · {failed} failed to score"
    )
    score = metrics["atif_overall_score"]
    cards = [
        _card("Overall score", "atif_overall_score", score, "score4", _interval(intervals)),
        _card("Trajectories counted", "atif_trajectory_count", metrics["atif_trajectory_count"],
              "int"),
        _card("Categorization rate", "atif_failure_categorization_rate",
              metrics["atif_failure_categorization_rate"], "score4"),
        _card("Complete", "atif_complete", meta["atif_complete"], "bool"),
        _card("Root trajectories", "roots", len(roots), "int", counts),
    ]  # fmt: skip
    if meta["unstable_steps"]:  # only with --samples: steps whose samples disagreed
        sub = "samples on both sides of the failure threshold"
        cards.append(_card("Unstable steps", "unstable_steps", meta["unstable_steps"], "int", sub))
    return cards


def _interval(intervals: MetricsInterval) -> str | None:
    """`95% CI low\u2013high` under the overall score, when the results give its interval."""
    bounds = intervals["atif_overall_score"]
    if bounds is None:
        return None
    return f"{intervals['level']:.0%} CI {bounds[0]:.4f}\u2013{bounds[1]:.4f}"


def _categories(trees: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """How many steps the judge put in each failure category, across every node."""
    counts: Counter[str] = Counter(
        step["category"]
        for nodes in trees
        for node in nodes
        for step in node["steps"]
        if step.get("category")
    )
    rank = {name: i for i, name in enumerate(CATEGORY_ORDER)}
    names = sorted(counts, key=lambda n: (rank.get(n, len(rank)), n))
    return [{"name": name, "count": counts[name]} for name in names]


def _judge(judge: JudgeRecord) -> list[dict[str, Any]]:
    rows = [
        ("Judge calls", "calls", "int"),
        ("Successful", "successes", "int"),
        ("Errors", "errors", "int"),
        ("Protocol errors", "protocol_errors", "int"),
        ("Retries", "retries", "int"),
        ("Cache hits", "cache_hits", "int"),
        ("Input tokens", "input_tokens", "int"),
        ("Output tokens", "output_tokens", "int"),
        ("Cached input tokens read", "cache_read_tokens", "int"),
        ("Input tokens written to the cache", "cache_write_tokens", "int"),
        ("Reasoning tokens", "reasoning_tokens", "int"),
        ("Mean latency (ms)", "mean_latency_ms", "num"),
        ("Steps judged", "steps_judged", "int"),
        ("Input tokens per step", "input_tokens_per_step", "num"),
        ("Shared prompt prefix", "shared_prefix_fraction", "score4"),
    ]
    cards = [_card(label, key, judge.get(key), fmt) for label, key, fmt in rows]
    cost = judge.get("cost")  # none in a file written before runs were priced
    return [*cards, _card("Cost", "cost", cost_text(cost) if cost else None, "text")]


def _parameters(
    params: RunParameters, criteria: CriteriaRecord, meta: RunMetadata
) -> list[dict[str, Any]]:
    rows = [_card(key, key, value, "text") for key, value in params.items()]
    rubric = criteria["rubric"]
    extra = [
        ("criteria mode", criteria["mode"]),
        ("rubric", rubric["name"]),
        ("rubric criteria", ", ".join(c["name"] for c in rubric["criteria"]) or None),
        ("rubric aggregation", rubric["aggregation"]),
        ("tool", f"{meta['tool']} {meta['tool_version']}"),
        ("started at", meta["started_at"]),
        ("finished at", meta["finished_at"]),
    ]
    return rows + [_card(label, label, value, "text") for label, value in extra if value]


def _common_folder(trees: list[TrajectoryRecord]) -> str:
    """The folder all input files share: labels are paths below it (shorter, and unique
    where file names alone are not, as for `run1/trajectory.json`, `run2/trajectory.json`)."""
    paths = [node["file"] for tree in trees for node in tree["nodes"] if node["file"]]
    if not paths:
        return ""
    try:
        return os.path.commonpath([os.path.dirname(p) for p in paths])
    except ValueError:  # relative and absolute paths mixed
        return ""


def _tree(tree: TrajectoryRecord, threshold: float, base: str) -> list[dict[str, Any]]:
    """A tree's nodes in the results' order (root first), each pointing at its parent."""
    index: dict[str | None, int] = {node["id"]: i for i, node in enumerate(tree["nodes"])}
    return [_node(node, index.get(node["parent_id"]), threshold, base) for node in tree["nodes"]]


def _node(node: NodeRecord, parent: int | None, threshold: float, base: str) -> dict[str, Any]:
    agent = node["agent"]
    steps = [_step(step, threshold) for step in node["steps"]]
    return {
        "label": _label(node, base),
        "kind": node["kind"],
        "depth": node["depth"],
        "parent": parent,
        "parent_step": node["parent_step_id"],
        "agent": " ".join(p for p in (agent["name"], agent["version"]) if p),
        "model": agent["model"],
        "file": node["file"],
        "trajectory_id": node["trajectory_id"],
        "session_id": node["session_id"],
        "status": node["status"],
        "reason": node["reason"],
        "complete": node["complete"],
        "own": node["own_score"],
        "aggregate": node["aggregate"],
        "passed": node["passed"],
        "step_count": node["step_count"],
        "subtree_steps": node["subtree_step_count"],
        "failures": sum(s["mark"] == "fail" for s in steps),
        "errors": sum(s["mark"] == "error" for s in steps),
        "omitted": [
            {
                "ref_path": o["ref_path"],
                "target": o["target"],
                "reason": o["reason"],
                "parent_step_id": o["parent_step_id"],
            }
            for o in node["omitted"]
        ],
        "problems": [f"{p['path']}: {p['message']} [{p['rule']}]" for p in node["problems"]],
        "steps": steps,
    }


def _label(node: NodeRecord, base: str) -> str:
    """The node's file below `base`; an embedded subagent shares its parent's file, so its
    JSON path is added."""
    file = node["file"] or node["id"] or "?"
    name = os.path.relpath(file, base) if base and file.startswith(base) else file
    ref = node["id"].partition("#")[2]
    return f"{name}#{ref}" if ref else name


def _step(step: StepRecord, threshold: float) -> dict[str, Any]:
    score = step["score"]
    if step["error"]:
        mark = "error"
    elif score is None:
        mark = "unscored"
    elif score < threshold:
        mark = "fail"
    else:
        mark = "ok"
    out = {
        "id": step["step_id"],
        "segment": step["segment"],
        "source": step["source"],
        "score": score,
        "mark": mark,
        "scores": step["scores"] or None,
        "rationale": step["rationale"],
        "error": step["error"],
        "error_message": step["error_message"],
        "tools": step["tool_names"] or None,
        "category": step["category"],
        "confidence": step["confidence"],
        "categorization": step["categorization_status"],
        "category_rationale": step["category_rationale"],
        "truncated": True if step["truncated"] else None,
        "shown_chars": step.get("shown_chars"),
        "hidden_chars": step.get("hidden_chars"),
    }
    # 2,000 trajectories hold tens of thousands of steps: leave out what is empty (and the
    # first segment, which nearly every step is in)
    return {k: v for k, v in out.items() if v is not None and v != "" and (k, v) != ("segment", 0)}


def _mark_decisive(tree: TrajectoryRecord, nodes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Where the tree's root went wrong (its `decisive_failure`), for its row: its step is
    marked `decisive` in its node's step list."""
    failure = tree["decisive_failure"]
    if failure is None:
        return None
    raw = tree["nodes"]
    at = next((i for i, n in enumerate(raw) if n["id"] == failure["node_id"]), None)
    if at is not None:
        for k, step in enumerate(raw[at]["steps"]):
            if (step["segment"], step["step_id"]) == (failure["segment"], failure["step_id"]):
                nodes[at]["steps"][k]["decisive"] = True
                break
    keys = (
        "rule", "agent", "step_id", "segment", "order", "score", "category", "reason", "excerpt"
    )  # fmt: skip
    shown = {key: failure.get(key) for key in keys}
    return {**shown, "node": at, "label": nodes[at]["label"] if at is not None else None}


def _root_row(
    index: int,
    nodes: list[dict[str, Any]],
    decisive: dict[str, Any] | None,
    raw: TrajectoryRecord,
) -> dict[str, Any]:
    root = nodes[0]
    return {
        "index": index,
        "label": root["label"],
        "trajectory_id": root["trajectory_id"],
        "agent": root["agent"],
        "model": root["model"],
        "file": root["file"],
        "status": root["status"],
        "reason": root["reason"],
        "score": root["aggregate"],
        "own": root["own"],
        "passed": root["passed"],
        "complete": root["complete"],
        "steps": root["subtree_steps"],
        "subagents": len(nodes) - 1,
        "omitted": sum(len(n["omitted"]) for n in nodes),
        "failures": sum(n["failures"] for n in nodes),
        "errors": sum(n["errors"] for n in nodes),
        "decisive": decisive,
        "decisive_absent": raw.get("decisive_absent"),  # why a root that did not pass names no step
        # USD of the judge calls for this tree; none in a run without a price or a file
        # written before roots were priced (the page then has no cost column)
        "cost": raw.get("cost_usd"),
    }
