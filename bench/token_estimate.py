"""Benchmark: how close the plan's token estimate is to a real tokenizer, and its fit.

The step and categorization requests a plan would send for three collections (examples/,
the ATIF fixtures in tests/fixtures/atif, and 30 trajectories of score_collection.py)
are counted by Qwen2.5's tokenizer, as the embedded judge's server counts them (needs
agentjudge[local] and its model), and estimated by `scoring/estimate.py`.

Prints one JSON line {collections: {name: {requests, counted, estimated, ratio,
p90_request_error}}, fit}; `fit` (with --fit) holds the weights a least-squares fit over the
three collections gives, each collection weighted equally, and for each collection the
ratio when it is left out of the fit: what the constants in `scoring/estimate.py` come
from. Target: every ratio within 0.9-1.1.

    python bench/token_estimate.py [--fit]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentjudge.atif import load_trees
from agentjudge.judge.model_cache import ensure_model
from agentjudge.judge.providers.local import LocalJudge
from agentjudge.judge.request import JudgeRequest
from agentjudge.scoring import estimate
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import resolve_criteria
from score_collection import trajectory

ROOT = Path(__file__).resolve().parent.parent
Counted = list[tuple[JudgeRequest, int]]


def requests_of(files: list[Path], count: Callable[[JudgeRequest], int]) -> Counted:
    """Every request the plan of `files` holds, with its tokenizer count."""
    config = ScoreConfig.model_validate(
        {"trajectory_path": [str(f) for f in files], "judge": "fake"}
    )
    roots = list(load_trees(config.trajectory_path, config.limits()))
    found: Counted = []

    def record(request: JudgeRequest) -> int:
        found.append((request, count(request)))
        return 0

    estimate.estimate_plan(roots, config, resolve_criteria("default"), lambda _: False, record)
    return found


def fixtures() -> list[Path]:
    """The ATIF fixtures that load as trajectories (some are other formats, or broken on
    purpose)."""
    found = []
    for path in sorted((ROOT / "tests" / "fixtures" / "atif").rglob("*.json")):
        try:
            config = ScoreConfig.model_validate({"trajectory_path": [str(path)], "judge": "fake"})
            if any(
                not root.problems for root in load_trees(config.trajectory_path, config.limits())
            ):
                found.append(path)
        except Exception:  # not a trajectory this plan can read
            continue
    return found


def features(request: JudgeRequest) -> list[float]:
    """The quantities the estimate weighs (`estimate.text_features`), summed over the
    request's messages, and its number of messages: in the order of `WEIGHTS`."""
    total = [0.0] * len(WEIGHTS)
    for message in request.messages:
        values = (*estimate.text_features(message.content), 1)
        total = [t + v for t, v in zip(total, values, strict=True)]
    return total


WEIGHTS = (
    "SHORT_WORD_TOKENS",
    "LONG_WORD_TOKENS_PER_LETTER",
    "PUNCTUATION_TOKENS_PER_CHAR",
    "DIGIT_TOKENS",
    "NON_ASCII_LETTER_TOKENS",
    "MESSAGE_TOKENS",
)


def least_squares(rows: list[tuple[list[float], float, float]]) -> list[float]:
    """Weighted least squares by the normal equations: rows of (features, target, weight).
    A feature no row has (say, letters outside ASCII) gets the weight 0."""
    used = [i for i in range(len(rows[0][0])) if any(x[i] for x, _, _ in rows)]
    n = len(used)
    a = [[sum(w * x[i] * x[j] for x, _, w in rows) for j in used] for i in used]
    b = [sum(w * x[i] * y for x, y, w in rows) for i in used]
    for col in range(n):  # Gaussian elimination with partial pivoting
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot], b[col], b[pivot] = a[pivot], a[col], b[pivot], b[col]
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
            b[r] -= f * b[col]
    solution = [0.0] * n
    for r in reversed(range(n)):
        known = sum(a[r][c] * solution[c] for c in range(r + 1, n))
        solution[r] = (b[r] - known) / a[r][r]
    weights = [0.0] * len(rows[0][0])
    for i, value in zip(used, solution, strict=True):
        weights[i] = value
    return weights


def fit(sets: dict[str, Counted]) -> dict[str, Any]:
    rows = {
        name: [(features(r), float(c), 1.0 / len(found)) for r, c in found]
        for name, found in sets.items()
    }
    weights = least_squares([row for found in rows.values() for row in found])
    held_out = {}
    for name, found in rows.items():
        others = least_squares([row for n, f in rows.items() if n != name for row in f])
        estimated = sum(sum(w * x for w, x in zip(others, f, strict=True)) for f, _, _ in found)
        held_out[name] = round(estimated / sum(c for _, c, _ in found), 3)
    return {
        "weights": dict(zip(WEIGHTS, (round(w, 3) for w in weights), strict=True)),
        "held_out_ratio": held_out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fit", action="store_true", help="also fit the weights")
    args = parser.parse_args()
    count, _ = LocalJudge(ensure_model()).token_counter()
    with tempfile.TemporaryDirectory(prefix="agentjudge-bench-") as name:
        synthetic = []
        for index in range(30):
            path = Path(name, f"t{index}.json")
            path.write_text(json.dumps(trajectory(index, 25)))
            synthetic.append(path)
        sets = {
            "examples": requests_of(
                sorted((ROOT / "examples" / "trajectories").glob("*.json")), count
            ),
            "fixtures": requests_of(fixtures(), count),
            "synthetic": requests_of(synthetic, count),
        }
    report: dict[str, Any] = {"collections": {}}
    for name, found in sets.items():
        estimated = [estimate.estimated_tokens(r) for r, _ in found]
        counted = [c for _, c in found]
        errors = sorted(abs(e - c) / c for e, c in zip(estimated, counted, strict=True))
        report["collections"][name] = {
            "requests": len(found),
            "counted": sum(counted),
            "estimated": sum(estimated),
            "ratio": round(sum(estimated) / sum(counted), 3),
            "p90_request_error": round(statistics.quantiles(errors, n=10)[-1], 3),
        }
    if args.fit:
        report["fit"] = fit(sets)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
