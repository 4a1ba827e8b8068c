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

# the order categories are listed in, before any the judge made up (shown as they came)
CATEGORY_ORDER = (*CATEGORIES, UNCATEGORIZED)


def score_view(document: dict[str, Any]) -> dict[str, Any]:
    """The view of a scoring results document: cards, panels, root rows and their trees."""
    params: dict[str, Any] = document.get("run_parameters") or {}
    threshold = params.get("failure_threshold")
    raw_trees = document.get("trajectories") or []
    base = _common_folder(raw_trees)
    trees = [_tree(tree, threshold, base) for tree in raw_trees]
    decisive = [_mark_decisive(raw, nodes) for raw, nodes in zip(raw_trees, trees, strict=True)]
    roots = [_root_row(index, nodes, decisive[index]) for index, nodes in enumerate(trees) if nodes]
    metrics: dict[str, Any] = document.get("metrics") or {}
    meta: dict[str, Any] = document.get("run_metadata") or {}
    error = document.get("error") or {}
    return {
        "kind": "score",
        "title": "Score report",
        "status": document.get("status"),
        "error": error.get("type") if isinstance(error, dict) else None,
        "error_message": error.get("message") if isinstance(error, dict) else None,
        "notice": meta.get("judge_notice"),  # the judge's note, as the page names it
        "subtitle": _subtitle(params, meta),
        "cards": _cards(metrics, meta, roots, document.get("metrics_interval") or {}),
        "categories": _categories(trees),
        "judge": _judge(document.get("judge") or {}),
        "parameters": _parameters(params, document.get("criteria") or {}, meta),
        "failure_threshold": threshold,
        "roots": roots,
        "trees": trees,
    }


def _subtitle(params: dict[str, Any], meta: dict[str, Any]) -> str:
    parts = [
        f"judge {params.get('atif_judge', '?')}",
        f"prompt {params.get('atif_prompt_version', '?')}",
        f"{params.get('subagent_aggregation', '?')} aggregation",
    ]
    if meta.get("started_at"):
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


METRIC_CARDS = (
    ("Overall score", "atif_overall_score", "score4"),
    ("Trajectories counted", "atif_trajectory_count", "int"),
    ("Categorization rate", "atif_failure_categorization_rate", "score4"),
)


def _cards(
    metrics: dict[str, Any],
    meta: dict[str, Any],
    roots: list[dict[str, Any]],
    intervals: dict[str, Any],
) -> list[dict[str, Any]]:
    failed = sum(r["status"] == "failed" for r in roots)
    passed = sum(r["passed"] is True for r in roots)
    counts = (
        f"{passed} passed · {len(roots) - passed - failed} not passed · {failed} failed to score"
    )
    cards = [
        _card(label, key, metrics.get(key), fmt, _interval(intervals, key))
        for label, key, fmt in METRIC_CARDS
    ]
    cards.append(_card("Complete", "atif_complete", meta.get("atif_complete"), "bool"))
    cards.append(_card("Root trajectories", "roots", len(roots), "int", counts))
    if meta.get("unstable_steps"):  # only with --samples: steps whose samples disagreed
        sub = "samples on both sides of the failure threshold"
        cards.append(_card("Unstable steps", "unstable_steps", meta["unstable_steps"], "int", sub))
    return cards


def _interval(intervals: dict[str, Any], key: str) -> str | None:
    """`95% CI low\u2013high` under a metric the results give a bootstrap interval for."""
    bounds = intervals.get(key)
    if not (isinstance(bounds, list) and len(bounds) == 2):
        return None
    level = intervals.get("level", 0.95)
    return f"{level:.0%} CI {bounds[0]:.4f}\u2013{bounds[1]:.4f}"


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


def _judge(judge: dict[str, Any]) -> list[dict[str, Any]]:
    rows = [
        ("Judge calls", "calls", "int"),
        ("Successful", "successes", "int"),
        ("Errors", "errors", "int"),
        ("Protocol errors", "protocol_errors", "int"),
        ("Retries", "retries", "int"),
        ("Cache hits", "cache_hits", "int"),
        ("Input tokens", "input_tokens", "int"),
        ("Output tokens", "output_tokens", "int"),
        ("Mean latency (ms)", "mean_latency_ms", "num"),
        ("Steps judged", "steps_judged", "int"),
        ("Input tokens per step", "input_tokens_per_step", "num"),
        ("Shared prompt prefix", "shared_prefix_fraction", "score4"),
    ]
    return [_card(label, key, judge.get(key), fmt) for label, key, fmt in rows if key in judge]


def _parameters(
    params: dict[str, Any], criteria: dict[str, Any], meta: dict[str, Any]
) -> list[dict[str, Any]]:
    rows = [_card(key, key, value, "text") for key, value in params.items()]
    rubric = criteria.get("rubric") or {}
    names = [c.get("name") for c in rubric.get("criteria") or [] if isinstance(c, dict)]
    extra = [
        ("criteria mode", criteria.get("mode")),
        ("rubric", rubric.get("name")),
        ("rubric criteria", ", ".join(str(n) for n in names) or None),
        ("rubric aggregation", rubric.get("aggregation")),
        ("tool", f"{meta.get('tool', 'agentjudge')} {meta.get('tool_version', '')}".strip()),
        ("started at", meta.get("started_at")),
        ("finished at", meta.get("finished_at")),
    ]
    return rows + [_card(label, label, value, "text") for label, value in extra if value]


