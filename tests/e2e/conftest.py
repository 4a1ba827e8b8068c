"""Servers the end-to-end tests start on 127.0.0.1: helpers, and an MLflow server; and the
check that every results file the tests write holds to its JSON Schema."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.results.schema_check import ResultsFiles

MLFLOW = Path(sys.executable).parent / "mlflow"
RESULTS_FILES = pytest.StashKey[ResultsFiles]()


@pytest.fixture(autouse=True)
def _results_hold_to_their_schemas(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """After each test, every results file written since (tests/results/schema_check.py);
    a test marked `results_edited` writes broken ones on purpose."""
    stash = request.config.stash
    if RESULTS_FILES not in stash:
        stash[RESULTS_FILES] = ResultsFiles(tmp_path_factory.getbasetemp())
    yield
    edited = request.node.get_closest_marker("results_edited") is not None
    problems = stash[RESULTS_FILES].check_new(validate=not edited)
    if problems:
        pytest.fail("a results file does not hold to its JSON Schema:\n" + "\n".join(problems))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if RESULTS_FILES in config.stash:
        terminalreporter.write_line(config.stash[RESULTS_FILES].summary())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not come up in {seconds}s")


def start(
    command: list[str], log: Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:  # the child keeps its own descriptor
        return subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env, start_new_session=True
        )


def stop(proc: subprocess.Popen[bytes], grace: float = 15) -> None:
    """End a server's process group: SIGTERM, then SIGKILL after `grace` seconds."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(15)


@pytest.fixture(scope="session")
def mlflow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("mlflow")
    port = free_port()
    command = [
        str(MLFLOW), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}",
        "--artifacts-destination", str(folder / "artifacts"), "--serve-artifacts",
    ]  # fmt: skip
    # MLflow 3's job runner (huey consumers: 8 more processes of ~240 MB each, polling for
    # the whole session) serves no test: results are written through the tracking API only
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    proc = start(command, folder / "mlflow.log", folder, env)
    try:
        wait_for(f"http://127.0.0.1:{port}/health", 120)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)
