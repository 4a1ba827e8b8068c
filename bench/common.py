"""What the benchmarks share: the test judge server in its own process, and memory sampling."""

from __future__ import annotations

import os
import subprocess
import sys
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


def measure(command: list[str], interval: float = 0.02) -> Measured:
    """Run `command`, sampling the resident memory of it and its children while it runs
    (agentjudge's modules byte-compiled first: see `byte_compiled`)."""
    byte_compiled()
    start = time.perf_counter()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        peak_kb = 0
        while proc.poll() is None:
            peak_kb = max(peak_kb, tree_rss_kb(proc.pid))
            time.sleep(interval)
        out, err = proc.communicate()
    seconds = time.perf_counter() - start
    return Measured(proc.returncode, out, err, seconds, round(peak_kb / 1024, 1))
