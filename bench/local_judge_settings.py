"""Benchmark: the embedded judge's llama.cpp server settings (threads, batch, context), chosen
by measurement (issue 21).

For each setting this starts the embedded judge's server (llama-cpp-python's, run as
`SERVER_MODULE`) itself, with the arguments `LlamaServer` gives it except the one varied,
then scores `examples/trajectories/` against it as `bench/local_judge.py --part examples`
does (`agentjudge score --judge local --no-cache`, the local judge pointed at that server
through `LocalJudge`'s `server_url`).
The settings alternate, each run `--repeat` times (the order reversed every other round),
since this machine's speed drifts between runs.

Prints one JSON line per run {setting, round, mean_seconds_per_call, calls, seconds,
peak_rss_mb, load_average, scores}, then one per setting {setting, runs,
min_seconds_per_call, median_seconds_per_call, peak_rss_mb,
max_score_difference_from_default}.
`seconds` is the scoring command's wall time (the server's start excluded); `peak_rss_mb`
the server's peak plus the scoring command's; `scores` every step's score in order, and
`max_score_difference_from_default` the largest difference of a step's score in any run from
the first default run's (1 for a step scored in one and not the other).

    python bench/local_judge_settings.py [--repeat 2] [--only default,threads=1]
    python bench/local_judge_settings.py --longest   # longest prompt of examples/ and pairs

`--longest` prints the most input tokens any single judge call of `examples/` or of
`bench/data/judge_pairs.json` sends (the model's own tokenizer, no server started): what
decides whether a smaller context fits.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from agentjudge.judge.model_cache import ensure_model
from agentjudge.judge.providers.local import (
    READY_TIMEOUT,
    SERVER_MODULE,
    free_port,
    machine_threads,
    server_arguments,
)
from common import measure, tree_rss_kb
from local_judge import PAIRS, ROOT, pair_trajectory

THREADS = machine_threads()
# the settings measured: each changes LlamaServer's arguments in one respect
SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "threads=1": {"--n_threads": "1", "--n_threads_batch": "1"},
    "batch=128": {"--n_batch": "128", "--n_ubatch": "128"},
    "batch=256": {"--n_batch": "256", "--n_ubatch": "256"},
    "ctx=4096": {"--n_ctx": "4096"},
}

# Run in a fresh interpreter: `agentjudge` with its `local` judge made on a running server.
_CLIENT = """\
import dataclasses, sys
from pathlib import Path
from agentjudge.cli import main
from agentjudge.judge import providers
from agentjudge.judge.providers.local import LocalJudge
url, model = sys.argv[1], Path(sys.argv[2])
info = providers.PROVIDERS["local"]
providers.PROVIDERS["local"] = dataclasses.replace(
    info, make=lambda spec, _url, _key: LocalJudge(model, server_url=url)
)
sys.exit(main(sys.argv[3:]))
"""


def server_args(model: Path, port: int, varied: dict[str, str]) -> list[str]:
    """LlamaServer's arguments (src/agentjudge/judge/providers/local.py), `varied` replacing
    or adding some."""
    base = server_arguments(model, port, THREADS)
    args = {**dict(zip(base[::2], base[1::2], strict=True)), **varied}
    return [part for pair in args.items() for part in pair]


def wait_ready(server: subprocess.Popen[bytes], base_url: str) -> None:
    """Return once the server has answered a one-token completion, as LlamaServer waits."""
    deadline = time.monotonic() + READY_TIMEOUT
    body = {"messages": [{"role": "user", "content": "Say ok."}], "max_tokens": 1}
    with httpx.Client(timeout=READY_TIMEOUT) as http:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                sys.exit(f"the server exited with code {server.returncode}")
            try:
                if http.post(f"{base_url}/chat/completions", json=body).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
    sys.exit("the server was not ready in time")


def run(model: Path, varied: dict[str, str], out: Path) -> dict[str, Any]:
    """One server started with `varied`, one scoring run of examples/ against it."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    command = [sys.executable, "-m", SERVER_MODULE, *server_args(model, port, varied)]
    with (
        tempfile.TemporaryFile() as log,
        subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT) as server,
    ):
        try:
            wait_ready(server, base_url)
            peak = [0]
            done = threading.Event()

            def sample() -> None:
                while not done.is_set():
                    peak[0] = max(peak[0], tree_rss_kb(server.pid))
                    time.sleep(0.02)

            sampler = threading.Thread(target=sample)
            sampler.start()
            load = os.getloadavg()[0]
            score = [
                sys.executable, "-c", _CLIENT, base_url, str(model),
                "score", str(ROOT / "examples" / "trajectories"), "--judge", "local",
                "--no-cache", "--quiet", "-o", str(out),
            ]  # fmt: skip
            try:
                finished = measure(score)
            finally:
                done.set()
                sampler.join()
        finally:
            server.terminate()
            server.wait(10)
    if finished.returncode not in (0, 1):
        sys.exit(f"score failed ({finished.returncode}): {finished.tail()}")
    results = json.loads(out.read_text())
    latency = results["judge"]["mean_latency_ms"]
    return {
        "mean_seconds_per_call": round(latency / 1000, 2) if latency is not None else None,
        "calls": results["judge"]["calls"],
        "seconds": round(finished.seconds, 1),
        "peak_rss_mb": round(peak[0] / 1024 + finished.peak_rss_mb, 1),
        "load_average": round(load, 2),
        "scores": [
            step["score"]
            for tree in results["trajectories"]
            for node in tree["nodes"]
            for step in node["steps"]
        ],
    }


