"""A Ray cluster on this machine for tests and benchmarks: a head and joined nodes, each a
`ray start --block` process on 127.0.0.1 with its own ports, small resources and its own
temp folder, stopped by ending exactly the processes it started (never `ray stop`, which
ends every Ray process of the machine).

    with LocalRayCluster(folder, nodes=2) as cluster:
        ... agentjudge score runs --ray-address cluster.address ...
        cluster.node_pids(1)  # the processes of the second node (to kill one)
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

READY = "Ray runtime started"
# Ray swaps 127.0.0.1 (and localhost) for the machine's network address, in a node's
# address as in the head's: 127.0.0.2, loopback too, it leaves as it is, so every
# connection of the cluster and its drivers stays on the loopback interface
LOOPBACK = "127.0.0.2"
OBJECT_STORE_BYTES = 200_000_000
START_SECONDS = 90.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ray_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the cluster's processes and of its drivers: no usage reports, no
    token file shared with other clusters of the machine (loopback only)."""
    env = dict(os.environ)
    env.update({"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"})
    env.pop("RAY_ADDRESS", None)
    env.update(extra or {})
    return env


class LocalRayCluster:
    """`nodes` Ray nodes (the first is the head) of `cpus` CPUs each, under `folder`."""

    def __init__(self, folder: Path, nodes: int = 2, cpus: int = 1) -> None:
        self.folder = folder
        self.nodes = nodes
        self.cpus = cpus
        self.port = free_port()
        self.address = f"{LOOPBACK}:{self.port}"
        self._procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> LocalRayCluster:
        try:
            for index in range(self.nodes):
                self._start(index)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _start(self, index: int) -> None:
        ray = str(Path(sys.executable).parent / "ray")
        temp = self.folder / f"n{index}"
        temp.mkdir(parents=True, exist_ok=True)
        ports = {
            "--node-manager-port": free_port(),
            "--object-manager-port": free_port(),
            "--dashboard-agent-listen-port": free_port(),
            "--dashboard-agent-grpc-port": free_port(),
            "--runtime-env-agent-port": free_port(),
            "--metrics-export-port": free_port(),
        }
        command = [ray, "start", "--block", "--node-ip-address", LOOPBACK]
        if index == 0:
            command += ["--head", "--port", str(self.port), "--include-dashboard=false"]
            command += ["--ray-client-server-port", str(free_port())]
        else:
            command += ["--address", self.address]
        command += ["--num-cpus", str(self.cpus), "--num-gpus", "0"]
        command += ["--object-store-memory", str(OBJECT_STORE_BYTES)]
        command += ["--disable-usage-stats", "--temp-dir", str(temp)]
        for flag, port in ports.items():
            command += [flag, str(port)]
        log = self.folder / f"n{index}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, env=ray_env(),
                start_new_session=True,
            )  # fmt: skip
        self._procs.append(proc)
        deadline = time.monotonic() + START_SECONDS
        while READY not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray node {index} did not start: {log.read_text()[-3000:]}")
            time.sleep(0.2)

    def node_pids(self, index: int) -> list[int]:
        """The processes of node `index` (its `ray start`, raylet, workers...)."""
        return session_pids(self._procs[index].pid)

    def stop(self) -> None:
        """End every process the cluster's nodes started, the joined nodes first."""
        # a test cluster keeps nothing worth a graceful stop: a short grace, then SIGKILL
        # (a raylet busy at SIGTERM took the whole 10 s, each cluster's teardown in CI)
        for proc in reversed(self._procs):
            for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 10.0)):
                pids = session_pids(proc.pid)
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, sig)
                deadline = time.monotonic() + grace
                while session_pids(proc.pid) and time.monotonic() < deadline:
                    time.sleep(0.1)
                    proc.poll()  # reaps the `ray start` process itself
                if not session_pids(proc.pid):
                    break
            proc.wait(10)
        self._procs.clear()


def session_pids(session: int) -> list[int]:
    """The live processes of the session `session` leads (one `ray start` and what it
    started: its processes stay in the session)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        # after the command: state, ppid, pgrp, session
        if int(fields[3]) == session and fields[0] != "Z":
            pids.append(int(entry))
    return pids
