"""Benchmark: no verdict lost to a flaky judge, with the default settings.

`agentjudge score` over a collection (100 trajectories x 20 steps) against our judge server
answering 10% 429 (with Retry-After), 5% 500, 3% HTTP-200 garbage (no completion: cut-off
JSON, or JSON of another shape), 2% dropped connections and 1% never (a hang),
with nothing but the judge's URL and model given: every other setting is the default. Each
run is seeded (the texts of its steps, hence which calls meet which fault) and compared with
the same collection judged by a server without faults. Prints one JSON line:
{runs, exact_runs, lost_steps, seconds, retries, second_round_steps}; target: every run
exact, no step lost (issue: reliability).

    python bench/fault_soak.py [--runs 20] [--trajectories 100] [--steps 20]
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

from agentjudge.testing import JudgeServer, Script

FAULTS = {"429": 0.10, "500": 0.05, "garbage": 0.03, "drop": 0.02, "hang": 0.01}


def collection(folder: Path, seed: int, trajectories: int, steps: int) -> Path:
    for index in range(trajectories):
        out = [{"step_id": 1, "source": "user", "message": f"seed {seed} task {index} [[score=1]]"}]
        for step_id in range(2, steps + 1):
            score = (index * 7 + step_id * 3 + seed) % 10 / 10
            out.append(
                {
                    "step_id": step_id,
                    "source": "agent",
                    "message": f"seed {seed} step {step_id} [[score={score}]]"
                    " [[category=reasoning_failure]]",
                }
            )
        document = {
            "schema_version": "ATIF-v1.7",
            "session_id": f"s{seed}-{index}",
            "agent": {"name": "soak", "version": "1"},
            "steps": out,
        }
        (folder / f"t{index}.json").write_text(json.dumps(document))
    return folder


def score(runs: Path, url: str, out: Path, cache_dir: Path) -> dict[str, Any]:
    env = {**os.environ, "AGENTJUDGE_CACHE_DIR": str(cache_dir)}
    command = [
        sys.executable, "-m", "agentjudge", "score", str(runs), "--judge-url", url,
        "--judge-model", "judge", "--quiet", "-o", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    if not out.exists():
        raise SystemExit(f"score wrote nothing (exit {done.returncode}): {done.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--trajectories", type=int, default=100)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    exact = lost = retries = second = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for seed in range(args.runs):
            runs = root / f"runs{seed}"
            runs.mkdir()
            collection(runs, seed, args.trajectories, args.steps)
            with JudgeServer(keep_log=False) as clean:
                expected = score(
                    runs, clean.base_url, root / f"clean{seed}.json", root / f"c{seed}"
                )
            script = Script(faults=dict(FAULTS), retry_after=0.5, hang_seconds=120)  # type: ignore[arg-type]
            with JudgeServer(script, keep_log=False) as flaky:
                got = score(runs, flaky.base_url, root / f"flaky{seed}.json", root / f"f{seed}")
            same = (
                got["status"] == "succeeded"
                and got["metrics"] == expected["metrics"]
                and got["run_metadata"]["atif_complete"]
            )
            exact += same
            lost += sum(got.get("step_errors", {}).values())
            retries += got["judge"]["retries"]
            second += got["judge"]["second_round"]["steps"]
            print(
                f"run {seed}: {'exact' if same else 'NOT exact'} "
                f"({got['status']}, retries {got['judge']['retries']})",
                file=sys.stderr,
            )
    print(
        json.dumps(
            {
                "runs": args.runs,
                "exact_runs": exact,
                "lost_steps": lost,
                "seconds": round(time.perf_counter() - started, 1),
                "retries": retries,
                "second_round_steps": second,
            }
        )
    )


if __name__ == "__main__":
    main()
