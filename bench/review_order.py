"""Benchmark: how many labels a review needs before the step-accuracy interval is narrower
than 0.2, in the review order (review/order.py) against a random order.

Who&When's human labels stand in for the reviewer: converted (`agentjudge convert
who-and-when`), the steps before each run's decisive mistake are labelled pass, the
mistake fail, the steps after it unlabelled (docs/calibration.md). The runs are scored
with the fake judge (`agentjudge score --judge fake`, its scores a hash of the request:
the embedded judge takes 5-20 s a step on a loaded 2-core machine, some 4,000 steps here),
`--samples 3`. Then, per seed, the reviewer walks each order and labels every item the
human labels cover (the others are passed over); after each label the weighted step
accuracy and its 95% bootstrap interval over runs are computed as `calibrate --labels`
does (review/agreement.py). The random order is every scored item in one seeded shuffle
(its labels weighted by part too: a uniform sample, post-stratified). `interleaved`, which
`review` does not do, deals the random part in between the hard ones, one for one.

Reported per order and seed: `labels`, the labels given before an interval for the whole
results is narrower than `--width`: the weighted figure's interval stands for the parts
labelled (`covered`, a share of the scored items), and the items of the parts not labelled
yet could be anything, so its width is covered * (high - low) + (1 - covered); and
`labels_any_coverage`, the first label count at which the interval itself is that narrow,
whatever it covers. Null when never.

Prints one JSON object. `--files N` takes the first N runs in name order (all 184 by
default); `--stride K` checks the interval every K labels, then each label of the stride
where it first is narrow enough.

    .venv/bin/python bench/review_order.py [--seeds 0,1,2,3,4] [--width 0.2] [--files 184]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WHO_AND_WHEN = ROOT / "tests" / "fixtures" / "who-and-when"


def agentjudge(*args: str | Path, cwd: Path) -> None:
    """Run the CLI, or exit saying why it failed."""
    command = [sys.executable, "-m", "agentjudge", *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[2:4])} failed ({done.returncode}): {done.stderr[-2000:]}")


def human_labels(folder: Path, names: list[str]) -> dict[str, bool]:
    """Who&When's step labels as item keys (roots as `score` names them: relative paths)."""
    labels = json.loads((folder / "labels.json").read_text())["trajectories"]
    return {
        f"{name}##{step['step_id']}": step["pass"]
        for name in names
        for step in labels[name]["steps"]
        if step.get("pass") is not None
    }


def walk(
    order: list[Any], truth: dict[str, bool], items: list[Any], width: float, stride: int
) -> dict[str, Any]:
    """Label along `order` (pairs of item and part); the label counts at which the step
    accuracy interval first gets narrower than `width`, with all parts covered and with any.
    The interval is computed every `stride` labels, and at each label of the stride where
    it first is narrow enough (it narrows as labels come, nearly always)."""
    from agentjudge.review.agreement import step_accuracy
    from agentjudge.review.labels import ReviewLabel

    given = [
        ReviewLabel(
            key=item.key, part=part, passed=truth[item.key], score=None, category=None,
            note=None, reviewer="who-and-when", at="2026-12-05T00:00:00Z",
        )
        for item, part in order
        if item.key in truth and item.score is not None
    ]  # fmt: skip

    def figure(n: int) -> tuple[Any, ...]:
        return step_accuracy(items, {label.key: label for label in given[:n]})

    def narrow(shown: tuple[Any, ...], whole: bool) -> bool:
        """The interval narrower than `width`; for the `whole` results, with the items of
        the parts not labelled yet counted as unknown (anywhere in 0..1)."""
        _, interval, covered = shown
        if interval is None:
            return False
        spread = interval[1] - interval[0]
        return bool((covered * spread + (1 - covered) if whole else spread) < width)

    found: dict[str, Any] = {"labels": None, "labels_any_coverage": None}
    first = 10  # fewer than ten labels are never a figure
    for whole, name in ((False, "labels_any_coverage"), (True, "labels")):
        for n in range(first, len(given) + stride, stride):
            n = min(n, len(given))
            if narrow(figure(n), whole):
                n = next(
                    m for m in range(max(first, n - stride + 1), n + 1) if narrow(figure(m), whole)
                )
                found[name] = n
                first = n
                break
    if found["labels"] is not None:
        value, interval, _ = figure(found["labels"])
        found["accuracy"], found["interval"] = round(value, 4), interval
    else:
        value, interval, covered = figure(len(given))
        found["all_labels"] = {
            "labels": len(given), "accuracy": value, "interval": interval, "covered": covered,
        }  # fmt: skip
    return found


ORDERS = ("review_order", "random_order", "interleaved")


def interleaved(order: list[Any]) -> list[Any]:
    """Not what `review` does: the review order with the random part dealt in between, one
    random item after each hard one (each part still in its shuffled order), to see what
    covering the whole results early would save."""
    hard = [pair for pair in order if pair[1] != "random"]
    rest = [pair for pair in order if pair[1] == "random"]
    out: list[Any] = []
    for index in range(max(len(hard), len(rest))):
        out.extend(part[index] for part in (hard, rest) if index < len(part))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--width", type=float, default=0.2)
    parser.add_argument("--files", type=int, default=184)
    parser.add_argument("--stride", type=int, default=5, help="labels between two checks")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s]
    from agentjudge.review.items import load_items
    from agentjudge.review.order import part_of, review_order

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="review-order-") as scratch:
        folder = Path(scratch) / "ww"
        agentjudge("convert", "who-and-when", WHO_AND_WHEN, folder, cwd=Path(scratch))
        names = sorted(json.loads((folder / "labels.json").read_text())["trajectories"])
        names = names[: args.files]
        agentjudge(
            "score", *names, "--judge", "fake", "--samples", "3", "--temperature", "0.7",
            "--no-cache", "--quiet", "-o", "results.json", cwd=folder,
        )  # fmt: skip
        items, _ = load_items(folder / "results.json")
        truth = human_labels(folder, names)
        scored = [item for item in items if item.score is not None]
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in ORDERS}
        for seed in seeds:
            ours = review_order(items, seed=seed)
            shuffled = list(scored)
            random.Random(seed).shuffle(shuffled)
            orders = {
                "review_order": ours,
                "random_order": [(item, part_of(item)) for item in shuffled],
                "interleaved": interleaved(ours),
            }
            for name, order in orders.items():
                runs[name].append(
                    {"seed": seed, **walk(order, truth, items, args.width, args.stride)}
                )
    parts: dict[str, int] = {}
    labelled: dict[str, int] = {}
    for item in scored:
        parts[part_of(item)] = parts.get(part_of(item), 0) + 1
        if item.key in truth:
            labelled[part_of(item)] = labelled.get(part_of(item), 0) + 1
    print(
        json.dumps(
            {
                "judge": "fake (--samples 3)",
                "runs": len(names),
                "items": len(items),
                "scored": len(scored),
                "human_labels": sum(1 for item in scored if item.key in truth),
                "parts": parts,
                "human_labels_by_part": labelled,
                "width": args.width,
                "orders": runs,
                "seconds": round(time.monotonic() - started, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
