"""What the benchmarks share: the test judge server in its own process, and memory sampling."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


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
