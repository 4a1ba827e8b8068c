"""What the console says of each root at the end of `score`: a short table of its score,
whether it passed, and where it went wrong (its decisive failure, from the results'
`decisive_failure`: its agent, the start of its text, its score and the judge's reason; for
a root that passed, its lowest agent step below the failure threshold, if any; for one with
no decisive failure, why). Pure: lines from the results document."""

from __future__ import annotations

import os

from agentjudge.printable import printable
from agentjudge.results.score import DecisiveFailureRecord, ScoreResults, TrajectoryRecord

MAX_LISTED = 10  # roots listed (those that did not pass first); the rest are counted
REASON_CHARS = 100  # of the judge's reason, on its line
EXCERPT_CHARS = 60  # of the step's own text (the results keep up to 160)
# why a root that did not pass names no step (the results' `decisive_absent`), as said
ABSENT = {
    "only_user_or_system_steps_below_threshold": "only user or system steps below {threshold:g}",
    "no_scored_agent_step": "no scored agent step",
}
NAME_CHARS = 72  # of a root's name, cut in the middle beyond
HEADER = ("root", "score", "passed", "where it went wrong")


def roots_table(document: ScoreResults, limit: int = MAX_LISTED) -> list[str]:
    """A title line, a header and a line per root (at most `limit`, those that did not pass
    first), then how many more there are; no lines when the run has no root. Every name
    and reason comes from a trajectory or a judge: one line each, printable."""
    trees = document["trajectories"]
    if not trees:
        return []
    threshold = document["run_parameters"]["failure_threshold"]
    passing = document["run_parameters"]["completion_threshold"]
    folder, names = _names(trees)
    order = sorted(range(len(trees)), key=lambda i: trees[i]["nodes"][0]["passed"])
    shown = sorted(order[:limit])
    rows = [HEADER] + [_row(names[i], trees[i], threshold, passing) for i in shown]
    widths = [max(len(row[c]) for row in rows) for c in range(3)]
    lines = [printable(f"Roots{f' in {folder}' if folder else ''}:")]
    for name, score, passed, where in rows:
        cells = (name.ljust(widths[0]), score.rjust(widths[1]), passed.ljust(widths[2]), where)
        lines.append(printable("  " + "  ".join(cells).rstrip()))
    if len(trees) > len(shown):
        failed = sum(not tree["nodes"][0]["passed"] for tree in trees)
        hidden_failed = failed - sum(not trees[i]["nodes"][0]["passed"] for i in shown)
        lines.append(
            f"  … and {len(trees) - len(shown)} more ({hidden_failed} of them did not pass; "
            "see the results)"
        )
    return lines


def _names(trees: list[TrajectoryRecord]) -> tuple[str, list[str]]:
    """The folder the roots' files are in ("" if they share none) and each root's name: its
    file under that folder, with its trajectory id when several roots share a file."""
    files = [tree["nodes"][0]["file"] for tree in trees]
    try:
        folder = os.path.commonpath([os.path.dirname(f) for f in files])
    except ValueError:  # absolute and relative paths, or two drives
        folder = ""
    names = [os.path.relpath(f, folder) if folder else f for f in files]
    for i, tree in enumerate(trees):
        if names.count(names[i]) > 1:
            root = tree["nodes"][0]
            names[i] += f" {root['trajectory_id'] or tree['root']}"
    return (os.path.join(folder, "") if folder else ""), [printable(_cut(n)) for n in names]


def _cut(name: str) -> str:
    if len(name) <= NAME_CHARS:
        return name
    half = (NAME_CHARS - 1) // 2
    return name[:half] + "…" + name[-(NAME_CHARS - 1 - half) :]


def _row(
    name: str, tree: TrajectoryRecord, threshold: float, passing: float
) -> tuple[str, str, str, str]:
    root = tree["nodes"][0]
    score = root["aggregate"]
    failure = tree["decisive_failure"]
    absent = tree.get("decisive_absent")
    if failure:
        where = _where(tree, failure, threshold)
    elif absent:
        where = "- (" + ABSENT.get(absent, absent).format(threshold=threshold) + ")"
    else:
        lowest = _lowest_failing(tree, threshold)
        where = (
            "-"
            if lowest is None
            else f"{_where(tree, lowest, threshold)} (lowest below {threshold:g})"
        )
    return (
        name,
        "-" if score is None else shown(score, passing),
        "yes" if root["passed"] else "no",
        where,
    )


def _lowest_failing(tree: TrajectoryRecord, threshold: float) -> DecisiveFailureRecord | None:
    """The lowest-scoring agent step of a tree below `threshold` (the first of equals), in
    the shape of a decisive failure, and no reason; None when no agent step is below it
    (a user's or the system's step is never where a run went wrong)."""
    found: DecisiveFailureRecord | None = None
    for node in tree["nodes"]:
        for step in node["steps"]:
            score = step["score"]
            if score is None or score >= threshold or step["source"] != "agent":
                continue
            if found is None or score < (found["score"] or 0.0):
                found = {
                    "rule": "lowest_score", "node_id": node["id"], "agent": node["agent"]["name"],
                    "segment": step["segment"], "step_id": step["step_id"], "order": 0,
                    "score": score, "category": step["category"], "reason": "",
                    "pick_status": None,
                }  # fmt: skip
    return found


def shown(value: float, threshold: float) -> str:
    """`value` to two decimals, or to as many more (up to six) as keep it on its side of
    `threshold`, else in full: 0.4999 against 0.5 reads `0.4999`, never a `0.50` that did
    not pass."""
    for digits in range(2, 7):
        text = f"{value:.{digits}f}"
        if (float(text) < threshold) == (value < threshold):
            return text
    return repr(value)


def _where(tree: TrajectoryRecord, step: DecisiveFailureRecord, threshold: float) -> str:
    """`step 3 by coder "Total: 52"`, `step 2 of subagent coder "…"`: its agent, the start
    of its text, its score, category and the reason, shortened."""
    place = f"step {step['step_id']}"
    if step["segment"]:
        place += f" of segment {step['segment']}"
    if step["node_id"] != tree["root"]:
        place += f" of subagent {step['agent'] or step['node_id']}"
    elif step["agent"]:
        place += f" by {step['agent']}"
    excerpt = step.get("excerpt")  # a passed root's lowest step has none (not decisive)
    if excerpt:
        place += f' "{_short(excerpt, EXCERPT_CHARS)}"'
    score = step["score"]
    text = f"{place}: {'no score' if score is None else shown(score, threshold)}"
    if step["category"]:
        text += f" {step['category']}"
    reason = _short(step["reason"], REASON_CHARS)
    return f"{text}: {reason}" if reason else text


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
