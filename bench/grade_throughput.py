"""Benchmark: `agentjudge grade` over N cases with deterministic checks only, via the real CLI.

The dataset and traces are graph-agents-cli files (the traces embed no cases; `--dataset`
plans them). Every check kind appears; a tenth of the cases fail (`--fail-rate`), so the
results carry reasons. The time is the whole command (start-up, loading, checks, writing the
results file), the peak RSS that of the process and its children. With `--peer`,
graph-agents-cli's own `eval grade` grades the same files, its runs alternating with ours
(it has no quiet flag: its console table, every failed case, is part of its time). Prints
JSON: per tool the seconds of every run and their min/median, cases/s at those, peak RSS
and CPU-seconds. Targets on a 2-core machine (issue 21, at `--cases 100000 --fail-rate
0.2`): >= 25,000 cases/s and a peak RSS <= 250 MB; issue 35: at least 4 times
graph-agents-cli 0.3.1's speed, at most 150 MB.

    python bench/grade_throughput.py [--cases 100000] [--fail-rate 0.1] [--runs 5] \
        [--peer [.venv/peers/graph-agents-cli/bin/graph-agents-cli]]
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

from common import Measured, measure

SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}


def case_and_trace(index: int, fail_every: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """One case (its expectations vary with the index) and the agent's trace for it; one
    case in `fail_every` fails its latency check."""
    kind = index % 5
    expect: dict[str, Any] = {"max_latency_ms": 5000, "max_tokens": 2000}
    response = f"Hello user {index}: order ORD-{index:06d} is on its way."
    calls = [
        {"id": f"c{index}", "name": "get_order", "args": {"id": index, "verbose": False},
         "result": "shipped", "is_error": False},
    ]  # fmt: skip
    if kind == 0:
        expect |= {"contains": ["order", "on its way"], "not_contains": ["refund"]}
    elif kind == 1:
        expect |= {"regex": r"ORD-\d{6}", "tool_calls": [{"name": "get_order"}]}
    elif kind == 2:
        expect |= {"tool_calls": [{"name": "get_order", "args_subset": {"id": index}}]}
    elif kind == 3:
        expect |= {"json_schema": SCHEMA}
        response = json.dumps({"answer": response})
    else:
        expect |= {"no_tool_calls": True}
        calls = []
    latency = 9000 if index % fail_every == fail_every - 1 else 800
    case = {
        "id": f"case-{index:06d}",
        "messages": [{"role": "user", "content": f"Where is my order {index}?"}],
        "expect": expect,
    }
    trace = {
        "case_id": case["id"], "status": "ok", "response": response, "tool_calls": calls,
        "usage": {"input_tokens": 900, "output_tokens": 120}, "latency_ms": latency,
        "error": None, "thread_id": f"t{index}", "run_id": f"r{index}",
    }  # fmt: skip
    return case, trace


PEER = Path(__file__).resolve().parent.parent / ".venv/peers/graph-agents-cli/bin/graph-agents-cli"


def figures(runs: list[Measured], cases: int) -> dict[str, Any]:
    """min/median of a tool's runs: seconds, cases/s at those, peak RSS, CPU-seconds."""
    seconds = [done.seconds for done in runs]
    rss = [done.peak_rss_mb for done in runs]
    cpu = [done.cpu_seconds for done in runs]
    return {
        "seconds": [round(value, 3) for value in seconds],
        "seconds_min_median": [round(min(seconds), 3), round(statistics.median(seconds), 3)],
        "cases_per_second_best_median": [
            round(cases / min(seconds)),
            round(cases / statistics.median(seconds)),
        ],
        "peak_rss_mb_min_median_max": [min(rss), statistics.median(rss), max(rss)],
        "cpu_seconds_min_median": [round(min(cpu), 2), round(statistics.median(cpu), 2)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument(
        "--fail-rate", type=float, default=0.1, help="the fraction of cases that fail (0.1)"
    )
    parser.add_argument("--runs", type=int, default=1, help="runs of each tool (1)")
    parser.add_argument(
        "--peer", nargs="?", const=str(PEER), type=Path,
        help=f"graph-agents-cli to compare with on the same files (bare: {PEER})",
    )  # fmt: skip
    args = parser.parse_args()
    if not 0 < args.fail_rate <= 1:
        parser.error("--fail-rate: a fraction in (0, 1]")
    if args.runs < 1:
        parser.error("--runs: at least 1")
    if args.peer is not None and not args.peer.exists():
        parser.error(f"--peer: no {args.peer} (make .venv/peers/graph-agents-cli/.installed)")
    fail_every = round(1 / args.fail_rate)
    failing = sum(1 for i in range(args.cases) if i % fail_every == fail_every - 1)
    with tempfile.TemporaryDirectory(prefix="agentjudge-bench-") as tmp:
        folder = Path(tmp)
        pairs = [case_and_trace(i, fail_every) for i in range(args.cases)]
        (folder / "dataset.json").write_text(json.dumps({"cases": [c for c, _ in pairs]}))
        traces = {"dataset_hash": None, "traces": [t for _, t in pairs]}
        (folder / "traces.json").write_text(json.dumps(traces))
        del pairs, traces
        (folder / "eval_config.yaml").write_text("judge: {provider: null}\n")
        files = [
            "--traces", str(folder / "traces.json"), "--dataset", str(folder / "dataset.json"),
            "--config", str(folder / "eval_config.yaml"), "--output", str(folder / "results.json"),
        ]  # fmt: skip
        tools = {"agentjudge": [sys.executable, "-m", "agentjudge", "grade", "--quiet", *files]}
        if args.peer is not None:
            tools["graph-agents-cli"] = [str(args.peer), "eval", "grade", *files]
        # outside a project the peer finds no extension; said anyway, for its own grading
        env = dict(os.environ, GRAPH_AGENTS_CLI_DISABLE_OVERRIDES="1", NO_COLOR="1")
        runs: dict[str, list[Measured]] = {name: [] for name in tools}
        for _ in range(args.runs):  # alternating: the machine's speed drifts between runs
            for name, command in tools.items():
                (folder / "results.json").unlink(missing_ok=True)
                done = measure(command, env=env)
                if done.returncode != 1:  # some cases fail: the gate fails
                    sys.exit(f"{name} exited {done.returncode}: {done.tail()}")
                summary = json.loads((folder / "results.json").read_text())["summary"]
                if summary["failed"] != failing:
                    sys.exit(f"{name}: unexpected summary {summary}")
                runs[name].append(done)
    result: dict[str, Any] = {
        "cases": args.cases,
        "fail_rate": round(1 / fail_every, 4),
        "runs": args.runs,
        **{name: figures(done, args.cases) for name, done in runs.items()},
    }
    if args.peer is not None:
        ours, theirs = (statistics.median(d.seconds for d in runs[n]) for n in tools)
        result["speedup_median"] = round(theirs / ours, 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
