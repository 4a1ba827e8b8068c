"""Benchmark: the embedded judge's speed on `examples/` and its verdicts on good/bad pairs.

Two runs of `agentjudge score --judge local --no-cache`, each with one server start:

- `examples`: every step of `examples/trajectories/`, as `make demo` scores them: the judge's
  calls, its mean seconds per call (the client's own latency figure: from the request sent
  to the verdict parsed), and the run's wall time;
- `pairs`: `bench/data/judge_pairs.json`, pairs of one task and two versions of the agent's
  one step, a plainly right one and a plainly wrong one. A pair is ranked right when the
  good step scores above the bad one; a tie or an unscored step counts as wrong.

Prints one JSON line {prompt_version, examples: {calls, mean_seconds_per_call,
min_seconds_per_call, runs: [{mean_seconds_per_call, seconds, load_average}]}, pairs:
{pairs, ranked_right, fraction, ties, unscored, wrong}, peak_rss_mb}; with `--repeat N` the
examples are scored N times (a server start each) and `mean_seconds_per_call` is the
median of the runs'. `load_average` is the one-minute load average at a run's start and
end: the machine is shared, and a call's seconds are its prompt's new tokens over the
speed its two cores have left. peak_rss_mb is the most memory any run used, the model's
server included. Targets (issue 21): mean seconds per call <= 3 on this machine,
fraction >= 0.8.

    python bench/local_judge.py [--part examples|pairs|both] [--only name,name] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import measure

ROOT = Path(__file__).resolve().parent.parent
PAIRS = Path(__file__).resolve().parent / "data" / "judge_pairs.json"


def score(folder: Path, out: Path, *extra: str) -> tuple[dict[str, Any], float, float]:
    """One fresh scoring run of `folder`: its results, wall seconds and peak memory (MB)."""
    command = [
        sys.executable, "-m", "agentjudge", "score", str(folder), "--judge", "local",
        "--no-cache", "--quiet", "-o", str(out), *extra,
    ]  # fmt: skip
    done = measure(command)
    if done.returncode not in (0, 1):
        sys.exit(f"score failed ({done.returncode}): {done.tail()}")
    return json.loads(out.read_text()), done.seconds, done.peak_rss_mb


def step(number: int, version: dict[str, Any]) -> dict[str, Any]:
    """One version of the pair's agent step as an ATIF step, its tool call and result
    included when it made one."""
    data: dict[str, Any] = {"step_id": number, "source": "agent", "message": version["message"]}
    if "tool" in version:
        call = {"tool_call_id": "c1", "function_name": version["tool"]}
        data["tool_calls"] = [{**call, "arguments": version["arguments"]}]
        result = {"source_call_id": "c1", "content": version["output"]}
        data["observation"] = {"results": [result]}
    return data


def pair_trajectory(session: str, task: str, version: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": session,
        "agent": {"name": "bench-agent", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": task}, step(2, version)],
    }


def run_examples(tmp: Path, repeat: int) -> tuple[dict[str, Any], float]:
    runs: list[dict[str, Any]] = []
    calls: set[int] = set()
    peak = 0.0
    for _ in range(repeat):
        load = os.getloadavg()[0]
        results, seconds, rss = score(ROOT / "examples" / "trajectories", tmp / "examples.json")
        judge = results["judge"]
        latency = judge["mean_latency_ms"]
        calls.add(judge["calls"])
        peak = max(peak, rss)
        runs.append(
            {
                "mean_seconds_per_call": round(latency / 1000, 2) if latency is not None else None,
                "seconds": round(seconds, 1),
                "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
            }
        )
    per_call: list[float] = [
        r["mean_seconds_per_call"] for r in runs if r["mean_seconds_per_call"] is not None
    ]
    figures = {
        "calls": calls.pop() if len(calls) == 1 else sorted(calls),
        "mean_seconds_per_call": round(statistics.median(per_call), 2) if per_call else None,
        "min_seconds_per_call": min(per_call, default=None),
        "runs": runs,
    }
    return figures, peak


def run_pairs(tmp: Path, only: set[str] | None) -> tuple[dict[str, Any], float, str]:
    pairs = [p for p in json.loads(PAIRS.read_text())["pairs"] if not only or p["name"] in only]
    folder = tmp / "pairs"
    folder.mkdir()
    for pair in pairs:
        for side in ("good", "bad"):
            document = pair_trajectory(f"{pair['name']}.{side}", pair["task"], pair[side])
            (folder / f"{pair['name']}.{side}.json").write_text(json.dumps(document))
    # only the agent's step is scored, and no failure categorized: the ranking needs no more
    results, _, rss = score(
        folder, tmp / "pairs.json", "--set", "scored_frames=agent", "--set", "failure_threshold=0"
    )
    scores = {
        node["session_id"]: node["steps"][0]["score"]
        for tree in results["trajectories"]
        for node in tree["nodes"]
    }
    right, ties, unscored, wrong = 0, 0, 0, {}
    for pair in pairs:
        good, bad = scores[f"{pair['name']}.good"], scores[f"{pair['name']}.bad"]
        if good is None or bad is None:
            unscored += 1
        elif good > bad:
            right += 1
            continue
        elif good == bad:
            ties += 1
        wrong[pair["name"]] = [good, bad]
    figures = {
        "pairs": len(pairs),
        "ranked_right": right,
        "fraction": round(right / len(pairs), 3) if pairs else None,
        "ties": ties,
        "unscored": unscored,
        "wrong": wrong,
    }
    return figures, rss, results["run_parameters"]["atif_prompt_version"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("examples", "pairs", "both"), default="both")
    parser.add_argument("--only", default="", help="comma-separated pair names")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the examples part")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    report: dict[str, Any] = {}
    peak = 0.0
    with tempfile.TemporaryDirectory(prefix="agentjudge-bench-") as name:
        tmp = Path(name)
        if args.part in ("examples", "both"):
            report["examples"], rss = run_examples(tmp, max(1, args.repeat))
            peak = max(peak, rss)
        if args.part in ("pairs", "both"):
            report["pairs"], rss, report["prompt_version"] = run_pairs(tmp, only)
            peak = max(peak, rss)
    report["peak_rss_mb"] = peak
    print(json.dumps(report))


if __name__ == "__main__":
    main()
