"""Benchmark: what the providers' prompt caches serve of a scoring run (issue 37, item 1).

Scores the bench collection (`score_collection.py`'s trajectories, 200 roots x 25 steps by
default) against the Anthropic and OpenAI API mimics, which count cache use as each API
documents it, and prints one JSON line per judge: calls, input tokens, the cache's reads
and writes, the read fraction of the input, the run's price (genai-prices) and seconds.

    python bench/prompt_cache.py [--trajectories 200] [--steps 25]
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

from agentjudge.testing import JudgeServer
from score_collection import trajectory

JUDGES = (
    ("anthropic", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ("openai", "gpt-5-mini", "OPENAI_API_KEY"),
)
KEY = "sk-bench-0123456789"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trajectories", type=int, default=200)
    parser.add_argument("--steps", type=int, default=25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentjudge-cache-") as tmp:
        runs = Path(tmp) / "runs"
        runs.mkdir()
        for i in range(args.trajectories):
            (runs / f"t{i}.json").write_text(json.dumps(trajectory(i, args.steps)))
        for provider, model, key_env in JUDGES:
            out = Path(tmp) / f"{provider}.json"
            with JudgeServer(mimic=provider, api_key=KEY) as server:
                started = time.monotonic()
                done = subprocess.run(
                    [
                        sys.executable, "-m", "agentjudge", "score", str(runs),
                        "--judge", provider, "--judge-model", model,
                        "--judge-url", server.base_url, "-o", str(out), "--no-cache", "--quiet",
                    ],
                    capture_output=True, text=True, env={**os.environ, key_env: KEY},
                )  # fmt: skip
                seconds = time.monotonic() - started
            if done.returncode not in (0, 1):
                sys.exit(f"score failed ({done.returncode}): {done.stderr[-2000:]}")
            judge = json.loads(out.read_text())["judge"]
            read = judge.get("cache_read_tokens", 0)
            line = {
                "judge": f"{provider}/{model}",
                "calls": judge["calls"],
                "input_tokens": judge["input_tokens"],
                "cache_read_tokens": read,
                "cache_write_tokens": judge.get("cache_write_tokens", 0),
                "read_fraction": round(read / judge["input_tokens"], 3),
                "usd": judge.get("cost", {}).get("usd"),
                "seconds": round(seconds, 1),
            }
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
