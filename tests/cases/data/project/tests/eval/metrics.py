"""Custom metrics of this project: fn(case, trace) -> bool | number | {score, reasoning}."""


def answer_length_ok(case: dict, trace: dict) -> dict:
    words = len((trace.get("response") or "").split())
    limit = (case.get("metadata") or {}).get("max_words", 200)
    return {"score": 1 if words <= limit else 0, "reasoning": f"{words} words (limit {limit})"}
