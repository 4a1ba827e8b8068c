"""Benchmark: `agentjudge score` locally and on a two-node Ray cluster on this machine.

The 2,000 x 25 collection of `score_collection.py` is scored against the test judge server
(50 ms a call, 64 calls at once) twice, each run with a verdict store of its own: here, and
with `--ray` on a cluster of two nodes (one CPU each) that the benchmark starts on
loopback first (its start is not timed: `--ray-address` joins an existing cluster) and stops after.
Prints one JSON line {local_seconds, ray_seconds, local_efficiency, ray_efficiency,
judge_calls_local, judge_calls_ray, same_metrics, same_steps}; efficiency =
(judge calls * latency / capacity) / seconds, the share of the judge's capacity the run
used. Target (issue 20): ray_efficiency >= 0.75, identical metrics and step scores.

    python bench/ray_scoring.py [--trajectories 2000] [--steps 25] [--latency 0.05]
                                [--capacity 64]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentjudge.testing.ray_cluster import LocalRayCluster, ray_env
from common import byte_compiled, judge_server
from score_collection import trajectory


def score(runs: Path, url: str, capacity: int, folder: Path, label: str, *extra: str) -> float:
    """Seconds the run took; its results are `folder/label.json`."""
    command = [
        sys.executable, "-m", "agentjudge", "score", str(runs), "--quiet",
        "--judge-url", url, "--judge-model", "bench", "--concurrency", str(capacity),
        "--cache", str(folder / f"{label}.sqlite"), "--set", "judge_max_attempts=20",
        "-o", str(folder / f"{label}.json"), *extra,
    ]  # fmt: skip
    env = ray_env({"PYTHONPATH": os.pathsep.join(sys.path)})
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{label} run failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds


def steps(document: dict[str, Any]) -> list[Any]:
    return [
        (node["file"], step["step_id"], step["score"], step["category"])
        for tree in document["trajectories"]
        for node in tree["nodes"]
        for step in node["steps"]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trajectories", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--capacity", type=int, default=64)
    args = parser.parse_args()
    byte_compiled()  # as an installed wheel would be, on the driver and every worker
    with (
        tempfile.TemporaryDirectory(prefix="agentjudge-ray-bench-") as tmp,
        judge_server(args.latency, args.capacity) as url,
    ):
        folder = Path(tmp)
        runs = folder / "runs"
        runs.mkdir()
        for index in range(args.trajectories):
            (runs / f"t{index:05d}.json").write_text(json.dumps(trajectory(index, args.steps)))
        local_seconds = score(runs, url, args.capacity, folder, "local")
        with LocalRayCluster(folder / "ray", nodes=2, cpus=1) as cluster:
            ray_seconds = score(
                runs, url, args.capacity, folder, "ray", "--ray-address", cluster.address
            )
        local = json.loads((folder / "local.json").read_text())
        on_ray = json.loads((folder / "ray.json").read_text())
    calls_local, calls_ray = local["judge"]["calls"], on_ray["judge"]["calls"]

    def efficiency(calls: int, seconds: float) -> float:
        return float(round(calls * args.latency / args.capacity / seconds, 3))

    print(
        json.dumps(
            {
                "local_seconds": round(local_seconds, 2),
                "ray_seconds": round(ray_seconds, 2),
                "local_efficiency": efficiency(calls_local, local_seconds),
                "ray_efficiency": efficiency(calls_ray, ray_seconds),
                "judge_calls_local": calls_local,
                "judge_calls_ray": calls_ray,
                "same_metrics": local["metrics"] == on_ray["metrics"],
                "same_steps": steps(local) == steps(on_ray),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
