"""`compare`: what changed between two results files, and whether the candidate regressed.

The JSON report, its key order and its regression lines match graph-agents-cli 0.3.1's
`eval compare`, so scripts written against one work with the other; its console text is
`report/grade_compare_console.py`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeGuard

from agentjudge.errors import EXIT_INVALID, EXIT_OK
from agentjudge.results.grade import STATUS_RANK, CaseResult, GradeResults

# A status we do not know ranks with error and missing: it is not evidence of a pass.
_UNKNOWN_RANK = 3


def compare_results(
    baseline: GradeResults,
    candidate: GradeResults,
    baseline_name: str,
    candidate_name: str,
) -> dict[str, Any]:
    """The comparison report: per-case changes, score and quality deltas, regressions.

    `baseline_name` and `candidate_name` are recorded as given (graph-agents-cli records the
    command-line arguments).
    """
    regressions: list[str] = []
    improvements: list[str] = []
    cases = _compare_cases(baseline, candidate, regressions, improvements)
    quality = _compare_quality(baseline, candidate, regressions, improvements)
    base_exit = baseline["summary"]["exit_code"]
    cand_exit = candidate["summary"]["exit_code"]
    if cand_exit > base_exit:
        regressions.append(f"exit code {base_exit} -> {cand_exit}")
    return {
        "dataset_hash": {
            "baseline": baseline["dataset_hash"],
            "candidate": candidate["dataset_hash"],
        },
        "same_dataset": baseline["dataset_hash"] == candidate["dataset_hash"],
        "traces_dataset_hash": {
            "baseline": _traces_hash(baseline),
            "candidate": _traces_hash(candidate),
        },
        "summary": summary_diff(baseline["summary"], candidate["summary"]),
        "quality": quality,
        "cases": cases,
        "regressions": regressions,
        "improvements": improvements,
        "regressed": bool(regressions),
        "baseline": baseline_name,
        "candidate": candidate_name,
    }


def compare_json(report: dict[str, Any]) -> str:
    """The report as `compare --json` prints it: one line of ASCII-escaped JSON."""
    return json.dumps(report)


def compare_exit_code(report: dict[str, Any], fail_on_regression: bool) -> int:
    """1 when asked to fail on a regression and there is one, else 0."""
    return EXIT_INVALID if fail_on_regression and report["regressed"] else EXIT_OK


def _is_number(value: object) -> TypeGuard[int | float]:
    # bool counts, as in graph-agents-cli (it is an int subclass there too).
    return isinstance(value, int | float)


def _rank(status: str | None) -> int:
    return _UNKNOWN_RANK if status is None else STATUS_RANK.get(status, _UNKNOWN_RANK)


def _traces_hash(results: GradeResults) -> dict[str, Any]:
    recorded = results["traces_dataset_hash"]
    graded = results["dataset_hash"]
    # Older results lack the key: only a recorded value that differs is a mismatch.
    return {"value": recorded, "mismatch": bool(recorded and graded and recorded != graded)}


def _compare_cases(
    baseline: GradeResults,
    candidate: GradeResults,
    regressions: list[str],
    improvements: list[str],
) -> dict[str, dict[str, Any]]:
    base_cases = {c["id"]: c for c in baseline["cases"]}
    cand_cases = {c["id"]: c for c in candidate["cases"]}
    report: dict[str, dict[str, Any]] = {}
    for case_id in sorted(set(base_cases) | set(cand_cases)):
        base = base_cases.get(case_id)
        cand = cand_cases.get(case_id)
        base_status = base["status"] if base else None
        cand_status = cand["status"] if cand else None
        if base is None:
            change = "added"
        elif cand is None:
            change = "removed"
            regressions.append(f"{case_id}: removed from the candidate run")
        elif _rank(cand_status) > _rank(base_status):
            change = "regressed"
            regressions.append(f"{case_id}: {base_status} -> {cand_status}")
        elif _rank(cand_status) < _rank(base_status):
            change = "improved"
            improvements.append(f"{case_id}: {base_status} -> {cand_status}")
        else:
            change = "unchanged"
        report[case_id] = {
            "baseline": base_status,
            "candidate": cand_status,
            "change": change,
            "candidate_reasons": cand["reasons"] if cand else [],
            "scores": _score_deltas(_scores(base), _scores(cand)),
        }
    return report


def _scores(case: CaseResult | None) -> dict[str, Any]:
    if case is None:
        return {}
    return {name: entry["score"] for name, entry in case["judge_scores"].items()}


def _score_deltas(base: dict[str, Any], cand: dict[str, Any]) -> dict[str, dict[str, Any]]:
    deltas: dict[str, dict[str, Any]] = {}
    for metric in sorted(set(base) | set(cand)):
        entry: dict[str, Any] = {"baseline": base.get(metric), "candidate": cand.get(metric)}
        if _is_number(entry["baseline"]) and _is_number(entry["candidate"]):
            entry["delta"] = round(entry["candidate"] - entry["baseline"], 4)
        deltas[metric] = entry
    return deltas


def _compare_quality(
    baseline: GradeResults,
    candidate: GradeResults,
    regressions: list[str],
    improvements: list[str],
) -> dict[str, dict[str, Any]]:
    base_quality, cand_quality = baseline["quality"], candidate["quality"]
    report: dict[str, dict[str, Any]] = {}
    for metric in sorted(set(base_quality) | set(cand_quality)):
        base, cand = base_quality.get(metric), cand_quality.get(metric)
        base_rate = base["pass_rate"] if base else None
        cand_rate = cand["pass_rate"] if cand else None
        entry: dict[str, Any] = {
            "baseline_pass_rate": base_rate,
            "candidate_pass_rate": cand_rate,
            "baseline_met": base["met"] if base else None,
            "candidate_met": cand["met"] if cand else None,
            "min_pass_rate": cand["min_pass_rate"] if cand else base and base["min_pass_rate"],
        }
        if base_rate is not None and cand_rate is not None:
            entry["delta"] = round(cand_rate - base_rate, 4)
            change = f"quality {metric}: pass rate {base_rate:.0%} -> {cand_rate:.0%}"
            if cand_rate < base_rate:
                regressions.append(change)
            elif cand_rate > base_rate:
                improvements.append(change)
        if entry["baseline_met"] is True and entry["candidate_met"] is False:
            regressions.append(f"quality {metric}: min_pass_rate no longer met")
        report[metric] = entry
    return report


def summary_diff(base: Mapping[str, object], cand: Mapping[str, object]) -> dict[str, Any]:
    """Which summary keys changed: nested objects flatten to dotted keys, numbers get a
    signed string delta (`"+1"`, `"-2"`)."""
    differences = _differences(base, cand, "")
    every_key = set(base) | set(cand)
    return {
        "baseline_keys": sorted(base),
        "candidate_keys": sorted(cand),
        "differences": differences,
        "changed_keys": sorted(differences),
        # A changed nested object appears here under its own name (only "a.b" is a
        # difference), as in graph-agents-cli.
        "unchanged_keys": sorted(k for k in every_key if k not in differences),
    }


def _differences(
    base: Mapping[str, object], cand: Mapping[str, object], prefix: str
) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in sorted(set(base) | set(cand)):
        name = f"{prefix}.{key}" if prefix else key
        base_value = base.get(key)
        cand_value = cand.get(key)
        if base_value == cand_value:
            continue
        if isinstance(base_value, dict) and isinstance(cand_value, dict):
            found.update(_differences(base_value, cand_value, name))
            continue
        entry: dict[str, Any] = {"baseline": base_value, "candidate": cand_value}
        if _is_number(base_value) and _is_number(cand_value):
            delta = cand_value - base_value
            entry["delta"] = f"+{delta}" if delta >= 0 else str(delta)
        found[name] = entry
    return found
