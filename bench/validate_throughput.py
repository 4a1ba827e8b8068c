"""Benchmark: validate a folder of N synthetic ATIF trajectories with the real CLI.

Prints JSON {files, steps, seconds, steps_per_second, peak_rss_mb}; peak_rss_mb is the
largest sampled sum over the CLI process and its worker processes. Targets on a 2-core
machine: >= 50,000 steps/s and peak RSS <= 300 MB (issue: the foundation).

    python bench/validate_throughput.py [--files 20000] [--steps 30]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import measure


def trajectory(index: int, steps: int) -> dict[str, Any]:
    """A realistic agent run: a task, then agent steps with a tool call and its result."""
    out: list[dict[str, Any]] = [
        {
            "step_id": 1,
            "timestamp": "2026-07-12T12:00:00Z",
            "source": "user",
            "message": f"Task {index}: fix the failing test in module_{index % 97}.py and explain.",
        }
    ]
    for step_id in range(2, steps + 1):
        call = f"call_{step_id}"
        out.append(
            {
                "step_id": step_id,
                "timestamp": f"2026-07-12T12:00:{step_id % 60:02d}Z",
                "source": "agent",
                "model_name": "gpt-test",
                "message": f"Step {step_id}: I will inspect the code and run the tests again.",
                "reasoning_content": "The traceback points at the parser; read it first. " * 2,
                "tool_calls": [
                    {
                        "tool_call_id": call,
                        "function_name": "bash",
                        "arguments": {"command": f"pytest -x tests/test_{step_id}.py"},
                    }
                ],
                "observation": {
                    "results": [{"source_call_id": call, "content": "1 failed, 12 passed " * 8}]
                },
                "metrics": {"prompt_tokens": 1200 + step_id, "completion_tokens": 80},
            }
        )
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": f"session-{index}",
        "trajectory_id": f"traj-{index}",
        "agent": {"name": "bench-agent", "version": "1.0", "model_name": "gpt-test"},
        "steps": out,
        "final_metrics": {"total_steps": steps},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentjudge-bench-") as tmp:
        folder = Path(tmp)
        for index in range(args.files):
            sub = folder / f"shard{index % 100:03d}"
            sub.mkdir(exist_ok=True)
            (sub / f"t{index:06d}.json").write_text(json.dumps(trajectory(index, args.steps)))
        command = [
            sys.executable, "-m", "agentjudge", "validate", "--quiet",
            "--max-trajectory-files", str(args.files), str(folder),
        ]  # fmt: skip
        done = measure(command, interval=0.05)
    if done.returncode != 0:
        sys.exit(f"validate failed ({done.returncode}): {done.tail()}")
    steps = args.files * args.steps
    print(
        json.dumps(
            {
                "files": args.files,
                "steps": steps,
                "seconds": round(done.seconds, 3),
                "steps_per_second": round(steps / done.seconds),
                "peak_rss_mb": done.peak_rss_mb,
            }
        )
    )


if __name__ == "__main__":
    main()
