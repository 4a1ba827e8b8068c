"""Benchmark: the time of the 95% bootstrap intervals (1,000 resamples) a run reports.

For 2,000 and 100,000 roots: `atif_overall_score` of `flat` trees (1-4 scored nodes each) with
step scores from five values (a judge's usual 0, 0.25, ... 1) and with continuous scores;
for 2,000 and 100,000 cases: a pass rate. Prints JSON, one entry per case, with seconds.

    python bench/intervals.py [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from agentjudge.scoring.aggregate import NodeAggregate
from agentjudge.scoring.score_interval import overall_score_interval
from agentjudge.trust.intervals import Bootstrap, rate_interval


def trees(count: int, rng: random.Random, discrete: bool) -> list[list[NodeAggregate]]:
    """Root trees of 1-4 scored nodes, each node's own score a mean of 1-5 step scores."""
    out = []
    for index in range(count):
        tree = []
        for node in range(rng.randint(1, 4)):
            steps = rng.randint(1, 5)
            if discrete:
                own = sum(rng.randrange(5) / 4 for _ in range(steps)) / steps
            else:
                own = rng.random()
            parent = None if node == 0 else f"r{index}"
            node_aggregate = NodeAggregate(
                f"r{index}n{node}", parent, int(node > 0), "scored", None,
                own, steps, own, steps, True, True, 0, True,
            )  # fmt: skip
            tree.append(node_aggregate)
        out.append(tree)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    bootstrap = Bootstrap(seed=args.seed)
    results: list[dict[str, Any]] = []
    for count in (2_000, 100_000):
        for discrete in (True, False):
            collection = trees(count, rng, discrete)
            started = time.perf_counter()
            bounds = overall_score_interval(collection, "flat", bootstrap)
            results.append({
                "what": "atif_overall_score", "roots": count,
                "scores": "five values" if discrete else "continuous",
                "interval": bounds, "seconds": round(time.perf_counter() - started, 3),
            })  # fmt: skip
        passed = sum(rng.random() < 0.7 for _ in range(count))
        started = time.perf_counter()
        bounds = rate_interval(passed, count, bootstrap)
        results.append({
            "what": "pass_rate", "cases": count, "interval": bounds,
            "seconds": round(time.perf_counter() - started, 3),
        })  # fmt: skip
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
