"""Benchmark: `agentjudge score` over N trajectories x S steps against the test judge server.

Prints one JSON line for the first run {steps, seconds, efficiency, bare_client_seconds,
bare_client_efficiency, client_cpu_ms_per_call, judge_calls, input_tokens, output_tokens,
tokens_per_step, shared_prefix_fraction, peak_rss_mb}, then one for the same run again from
the verdict store (judge_calls must be 0). efficiency = (judge_calls * latency / capacity) /
seconds, start-up included. bare_client_* is the same number of calls, as many at a time,
made by a bare aiohttp client against the same server right after the run: the ceiling that
the server, loopback HTTP and asyncio leave on this machine. client_cpu_ms_per_call is the
score process's CPU time per judge call. Targets: efficiency >= 0.85 and peak RSS <= 500 MB
(issues: the scoring job; 21 item 5).

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

from common import Measured, bare_client_seconds, judge_server, measure


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


def run(command: list[str]) -> Measured:
    done = measure(command, interval=0.05)
    if done.returncode not in (0, 1):
        sys.exit(f"score failed ({done.returncode}): {done.tail()}")
    return done


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
                "--judge-url", url, "--judge-model", "bench", "--concurrency",
                str(args.capacity), "--cache", str(folder / "verdicts.sqlite"),
                "--set", "judge_max_attempts=20", "-o", str(out),
            ]  # fmt: skip
            done = run(command)
            result = json.loads(out.read_text())
            judge = result["judge"]
            calls = judge["calls"]
            ideal = calls * args.latency / args.capacity
            figures: dict[str, Any] = {}
            if calls:
                # the same calls from a client that does nothing else: this machine's ceiling
                size = 4 * judge["input_tokens"] // calls
                bare = bare_client_seconds(url, calls, args.capacity, size)
                figures = {
                    "bare_client_seconds": round(bare, 2),
                    "bare_client_efficiency": round(ideal / bare, 3),
                    "client_cpu_ms_per_call": round(1000 * done.cpu_seconds / calls, 3),
                }
            print(
                json.dumps(
                    {
                        "run": label,
                        "steps": judge["steps_judged"],
                        "seconds": round(done.seconds, 2),
                        "efficiency": round(ideal / done.seconds, 3),
                        **figures,
                        "judge_calls": calls,
                        "input_tokens": judge["input_tokens"],
                        "output_tokens": judge["output_tokens"],
                        "tokens_per_step": judge["input_tokens_per_step"],
                        "shared_prefix_fraction": judge["shared_prefix_fraction"],
                        "peak_rss_mb": round(done.peak_rss_mb, 1),
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
