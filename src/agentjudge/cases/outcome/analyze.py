"""`analyze`: group the reasons of every case that did not pass into ranked clusters.

Grouping is deterministic and matches graph-agents-cli 0.3.1's `eval analyze`: the same
results file always gives the same clusters, in the same order, in the same JSON shape.
(`judge_summary` stays null: agentjudge does not ask a judge to summarise.)
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentjudge.cases.loading import ARTIFACTS_DIR, timestamped
from agentjudge.results.grade import PASSED, STATUS_RANK, GradeResults

PATTERN_LIMIT = 120
MAX_EXAMPLES = 3


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_SPACES = re.compile(r"\s+")


def normalise_reason(reason: str) -> tuple[str, str]:
    """`(kind, pattern)` of one reason line.

    The kind is the lowercased text before the first colon (`other` without one); judge and
    custom-metric errors become `error/judge` and `error/custom`, keeping the metric name
    out of the pattern. The pattern masks quoted text as `<x>` and numbers as `#` so that
    reasons differing only in those land in one cluster.
    """
    head, colon, rest = reason.partition(":")
    kind = (head.strip().lower() or "other") if colon else "other"
    if not colon:
        rest = reason
    if kind == "error":
        source, inner_colon, detail = rest.strip().partition(":")
        source = source.lower()
        if inner_colon and source.startswith("judge "):
            kind, rest = "error/judge", detail
        elif inner_colon and source.startswith("custom metric "):
            kind, rest = "error/custom", detail
    pattern = _NUMBER.sub("#", _QUOTED.sub("<x>", rest.strip().lower()))
    pattern = _SPACES.sub(" ", pattern).strip()
    if len(pattern) > PATTERN_LIMIT:
        pattern = pattern[: PATTERN_LIMIT - 3] + "..."
    return kind, pattern


def cluster_reasons(results: GradeResults) -> list[dict[str, Any]]:
    """Clusters keyed by (status, kind, pattern), largest first, each with its `rank`.

    `count` counts reasons, not cases; a case that did not pass and gave no reason
    contributes `<status>: no reason recorded`.
    """
    clusters: dict[tuple[str, str, str], dict[str, Any]] = {}
    for case in results["cases"]:
        status = case["status"]
        if status == PASSED:
            continue
        for reason in case["reasons"] or [f"{status}: no reason recorded"]:
            kind, pattern = normalise_reason(reason)
            cluster = clusters.setdefault(
                (status, kind, pattern),
                {
                    "status": status,
                    "kind": kind,
                    "pattern": pattern,
                    "count": 0,
                    "case_ids": [],
                    "examples": [],
                },
            )
            cluster["count"] += 1
            if case["id"] not in cluster["case_ids"]:
                cluster["case_ids"].append(case["id"])
            if len(cluster["examples"]) < MAX_EXAMPLES:
                cluster["examples"].append(reason)
    # Python's sort is stable: exact ties keep the order the files listed them in.
    ordered = sorted(
        clusters.values(),
        key=lambda c: (-c["count"], -_rank(c["status"]), c["kind"], c["pattern"]),
    )
    for rank, cluster in enumerate(ordered, start=1):
        cluster["rank"] = rank
    return ordered


def _rank(status: str) -> int:
    # Unknown statuses sort as if they had passed, as in graph-agents-cli's analyze.
    return STATUS_RANK.get(status, 0)


def analyze_results(results: GradeResults, results_file: str, now: datetime) -> dict[str, Any]:
    """The analysis document (graph-agents-cli's keys, in its order), without a judge summary.

    `now` stamps `generated_at` in UTC; a naive `now` is taken as local time.
    """
    clusters = cluster_reasons(results)
    flagged = {case_id for cluster in clusters for case_id in cluster["case_ids"]}
    return {
        "results_file": results_file,
        "dataset_hash": results["dataset_hash"],
        "generated_at": now.astimezone(UTC).isoformat(timespec="seconds"),
        "total_cases": len(results["cases"]),
        "flagged_cases": len(flagged),
        "summary": results["summary"],
        "clusters": clusters,
        "judge_summary": None,
    }


def analysis_path(root: Path, now: datetime) -> Path:
    """`<root>/artifacts/analysis_<YYYYmmdd_HHMMSS>.json` in local time, never an existing
    file's name. Nothing is created."""
    return timestamped(root / ARTIFACTS_DIR, "analysis", now)
