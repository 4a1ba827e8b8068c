"""What the console says of the roots that did not pass: where each went wrong (its
decisive failure, from the results' `decisive_failure`)."""

from __future__ import annotations

from typing import Any

from agentjudge.printable import printable

MAX_LISTED = 10  # roots listed; the rest are counted
REASON_CHARS = 100  # of the judge's reason, on its line


def went_wrong_lines(document: dict[str, Any], limit: int = MAX_LISTED) -> list[str]:
    """`Where it went wrong:` and a line per failed root (root → node, agent, step, score,
    category, the reason shortened), at most `limit` of them; no lines when none failed.
    Every name and reason comes from a trajectory or a judge: one line each, printable."""
    found = [
        (tree, tree["decisive_failure"])
        for tree in document.get("trajectories") or []
        if tree.get("decisive_failure")
    ]
    if not found:
        return []
    lines = ["Where it went wrong:"]
    for tree, failure in found[:limit]:
        lines.append("  " + _line(tree, failure))
    if len(found) > limit:
        lines.append(f"  … and {len(found) - limit} more (see decisive_failure in the results)")
    return lines


def _line(tree: dict[str, Any], failure: dict[str, Any]) -> str:
    root = tree["nodes"][0]
    name = root.get("trajectory_id") or root.get("file") or tree.get("root")
    node = "root" if failure["node_id"] == tree.get("root") else failure["node_id"]
    agent = f" ({failure['agent']})" if failure.get("agent") else ""
    segment = f" of segment {failure['segment']}" if failure.get("segment") else ""
    score = failure.get("score")
    shown = "no score" if score is None else f"score {score:.2f}"
    category = f", {failure['category']}" if failure.get("category") else ""
    reason = failure.get("reason") or ""
    if len(reason) > REASON_CHARS:
        reason = reason[:REASON_CHARS] + "…"
    text = f"{name} → {node}{agent}, step {failure['step_id']}{segment}: {shown}{category}"
    return printable(f"{text}: {reason}" if reason else text)
