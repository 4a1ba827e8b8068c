"""Benchmark: `agentjudge score` over N trajectories x S steps against the test judge server.

Prints one JSON line for the first run {steps, seconds, efficiency, judge_calls,
input_tokens, output_tokens, tokens_per_step, shared_prefix_fraction, peak_rss_mb}, then one
for the same run again from the verdict store (judge_calls must be 0). efficiency =
(judge_calls * latency / capacity) / seconds. Targets: efficiency >= 0.85 and peak RSS
<= 500 MB (issue: the scoring job).

    python bench/score_collection.py [--trajectories 2000] [--steps 25] [--latency 0.05]
                                     [--capacity 64]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import judge_server, measure


def trajectory(index: int, steps: int) -> dict[str, Any]:
    out: list[dict[str, Any]] = [
        {
            "step_id": 1,
            "source": "user",
            "message": f"Task {index}: make the tests pass [[score=1]]",
        }
    ]
    for step_id in range(2, steps + 1):
        score = (index * 7 + step_id * 3) % 10 / 10  # one step in ten under 0.1, ...
        call = f"c{step_id}"
        out.append(
            {
                "step_id": step_id,
                "source": "agent",
                "message": f"Step {step_id}: running the suite again [[score={score}]]"
                " [[category=reasoning_failure]]",
                "tool_calls": [
                    {"tool_call_id": call, "function_name": "bash", "arguments": {"cmd": "pytest"}}
                ],
                "observation": {
                    "results": [{"source_call_id": call, "content": "3 failed, 40 passed " * 5}]
                },
            }
        )
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": f"s-{index}",
        "agent": {"name": "bench-agent", "version": "1"},
        "steps": out,
    }


def run(command: list[str]) -> tuple[float, float]:
    done = measure(command, interval=0.05)
    if done.returncode not in (0, 1):
        sys.exit(f"score failed ({done.returncode}): {done.tail()}")
    return done.seconds, done.peak_rss_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trajectories", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--capacity", type=int, default=64)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="agentjudge-bench-") as tmp,
        judge_server(args.latency, args.capacity) as url,
    ):
        folder = Path(tmp)
        runs = folder / "runs"
        runs.mkdir()
        for index in range(args.trajectories):
            (runs / f"t{index:05d}.json").write_text(json.dumps(trajectory(index, args.steps)))
        for label in ("first", "again"):
            out = folder / f"{label}.json"
            command = [
                sys.executable, "-m", "agentjudge", "score", str(runs), "--quiet",
                "--judge-url", url, "--judge-model", "bench", "--concurrency-limit",
                str(args.capacity), "--cache", str(folder / "verdicts.sqlite"),
                "--judge-max-attempts", "20", "-o", str(out),
            ]  # fmt: skip
            seconds, peak = run(command)
            result = json.loads(out.read_text())
            judge = result["judge"]
            ideal = judge["calls"] * args.latency / args.capacity
            print(
                json.dumps(
                    {
                        "run": label,
                        "steps": judge["steps_judged"],
                        "seconds": round(seconds, 2),
                        "efficiency": round(ideal / seconds, 3),
                        "judge_calls": judge["calls"],
                        "input_tokens": judge["input_tokens"],
                        "output_tokens": judge["output_tokens"],
                        "tokens_per_step": judge["input_tokens_per_step"],
                        "shared_prefix_fraction": judge["shared_prefix_fraction"],
                        "peak_rss_mb": round(peak, 1),
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
