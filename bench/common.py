"""What the benchmarks share: the test judge server in its own process, and memory sampling."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@contextmanager
def judge_server(latency: float, capacity: int) -> Iterator[str]:
    """Run `agentjudge judge-server` on a free port in another process; yield its base URL."""
    command = [
        sys.executable, "-m", "agentjudge", "judge-server", "--port", "0",
        "--latency", str(latency), "--capacity", str(capacity),
    ]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            yield server.stdout.readline().split(" on ", 1)[1].split()[0]
        finally:
            server.terminate()


def tree_rss_kb(pid: int) -> int:
    """Resident memory of a process and all its descendants (worker processes count too)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending.extend(int(c) for c in children.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


@dataclass(frozen=True)
class Measured:
    """A finished command: its exit code, output, wall time and peak memory (with children)."""

    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    peak_rss_mb: float
    cpu_seconds: float  # user + system CPU of the command and the children it waited for

    def tail(self) -> str:
        """The end of what the command printed, for a failure message."""
        return f"{self.stdout[-2000:]!r} {self.stderr[-2000:]!r}"


def byte_compiled() -> None:
    """Byte-compile agentjudge's modules, as installing its wheel does: an editable install
    started with PYTHONDONTWRITEBYTECODE set (as on this project's machines) would compile
    every module from source at each start, which no installed copy does."""
    import agentjudge

    package = os.path.dirname(agentjudge.__file__)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True)


def measure(
    command: list[str], interval: float = 0.02, env: dict[str, str] | None = None
) -> Measured:
    """Run `command`, sampling the resident memory of it and its children while it runs
    (agentjudge's modules byte-compiled first: see `byte_compiled`). Its output goes to
    files, not pipes: a command printing more than a pipe holds would wait forever."""
    byte_compiled()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with (
        tempfile.TemporaryFile() as out_file,
        tempfile.TemporaryFile() as err_file,
        subprocess.Popen(command, stdout=out_file, stderr=err_file, env=env) as proc,
    ):
        peak_kb = 0
        while proc.poll() is None:
            peak_kb = max(peak_kb, tree_rss_kb(proc.pid))
            time.sleep(interval)
        seconds = time.perf_counter() - start
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Measured(proc.returncode, out, err, seconds, round(peak_kb / 1024, 1), cpu)


def bare_client_seconds(url: str, calls: int, concurrency: int, prompt_bytes: int) -> float:
    """Seconds a bare aiohttp client takes to make `calls` chat calls to the judge server
    at `url`, `concurrency` at a time, each with a prompt of about `prompt_bytes`: what the
    server, loopback HTTP and asyncio on this machine allow before agentjudge does anything,
    the ceiling of a run's efficiency (no process start, no prompts built, no verdicts)."""
    import asyncio
    import json

    import aiohttp

    body = json.dumps(
        {
            "model": "bench",
            "messages": [
                {"role": "system", "content": "Score the step. [[score=0.5]]"},
                {"role": "user", "content": "x" * prompt_bytes},
            ],
        }
    ).encode()
    endpoint = f"{url}/chat/completions"

    async def run() -> float:
        remaining = iter(range(calls))
        connector = aiohttp.TCPConnector(limit=2 * concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def worker() -> None:
                for _ in remaining:
                    headers = {"content-type": "application/json"}
                    async with session.post(endpoint, data=body, headers=headers) as answer:
                        await answer.read()
                        if answer.status != 200:
                            raise SystemExit(f"the judge server answered {answer.status}")

            start = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return time.perf_counter() - start

    return asyncio.run(run())