def sweep(names: list[str], repeat: int) -> None:
    model = ensure_model()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="agentjudge-bench-") as tmp:
        for round_ in range(repeat):
            for name in names if round_ % 2 == 0 else names[::-1]:
                figures = run(model, SETTINGS[name], Path(tmp) / "examples.json")
                runs[name].append(figures)
                print(json.dumps({"setting": name, "round": round_, **figures}), flush=True)
    reference = runs["default"][0]["scores"] if runs.get("default") else None
    for name, done in runs.items():
        seconds = [r["mean_seconds_per_call"] for r in done]
        summary = {
            "setting": name,
            "runs": len(done),
            "min_seconds_per_call": min(seconds),
            "median_seconds_per_call": round(statistics.median(seconds), 2),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in done),
            "max_score_difference_from_default": (
                None
                if reference is None
                else round(
                    max(
                        abs(a - b) if a is not None and b is not None else float(a is not b)
                        for r in done
                        for a, b in zip(r["scores"], reference, strict=True)
                    ),
                    4,
                )
            ),
        }
        print(json.dumps(summary), flush=True)


# Run in a fresh interpreter: a dry run whose token counter also keeps the largest count.
_LONGEST = """\
import sys
from agentjudge.cli import main
from agentjudge.judge.providers.local import LocalJudge
counter = LocalJudge.token_counter
most = [0]
def token_counter(self):
    count, name = counter(self)
    def counted(request):
        tokens = count(request)
        most[0] = max(most[0], tokens)
        return tokens
    return counted, name
LocalJudge.token_counter = token_counter
code = main(["score", *sys.argv[1:], "--judge", "local", "--dry-run", "--json"])
print(most[0])
sys.exit(code)
"""


def longest() -> None:
    """Print the most input tokens of one call, for examples/ and for the pairs."""
    with tempfile.TemporaryDirectory(prefix="agentjudge-bench-") as tmp:
        folder = Path(tmp)
        for pair in json.loads(PAIRS.read_text())["pairs"]:
            for side in ("good", "bad"):
                document = pair_trajectory(f"{pair['name']}.{side}", pair["task"], pair[side])
                (folder / f"{pair['name']}.{side}.json").write_text(json.dumps(document))
        report = {}
        for name, target in (("examples", ROOT / "examples" / "trajectories"), ("pairs", folder)):
            done = subprocess.run(
                [sys.executable, "-c", _LONGEST, str(target)],
                capture_output=True,
                text=True,
                check=True,
            )
            report[name] = int(done.stdout.split()[-1])
        print(json.dumps({"longest_call_input_tokens": report}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument(
        "--only", default="", help="comma-separated settings: " + ",".join(SETTINGS)
    )
    parser.add_argument("--longest", action="store_true")
    args = parser.parse_args()
    if args.longest:
        longest()
        return
    names = args.only.split(",") if args.only else list(SETTINGS)
    unknown = [name for name in names if name not in SETTINGS]
    if unknown:
        parser.error(f"unknown settings: {', '.join(unknown)}")
    sweep(names, args.repeat)


if __name__ == "__main__":
    main()
