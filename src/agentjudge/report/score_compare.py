"""`compare` for two `score` results: are they comparable, and what changed per trajectory.

Two runs are comparable when what decides a score's meaning is the same in both (see
`COMPARABLE_PARAMETERS` and `comparability_difference`); trajectories are paired by root
`trajectory_id`, then by root `input_sha256`, and the paired deltas of the root scores (the
root node's aggregate) are summarised by `trust.paired`.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from agentjudge.errors import EXIT_INVALID, EXIT_JOB_FAILED, EXIT_OK, AgentJudgeError, UsageError
from agentjudge.results.score import SCORE, SCORE_SCHEMA, NodeRecord, ScoreResults, TrajectoryRecord
from agentjudge.trust.intervals import Bootstrap
from agentjudge.trust.paired import paired_summary

Root = TrajectoryRecord  # one entry of a results file's `trajectories`

# run parameters that change what a score means: runs that differ in one are not compared
Comparable = Literal[
    "atif_prompt_version",
    "scoring_mode",
    "subagent_aggregation",
    "atif_scored_frames",
    "context_steps",
    "failure_threshold",
    "max_subagent_depth",
]
COMPARABLE_PARAMETERS: tuple[Comparable, ...] = get_args(Comparable)
# and the criteria's, then every node's rubric
CRITERIA: tuple[Literal["mode", "benchmark_name", "rubric"], ...] = (
    "mode",
    "benchmark_name",
    "rubric",
)
# what pairs trajectories, in this order
PAIRING: tuple[Literal["trajectory_id", "input_sha256"], ...] = ("trajectory_id", "input_sha256")


class MixedResultsError(AgentJudgeError):
    """A `score` results file compared with a `grade` one: exit 2."""

    exit_code = EXIT_JOB_FAILED


def check_same_kind(baseline: Any, candidate: Any, names: tuple[str, str]) -> bool:
    """True when both are score results, False when neither is; one of each is an error."""
    kinds = (SCORE.claims(baseline), SCORE.claims(candidate))
    if kinds[0] != kinds[1]:
        score_name, grade_name = names if kinds[0] else names[::-1]
        raise MixedResultsError(
            f"{grade_name}: not a score results file (schema {SCORE_SCHEMA}) while {score_name} "
            "is one; compare two `agentjudge score` results or two `agentjudge grade` results"
        )
    return kinds[0]


def judge_identity(document: ScoreResults) -> str:
    """The judge as recorded: provider/model, and the endpoint it was reached at."""
    name = document["run_parameters"]["atif_judge"]
    endpoint = document["judge"]["endpoint"]
    return f"{name} at {endpoint}" if endpoint else name


def comparability_difference(
    baseline: ScoreResults, candidate: ScoreResults, pairs: list[tuple[Root, Root]]
) -> str | None:
    """The first thing that makes the two runs' scores mean different things, or None: the
    judge, then each of `COMPARABLE_PARAMETERS`, then the rubric (the run's, then the full
    rubric of each node of the paired trajectories, `auto` mode's derived ones included)."""
    judges = judge_identity(baseline), judge_identity(candidate)
    if judges[0] != judges[1]:
        return f"judge differs ({judges[0]} vs {judges[1]})"
    base_params, cand_params = baseline["run_parameters"], candidate["run_parameters"]
    for key in COMPARABLE_PARAMETERS:
        if base_params[key] != cand_params[key]:
            return f"{key} differs ({base_params[key]} vs {cand_params[key]})"
    for name in CRITERIA:
        if baseline["criteria"][name] != candidate["criteria"][name]:
            return f"rubric differs (criteria.{name})"
    for base_root, cand_root in pairs:
        base_nodes, cand_nodes = base_root["nodes"], cand_root["nodes"]
        if [n["rubric"] for n in base_nodes] != [n["rubric"] for n in cand_nodes]:
            return f"rubric differs (trajectory {_label(base_nodes[0])})"
    return None


def pair_trajectories(
    baseline: ScoreResults, candidate: ScoreResults
) -> tuple[list[tuple[Root, Root]], list[Root], list[Root]]:
    """Roots paired by `trajectory_id`, then by `input_sha256` (a key counts only when it
    names one root on each side); and the roots of each run left unpaired."""
    base_left, cand_left = list(baseline["trajectories"]), list(candidate["trajectories"])
    pairs: list[tuple[Root, Root]] = []
    for key in PAIRING:
        base_by = _unique_by(base_left, key)
        cand_by = _unique_by(cand_left, key)
        matched = [(base_by[k], cand_by[k]) for k in base_by if k in cand_by]
        pairs.extend(matched)
        paired = {id(t) for pair in matched for t in pair}
        base_left = [t for t in base_left if id(t) not in paired]
        cand_left = [t for t in cand_left if id(t) not in paired]
    return pairs, base_left, cand_left


def _unique_by(roots: list[Root], key: Literal["trajectory_id", "input_sha256"]) -> dict[str, Root]:
    seen: dict[str, list[Root]] = {}
    for root in roots:
        if value := root["nodes"][0][key]:
            seen.setdefault(value, []).append(root)
    return {value: found[0] for value, found in seen.items() if len(found) == 1}


def _label(node: NodeRecord) -> str:
    return node["trajectory_id"] or node["input_sha256"] or node["file"]


def compare_score_results(
    baseline: ScoreResults,
    candidate: ScoreResults,
    names: tuple[str, str],
    *,
    allow_incomparable: bool,
    significance: float,
    bootstrap: Bootstrap,
) -> dict[str, Any]:
    """The comparison report (see docs/report.md), or a UsageError (exit 3) naming the first
    difference when the runs are not comparable and that is not allowed."""
    pairs, base_left, cand_left = pair_trajectories(baseline, candidate)
    difference = comparability_difference(baseline, candidate, pairs)
    if difference is not None and not allow_incomparable:
        raise UsageError(
            f"runs are not comparable: {difference}; pass --allow-incomparable to compare anyway"
        )
    rows = [_row(base, cand) for base, cand in pairs]
    deltas = [row["delta"] for row in rows if row["delta"] is not None]
    summary = paired_summary(
        deltas, seed=bootstrap.seed, resamples=bootstrap.resamples, level=bootstrap.level
    )
    significant = summary.p_value is not None and summary.p_value < significance
    return {
        "kind": "score",
        "baseline": names[0],
        "candidate": names[1],
        "comparable": difference is None,
        "difference": difference,
        "overall_score": _change(
            baseline["metrics"]["atif_overall_score"], candidate["metrics"]["atif_overall_score"]
        ),
        "paired": summary.count,
        "unscored_pairs": len(rows) - len(deltas),
        "mean_delta": summary.mean_delta,
        "mean_delta_interval": None if summary.interval is None else list(summary.interval),
        "p_value": summary.p_value,
        "test": "sign-flip permutation (two-sided)",
        "significance": significance,
        "significant": significant,
        "regressed": significant and (summary.mean_delta or 0.0) < 0,
        "level": bootstrap.level,
        "resamples": bootstrap.resamples,
        "seed": bootstrap.seed,
        "failure_categories": _category_deltas(baseline, candidate),
        "unmatched": {
            "count": len(base_left) + len(cand_left),
            "baseline": [_label(t["nodes"][0]) for t in base_left],
            "candidate": [_label(t["nodes"][0]) for t in cand_left],
        },
        "trajectories": rows,
    }


def _change(base: float | None, cand: float | None) -> dict[str, Any]:
    delta = None if base is None or cand is None else cand - base
    return {"baseline": base, "candidate": cand, "delta": delta}


def _row(base: Root, cand: Root) -> dict[str, Any]:
    root = base["nodes"][0]
    change = _change(root["aggregate"], cand["nodes"][0]["aggregate"])
    return {"trajectory_id": root["trajectory_id"], "input_sha256": root["input_sha256"],
            **change}  # fmt: skip


def _category_deltas(baseline: ScoreResults, candidate: ScoreResults) -> dict[str, Any]:
    base, cand = baseline["failure_categories"], candidate["failure_categories"]
    return {name: _change(base.get(name, 0), cand.get(name, 0)) for name in sorted({*base, *cand})}


def score_compare_exit_code(report: dict[str, Any], fail_on_regression: bool) -> int:
    """1 when asked to fail on a regression and the mean drop is significant, else 0."""
    return EXIT_INVALID if fail_on_regression and report["regressed"] else EXIT_OK


def score_compare_json(report: dict[str, Any]) -> str:
    """The report as `compare --json` prints it: one line of JSON."""
    return json.dumps(report)
