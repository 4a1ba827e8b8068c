"""Benchmark: kill -9 part way, run the same command again; only calls in flight repeat.

The 2,000-step collection of `fault_soak.py` is scored against our judge server (a 20 ms
answer, so a run takes several seconds); each run is killed with SIGKILL once a seeded
random share (10-90%) of its calls were answered, then the same command runs to the end.
A call repeats when the killed run got its answer and the re-run asked again: at most the
calls in flight and those answered in the store's last commit window (20 ms) may. Prints one
JSON line: {runs, exact_runs, max_repeated, repeated, killed_at}; target: every run exact,
max_repeated at most the concurrency limit plus one commit window's answers.

    python bench/kill_rerun.py [--runs 10] [--trajectories 100] [--steps 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentjudge.testing import JudgeServer, Script
from fault_soak import collection


def command(runs: Path, url: str, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "agentjudge", "score", str(runs), "--judge-url", url,
        "--judge-model", "judge", "--quiet", "-o", str(out),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--trajectories", type=int, default=100)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    draw = random.Random(16)
    exact = 0
    repeated: list[int] = []
    killed_at: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "runs").mkdir()
        runs = collection(root / "runs", 0, args.trajectories, args.steps)
        with JudgeServer(Script(latency=0.02)) as judge:
            env = {**os.environ, "AGENTJUDGE_CACHE_DIR": str(root / "clean-cache")}
            subprocess.run(command(runs, judge.base_url, root / "clean.json"), env=env, check=True)
            expected = json.loads((root / "clean.json").read_text())
            calls = len(judge.log)
            for run in range(args.runs):
                judge.log.clear()
                env["AGENTJUDGE_CACHE_DIR"] = str(root / f"cache{run}")
                out = root / f"out{run}.json"
                share = draw.uniform(0.1, 0.9)
                killed = subprocess.Popen(command(runs, judge.base_url, out), env=env)
                while sum(r.outcome == "ok" for r in list(judge.log)) < share * calls:
                    time.sleep(0.005)
                killed.send_signal(signal.SIGKILL)
                killed.wait()
                answered = {r.body_sha256 for r in list(judge.log) if r.outcome == "ok"}
                first = len(judge.log)
                subprocess.run(command(runs, judge.base_url, out), env=env, check=True)
                again = [r.body_sha256 for r in list(judge.log)[first:]]
                repeated.append(sum(digest in answered for digest in again))
                killed_at.append(round(share, 2))
                got: dict[str, Any] = json.loads(out.read_text())
                same = (
                    got["metrics"] == expected["metrics"] and got["run_metadata"]["atif_complete"]
                )
                exact += same
                print(
                    f"run {run}: killed at {share:.0%}, {repeated[-1]} calls repeated, "
                    f"{'exact' if same else 'NOT exact'}",
                    file=sys.stderr,
                )
    print(
        json.dumps(
            {
                "runs": args.runs,
                "exact_runs": exact,
                "max_repeated": max(repeated),
                "repeated": repeated,
                "killed_at": killed_at,
            }
        )
    )


if __name__ == "__main__":
    main()
