"""What the HTML report shows of a grading run (graph-agents-cli's results keys).

A plain view model the page's script renders as it is. Case ids, reasons and judge
reasoning come from users' datasets, agents and judges: they are shown as text only.
"""

from __future__ import annotations

from typing import Any

STATUSES = ("passed", "failed", "quality_below_threshold", "error", "missing")
VERDICTS = {0: "gate met", 1: "gate failed", 2: "incomplete run"}
JUDGE_KEYS = ("kind", "score", "threshold", "passed", "quality", "reasoning", "error")


def grade_view(document: dict[str, Any]) -> dict[str, Any]:
    """The view of a grading results document: verdict, counts, quality, cases."""
    summary: dict[str, Any] = document["summary"]
    exit_code: Any = summary.get("exit_code")
    judge: dict[str, Any] = document.get("judge") or {}
    counts = [{"status": s, "count": summary.get(s, 0)} for s in STATUSES]
    return {
        "kind": "grade",
        "title": "Grade report",
        "exit_code": exit_code,
        "verdict": VERDICTS.get(exit_code, f"exit code {exit_code}"),
        "subtitle": " · ".join(
            part
            for part in (
                f"judge {judge.get('provider', '?')}/{judge.get('model', '?')}",
                f"graded {document['graded_at']}" if document.get("graded_at") else "",
                f"agent {document['agent_version']}" if document.get("agent_version") else "",
            )
            if part
        ),
        "warnings": [str(w) for w in document.get("warnings") or []],
        "counts": [*counts, {"status": "planned", "count": document.get("planned")}],
        "quality": [_quality(name, q) for name, q in (document.get("quality") or {}).items()],
        "usage": [
            {"label": key.replace("_", " "), "key": key, "value": value}
            for key, value in (document.get("judge_usage") or {}).items()
        ],
        "info": _info(document),
        "cases": [_case(case) for case in document.get("cases") or []],
    }


def _quality(name: str, quality: dict[str, Any]) -> dict[str, Any]:
    keys = ("pass_rate", "min_pass_rate", "met", "status", "scored", "passed", "below_threshold")
    return {"metric": name, **{key: quality.get(key) for key in keys}}


def _info(document: dict[str, Any]) -> list[dict[str, Any]]:
    judge: dict[str, Any] = document.get("judge") or {}
    rows: list[tuple[str, Any]] = [
        ("graded at", document.get("graded_at")),
        ("traces generated at", document.get("generated_at")),
        ("judge", f"{judge.get('provider')}/{judge.get('model')}" if judge else None),
        ("fake", ", ".join(str(f) for f in document.get("fake_model") or []) or None),
        ("agent version", document.get("agent_version")),
        ("agent model", document.get("model")),
        ("capture", document.get("capture")),
        ("dataset hash", document.get("dataset_hash")),
        ("traces dataset hash", document.get("traces_dataset_hash")),
        ("config", document.get("config")),
        ("dataset", ", ".join(str(p) for p in document.get("dataset_paths") or []) or None),
        ("traces", ", ".join(str(p) for p in document.get("traces_files") or []) or None),
    ]
    return [{"label": label, "value": value} for label, value in rows if value is not None]


def _case(case: dict[str, Any]) -> dict[str, Any]:
    checks = [
        {"name": name, "passed": check.get("passed"), "reason": check.get("reason") or ""}
        for name, check in (case.get("checks") or {}).items()
        if isinstance(check, dict)
    ]
    judges = [
        {"name": name, **{key: entry.get(key) for key in JUDGE_KEYS}}
        for name, entry in (case.get("judge_scores") or {}).items()
        if isinstance(entry, dict)
    ]
    notes = case.get("judge_notes") or []
    return {
        "id": str(case.get("id")),
        "status": case.get("status"),
        "reasons": [str(r) for r in case.get("reasons") or []],
        "checks": checks,
        "checks_passed": sum(c["passed"] is True for c in checks),
        "judges": judges,
        "judges_passed": sum(j["passed"] is True for j in judges),
        "notes": [str(n) for n in notes] if isinstance(notes, list) else [str(notes)],
    }
