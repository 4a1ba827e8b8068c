"""What the HTML report shows of a grading run (graph-agents-cli's results keys).

A plain view model the page's script renders as it is. Case ids, reasons and judge
reasoning come from users' datasets, agents and judges: they are shown as text only.
"""

from __future__ import annotations

from typing import Any

from agentjudge.report.cost import cost_text
from agentjudge.results.grade import STATUSES, CaseResult, GradeResults, QualityResult

VERDICTS = {0: "gate met", 1: "gate failed", 2: "incomplete run"}


def grade_view(document: GradeResults) -> dict[str, Any]:
    """The view of a grading results document: verdict, counts, quality, cases."""
    summary = document["summary"]
    exit_code = summary["exit_code"]
    judge = document["judge"]
    counts = [{"status": s, "count": summary[s]} for s in STATUSES]
    return {
        "kind": "grade",
        "title": "Grade report",
        "exit_code": exit_code,
        "verdict": VERDICTS.get(exit_code, f"exit code {exit_code}"),
        "subtitle": " · ".join(
            part
            for part in (
                f"judge {judge['provider']}/{judge['model']}",
                f"graded {document['graded_at']}" if document["graded_at"] else "",
                f"agent {document['agent_version']}" if document["agent_version"] else "",
            )
            if part
        ),
        "warnings": document["warnings"],
        "counts": [*counts, {"status": "planned", "count": document["planned"]}],
        "quality": [_quality(name, q) for name, q in document["quality"].items()],
        "usage": [
            {"label": key.replace("_", " "), "key": key, "value": value}
            for key, value in (document.get("judge_usage") or {}).items()
        ],
        "info": _info(document),
        "cases": [_case(case) for case in document["cases"]],
    }


def _quality(name: str, quality: QualityResult) -> dict[str, Any]:
    return {"metric": name, **quality}


def _info(document: GradeResults) -> list[dict[str, Any]]:
    judge = document["judge"]
    rows: list[tuple[str, Any]] = [
        ("graded at", document["graded_at"]),
        ("traces generated at", document["generated_at"]),
        ("judge", f"{judge['provider']}/{judge['model']}"),
        ("judge cost", cost_text(cost) if (cost := document.get("judge_cost")) else None),
        ("fake", ", ".join(document["fake_model"]) or None),
        ("agent version", document["agent_version"]),
        ("agent model", document["model"]),
        ("capture", document["capture"]),
        ("dataset hash", document["dataset_hash"]),
        ("traces dataset hash", document["traces_dataset_hash"]),
        ("config", document["config"]),
        ("dataset", ", ".join(document["dataset_paths"]) or None),
        ("traces", ", ".join(document["traces_files"]) or None),
    ]
    return [{"label": label, "value": value} for label, value in rows if value is not None]


def _case(case: CaseResult) -> dict[str, Any]:
    checks = [
        {"name": name, "passed": check["passed"], "reason": check["reason"]}
        for name, check in case["checks"].items()
    ]
    judges = [
        {
            "name": name,
            "kind": entry["kind"],
            "score": entry["score"],
            "threshold": entry["threshold"],
            "passed": entry["passed"],
            "quality": entry["quality"],
            "reasoning": entry["reasoning"],
            "error": entry["error"],
        }
        for name, entry in case["judge_scores"].items()
    ]
    return {
        "id": case["id"],
        "status": case["status"],
        "reasons": case["reasons"],
        "checks": checks,
        "checks_passed": sum(c["passed"] is True for c in checks),
        "judges": judges,
        "judges_passed": sum(j["passed"] is True for j in judges),
        "notes": case.get("judge_notes", []),
    }