def _common_folder(trees: list[dict[str, Any]]) -> str:
    """The folder all input files share: labels are paths below it (shorter, and unique
    where file names alone are not, as for `run1/trajectory.json`, `run2/trajectory.json`)."""
    paths = [
        str(node["file"])
        for tree in trees
        for node in tree.get("nodes") or []
        if isinstance(node, dict) and node.get("file")
    ]
    if not paths:
        return ""
    try:
        return os.path.commonpath([os.path.dirname(p) for p in paths])
    except ValueError:  # relative and absolute paths mixed
        return ""


def _tree(tree: dict[str, Any], threshold: float | None, base: str) -> list[dict[str, Any]]:
    """A tree's nodes in the results' order (root first), each pointing at its parent."""
    raw: list[dict[str, Any]] = tree.get("nodes") or []
    index = {node.get("id"): i for i, node in enumerate(raw)}
    return [_node(node, index.get(node.get("parent_id")), threshold, base) for node in raw]


def _node(
    node: dict[str, Any], parent: int | None, threshold: float | None, base: str
) -> dict[str, Any]:
    agent: dict[str, Any] = node.get("agent") or {}
    steps = [_step(step, threshold) for step in node.get("steps") or []]
    return {
        "label": _label(node, base),
        "kind": node.get("kind"),
        "depth": node.get("depth"),
        "parent": parent,
        "parent_step": node.get("parent_step_id"),
        "agent": " ".join(str(p) for p in (agent.get("name"), agent.get("version")) if p),
        "model": agent.get("model"),
        "file": node.get("file"),
        "trajectory_id": node.get("trajectory_id"),
        "session_id": node.get("session_id"),
        "status": node.get("status"),
        "reason": node.get("reason"),
        "complete": node.get("complete"),
        "own": node.get("own_score"),
        "aggregate": node.get("aggregate"),
        "passed": node.get("passed"),
        "step_count": node.get("step_count"),
        "subtree_steps": node.get("subtree_step_count"),
        "failures": sum(s["mark"] == "fail" for s in steps),
        "errors": sum(s["mark"] == "error" for s in steps),
        "omitted": [
            {k: o.get(k) for k in ("ref_path", "target", "reason", "parent_step_id")}
            for o in node.get("omitted") or []
        ],
        "problems": [_problem(p) for p in node.get("problems") or []],
        "steps": steps,
    }


def _label(node: dict[str, Any], base: str) -> str:
    """The node's file below `base`; an embedded subagent shares its parent's file, so its
    JSON path is added."""
    file = str(node.get("file") or node.get("id") or "?")
    name = os.path.relpath(file, base) if base and file.startswith(base) else file
    ref = str(node.get("id") or "").partition("#")[2]
    return f"{name}#{ref}" if ref else name


def _problem(problem: Any) -> str:
    if not isinstance(problem, dict):
        return str(problem)
    return f"{problem.get('path', '')}: {problem.get('message', '')} [{problem.get('rule', '')}]"


def _step(step: dict[str, Any], threshold: float | None) -> dict[str, Any]:
    score = step.get("score")
    if step.get("error"):
        mark = "error"
    elif score is None:
        mark = "unscored"
    elif threshold is not None and score < threshold:
        mark = "fail"
    else:
        mark = "ok"
    out = {
        "id": step.get("step_id"),
        "segment": step.get("segment"),
        "source": step.get("source"),
        "score": score,
        "mark": mark,
        "scores": step.get("scores") or None,
        "rationale": step.get("rationale"),
        "error": step.get("error"),
        "error_message": step.get("error_message"),
        "tools": step.get("tool_names") or None,
        "category": step.get("category"),
        "confidence": step.get("confidence"),
        "categorization": step.get("categorization_status"),
        "category_rationale": step.get("category_rationale"),
        "truncated": True if step.get("truncated") else None,
        "shown_chars": step.get("shown_chars"),
        "hidden_chars": step.get("hidden_chars"),
    }
    # 2,000 trajectories hold tens of thousands of steps: leave out what is empty (and the
    # first segment, which nearly every step is in)
    return {k: v for k, v in out.items() if v is not None and v != "" and (k, v) != ("segment", 0)}


def _mark_decisive(tree: dict[str, Any], nodes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Where the tree's root went wrong (its `decisive_failure`), for its row: its step is
    marked `decisive` in its node's step list."""
    failure = tree.get("decisive_failure")
    if not isinstance(failure, dict):
        return None
    raw: list[dict[str, Any]] = tree.get("nodes") or []
    at = next((i for i, n in enumerate(raw) if n.get("id") == failure.get("node_id")), None)
    if at is not None:
        for k, step in enumerate(raw[at].get("steps") or []):
            if (step.get("segment"), step.get("step_id")) == (
                failure.get("segment"),
                failure.get("step_id"),
            ):
                nodes[at]["steps"][k]["decisive"] = True
                break
    keys = ("rule", "agent", "step_id", "segment", "order", "score", "category", "reason")
    shown = {key: failure.get(key) for key in keys}
    return {**shown, "node": at, "label": nodes[at]["label"] if at is not None else None}


def _root_row(
    index: int, nodes: list[dict[str, Any]], decisive: dict[str, Any] | None
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
    }
