"""Benchmark: `agentjudge grade` over N cases with deterministic checks only, via the real CLI.

The dataset and traces are graph-agents-cli files (the traces embed no cases; `--dataset`
plans them). Every check kind appears; a tenth of the cases fail (`--fail-rate`), so the
results carry reasons. Prints JSON {cases, fail_rate, seconds, cases_per_second,
peak_rss_mb}; the time is the whole command (start-up, loading, checks, writing the results
file). Targets on a 2-core machine (issue 21, at `--cases 100000 --fail-rate 0.2`):
>= 25,000 cases/s and a peak RSS <= 250 MB.

    python bench/grade_throughput.py [--cases 100000] [--fail-rate 0.1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import measure

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument(
        "--fail-rate", type=float, default=0.1, help="the fraction of cases that fail (0.1)"
    )
    args = parser.parse_args()
    if not 0 < args.fail_rate <= 1:
        parser.error("--fail-rate: a fraction in (0, 1]")
    fail_every = round(1 / args.fail_rate)
    with tempfile.TemporaryDirectory(prefix="agentjudge-bench-") as tmp:
        folder = Path(tmp)
        pairs = [case_and_trace(i, fail_every) for i in range(args.cases)]
        (folder / "dataset.json").write_text(json.dumps({"cases": [c for c, _ in pairs]}))
        traces = {"dataset_hash": None, "traces": [t for _, t in pairs]}
        (folder / "traces.json").write_text(json.dumps(traces))
        del pairs, traces
        command = [
            sys.executable, "-m", "agentjudge", "grade", "--quiet",
            "--traces", str(folder / "traces.json"), "--dataset", str(folder / "dataset.json"),
            "--config", str(folder / "eval_config.yaml"), "--output", str(folder / "results.json"),
        ]  # fmt: skip
        (folder / "eval_config.yaml").write_text("judge: {provider: null}\n")
        done = measure(command)
        if done.returncode != 1:  # some cases fail: the gate fails
            sys.exit(f"grade exited {done.returncode}: {done.tail()}")
        summary = json.loads((folder / "results.json").read_text())["summary"]
        if summary["failed"] != sum(
            1 for i in range(args.cases) if i % fail_every == fail_every - 1
        ):
            sys.exit(f"unexpected summary {summary}")
    print(
        json.dumps(
            {
                "cases": args.cases,
                "fail_rate": round(1 / fail_every, 4),
                "seconds": round(done.seconds, 3),
                "cases_per_second": round(args.cases / done.seconds),
                "peak_rss_mb": done.peak_rss_mb,
            }
        )
    )


if __name__ == "__main__":
    main()
