"""Benchmark: does `score --dry-run` foretell the run? Calls, and input tokens.

The collection of `score_collection.py` (2,000 trajectories x 25 steps) is planned with
`agentjudge score --dry-run --json`, then scored for real against the judge server; the
planned step calls are compared with the step calls the run made (categorizations depend
on scores: the plan gives their upper bound), and the planned input tokens with the usage
the judge server reported (a stand-in for a tokenizer: four characters a token). The
estimate is also compared with a real tokenizer, Qwen2.5's as the embedded judge's server
counts (the chat template included; needs agentjudge[local] and its model), over the step
requests of the first `--tokenizer-sample` trajectories.

Prints one JSON line {trajectories, steps, planned, run, step_calls_equal,
tokens_vs_server, tokens_vs_qwen, dry_run_seconds}; target: step_calls_equal, and the
estimate within 10% of the real tokenizer (tokens_vs_qwen); against the server's stand-in
count it reads higher by the difference between the two (issue: plan before judging).

    python bench/dry_run.py [--trajectories 2000] [--steps 25] [--tokenizer-sample 40]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from agentjudge.atif import load_trees
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import resolve_criteria
from agentjudge.scoring.estimate import estimate_plan
from common import judge_server, measure
from score_collection import trajectory


def qwen_ratio(runs: Path, sample: int) -> float | None:
    """Estimated / Qwen2.5-counted input tokens of the step requests of `sample` files."""
    if find_spec("llama_cpp") is None:
        return None
    from agentjudge.judge.model_cache import ensure_model
    from agentjudge.judge.providers.local import LocalJudge

    qwen, _ = LocalJudge(ensure_model()).token_counter()
    files = sorted(runs.glob("*.json"))[:sample]
    config = ScoreConfig.model_validate(
        {"trajectory_path": [str(f) for f in files], "judge": "fake"}
    )
    roots = list(load_trees(config.trajectory_path, config.limits()))
    criteria = resolve_criteria("default")
    estimated = estimate_plan(roots, config, criteria, lambda _: False)
    counted = estimate_plan(roots, config, criteria, lambda _: False, qwen)
    return round(estimated.step_input_tokens / counted.step_input_tokens, 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trajectories", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--tokenizer-sample", type=int, default=40)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="agentjudge-bench-") as tmp,
        judge_server(0.01, 64) as url,
    ):
        folder = Path(tmp)
        runs = folder / "runs"
        runs.mkdir()
        for index in range(args.trajectories):
            (runs / f"t{index:05d}.json").write_text(json.dumps(trajectory(index, args.steps)))
        base = [
            sys.executable, "-m", "agentjudge", "score", str(runs), "--quiet",
            "--judge-url", url, "--judge-model", "bench", "--concurrency", "64",
            "--cache", str(folder / "verdicts.sqlite"), "--set", "judge_max_attempts=20",
        ]  # fmt: skip
        started = time.perf_counter()
        planned_run = measure([*base, "--dry-run", "--json"])
        dry_seconds = time.perf_counter() - started
        if planned_run.returncode != 0:
            sys.exit(f"dry run failed: {planned_run.tail()}")
        planned: dict[str, Any] = json.loads(planned_run.stdout)
        done = measure([*base, "-o", str(folder / "out.json")])
        if done.returncode not in (0, 1):
            sys.exit(f"score failed ({done.returncode}): {done.tail()}")
        judge = json.loads((folder / "out.json").read_text())["judge"]
        qwen = qwen_ratio(runs, args.tokenizer_sample)
    steps = judge["steps_judged"]
    step_tokens = round(judge["input_tokens_per_step"] * steps)
    print(
        json.dumps(
            {
                "trajectories": args.trajectories,
                "steps": args.trajectories * args.steps,
                "planned": {
                    "step_calls": planned["step_calls"],
                    "categorizations_at_most": planned["categorizations_at_most"],
                    "step_input_tokens": planned["step_input_tokens"],
                },
                "run": {
                    "step_calls": steps,
                    "categorization_calls": judge["calls"] - steps,
                    "step_input_tokens": step_tokens,
                },
                "step_calls_equal": planned["step_calls"] == steps,
                "tokens_vs_server": round(planned["step_input_tokens"] / step_tokens, 4),
                "tokens_vs_qwen": qwen,
                "dry_run_seconds": round(dry_seconds, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
