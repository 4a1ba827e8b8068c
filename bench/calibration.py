"""Benchmark: how well a judge finds where Who&When's failed multi-agent runs went wrong.

Converts the Who&When set (`agentjudge convert who-and-when`, or takes a converted folder
with `--converted`), picks a subset (`--files N`: the N runs with fewest steps, ties by
name; or `--names hand-crafted-1,algorithm-generated-57`), writes its labels beside the
converted ones and runs `agentjudge calibrate` on them with the given judge (`--judge`,
`--judge-url`, `--judge-model` as for `score`), once per decisive rule (`--rules`, all
three by default) over one verdict store made for the run: the steps are judged once, and
each rule's figures come from the same verdicts.

Prints one JSON line {files, names, steps, rules: {rule: {labelled_steps, agent_accuracy,
decisive_step_accuracy, step_accuracy, kappa, intervals, no_prediction, unscored_steps,
calls, seconds, judge, peak_rss_mb}}}. Expect low figures: the paper's best
method (GPT-4o) reached 53.5% agent-level and 14.2% step-level accuracy. A run the judge
could not score (`skip_failed_trajectory`) counts as no prediction, its steps in
`unscored_steps`. With the embedded judge (`--judge local`) each step is a call of a few
seconds on 2 cores: `--files 3` (the shortest runs, 5 steps each) takes a few minutes.

    python bench/calibration.py [--files 3 | --names a,b] --judge local
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import measure

ROOT = Path(__file__).resolve().parent.parent
WHO_AND_WHEN = ROOT / "tests" / "fixtures" / "who-and-when"
RULES = ("first_below_threshold", "lowest_score", "judge_pick")
FIGURES = ("agent_accuracy", "decisive_step_accuracy", "step_accuracy", "kappa")


def convert(source: Path, out: Path) -> None:
    """`agentjudge convert who-and-when source out`, or exit saying why not."""
    command = [sys.executable, "-m", "agentjudge", "convert", "who-and-when", str(source), str(out)]
    done = measure(command)
    if done.returncode != 0:
        sys.exit(f"convert failed ({done.returncode}): {done.tail()}")


def subset(labels: dict[str, Any], folder: Path, files: int, names: list[str]) -> list[str]:
    """The labels' keys to calibrate on: the named runs, else the `files` shortest."""
    if names:
        keys = [f"trajectories/{name}.json" for name in names]
        missing = [k for k in keys if k not in labels["trajectories"]]
        if missing:
            sys.exit(f"not in the converted set: {', '.join(missing)}")
        return keys

    def steps(key: str) -> int:
        return len(json.loads((folder / key).read_text())["steps"])

    return sorted(labels["trajectories"], key=lambda key: (steps(key), key))[:files]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=WHO_AND_WHEN)
    parser.add_argument("--converted", type=Path, help="a converted folder (else convert)")
    parser.add_argument("--files", type=int, default=3, help="the N runs with fewest steps")
    parser.add_argument("--names", default="", help="comma-separated run names instead")
    parser.add_argument("--judge", default="local")
    parser.add_argument("--judge-url")
    parser.add_argument("--judge-model")
    parser.add_argument("--rules", default=",".join(RULES), help="decisive rules to compare")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.converted or Path(scratch) / "who-and-when"
        if args.converted is None:
            convert(args.source, folder)
        labels = json.loads((folder / "labels.json").read_text())
        names = [n for n in args.names.split(",") if n]
        keys = subset(labels, folder, args.files, names)
        chosen = folder / "bench-labels.json"
        picked = {key: labels["trajectories"][key] for key in keys}
        chosen.write_text(json.dumps({**labels, "trajectories": picked}))
        steps = sum(len(json.loads((folder / key).read_text())["steps"]) for key in keys)
        command = [
            sys.executable, "-m", "agentjudge", "calibrate", str(chosen), "--json", "--quiet",
            "--judge", args.judge, "--set", "partial_result_policy=skip_failed_trajectory",
            "--cache", str(Path(scratch) / "verdicts.sqlite"),
        ]  # fmt: skip
        for flag, value in (("--judge-url", args.judge_url), ("--judge-model", args.judge_model)):
            if value:
                command += [flag, value]
        rules = {rule: run_rule(command, rule) for rule in args.rules.split(",") if rule}
    print(
        json.dumps(
            {
                "files": len(keys),
                "names": [Path(key).stem for key in keys],
                "steps": steps,
                "rules": rules,
            }
        )
    )


def run_rule(command: list[str], rule: str) -> dict[str, Any]:
    """Calibrate under one decisive rule. The verdict store is shared between rules, so
    only the first run judges the steps; later ones add their own calls (judge_pick)."""
    done = measure([*command, "--set", f"decisive_rule={rule}"])
    if done.returncode != 0:
        sys.exit(f"calibrate failed ({done.returncode}): {done.tail()}")
    report = json.loads(done.stdout)
    figures = report["figures"]
    return {
        "labelled_steps": figures["step_accuracy"]["steps"],
        **{name: figures[name]["value"] for name in FIGURES},
        "intervals": {name: figures[name]["interval"] for name in FIGURES},
        "no_prediction": figures["agent_accuracy"]["no_prediction"],
        "unscored_steps": report["unscored_steps"],
        "calls": report["judge_usage"]["calls"],
        "seconds": round(done.seconds, 1),
        "judge": report["judge"],
        "peak_rss_mb": done.peak_rss_mb,
    }


if __name__ == "__main__":
    main()
