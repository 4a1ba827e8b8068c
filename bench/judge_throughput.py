"""Benchmark: N judge calls against the test judge server (latency L, capacity C).

Prints JSON {requests, seconds, ideal_seconds (= N*L/C), efficiency (= ideal/seconds),
client_cpu_ms_per_call, retries, lost}. The server runs in its own process so the client's
CPU time is its own. Targets (2 cores): efficiency >= 0.90 and <= 0.5 ms CPU per call at
client concurrency = C; with concurrency 256 against C=64 (a 429 storm) efficiency >= 0.80
and lost = 0.

    python bench/judge_throughput.py [--requests 20000] [--latency 0.05] [--capacity 64]
                                     [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from agentjudge.judge import JudgeClient, JudgeRequest
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.request import Message
from common import judge_server


async def run(url: str, args: argparse.Namespace) -> dict[str, float | int]:
    provider = OpenAICompatible(url, "bench-judge")
    requests = [
        JudgeRequest((Message("user", f"step {i} [[score=0.5]]"),), "bench-v1")
        for i in range(args.requests)
    ]
    async with JudgeClient(
        provider, concurrency=args.concurrency, max_attempts=50, initial_backoff=0.02
    ) as client:
        cpu, wall = time.process_time(), time.perf_counter()
        outcomes = await asyncio.gather(*(client.judge(r) for r in requests))
        seconds = time.perf_counter() - wall
        cpu = time.process_time() - cpu
    ideal = args.requests * args.latency / args.capacity
    return {
        "requests": args.requests,
        "seconds": round(seconds, 3),
        "ideal_seconds": round(ideal, 3),
        "efficiency": round(ideal / seconds, 3),
        "client_cpu_ms_per_call": round(cpu * 1000 / args.requests, 3),
        "retries": client.stats.retries,
        "lost": sum(o.verdict is None for o in outcomes),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--capacity", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    with judge_server(args.latency, args.capacity) as url:
        print(json.dumps(asyncio.run(run(url, args))))


if __name__ == "__main__":
    main()
