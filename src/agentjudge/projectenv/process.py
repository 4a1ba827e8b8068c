"""Starting the project worker (`worker.py`) where the project's code runs, and talking to it.

Where: as graph-agents-cli runs its judge runner, `uv run python` from the project folder
when the project uses uv (a `uv.lock`) and uv is installed; else the project's `.venv`
interpreter; else nowhere (the caller runs custom metrics in its own process, and has no
project judge to call). One process serves a whole grading run; requests go to it as JSON
lines and are answered in any order, matched by id.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import IO, Any

from agentjudge.errors import UsageError
from agentjudge.projectenv import worker

STREAM_LIMIT = 64 * 1024 * 1024  # one answer line (a custom metric's reasoning may be long)
STOP_GRACE = 5.0


def project_command(root: Path) -> list[str] | None:
    """How the project's own Python is run: `uv run python` for a uv project, else its
    `.venv` interpreter (unless that is the one running us), else None."""
    if (root / "uv.lock").is_file() and shutil.which("uv"):
        return ["uv", "run", "--quiet", "python"]
    for candidate in (root / ".venv" / "bin" / "python", root / ".venv" / "Scripts" / "python.exe"):
        if candidate.exists():
            if Path(sys.prefix).resolve() == (root / ".venv").resolve():
                return [sys.executable]  # we run in the project's own environment
            return [str(candidate)]
    return None


def project_environ(extra: Mapping[str, str]) -> dict[str, str]:
    """Our environment for the project's process, with `extra` over it. Our own virtualenv
    is not passed on: `uv run` would otherwise warn that it is not the project's."""
    environ = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    environ.update(extra)
    return environ


class ProjectProcess:
    """The worker, running in the project's environment (use `ProjectProcess.running`)."""

    def __init__(self, process: asyncio.subprocess.Process, log: IO[bytes], command: str) -> None:
        self._process = process
        self._log = log
        self._command = command
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    @contextlib.asynccontextmanager
    async def running(
        cls, command: list[str], root: Path, environ: Mapping[str, str], workers: int = 16
    ) -> AsyncIterator[ProjectProcess]:
        """Start the worker with `command` (see `project_command`) in `root`; stop it on
        the way out. A worker that cannot start is a `UsageError` naming the fix."""
        log = tempfile.TemporaryFile()  # noqa: SIM115  (closed with the process)
        shown = " ".join(command)
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                worker.__file__,
                str(workers),
                cwd=root,
                env=dict(environ),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                limit=STREAM_LIMIT,
                # its own process group: `uv run` starts Python as a child, which must stop
                # with it
                start_new_session=True,
            )
        except OSError as exc:
            log.close()
            raise UsageError(
                f"cannot run the project's Python ({shown}: {exc.strerror}); repair the "
                "project's environment (graph-agents-cli install)"
            ) from None
        running = cls(process, log, shown)
        try:
            yield running
        finally:
            await running._stop()

    async def request(self, item: dict[str, Any]) -> dict[str, Any]:
        """Send one request; its answer. A worker that died is a `UsageError` with its
        last words."""
        self._next_id += 1
        key = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps({**item, "id": key}, default=str).encode() + b"\n")
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            self._pending.pop(key, None)
            raise self._died() from None
        try:
            return await future
        finally:
            self._pending.pop(key, None)

    async def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                try:
                    answer = json.loads(line)
                except ValueError:
                    continue  # not an answer of the worker's
                key = answer.get("id") if isinstance(answer, dict) else None
                if not isinstance(key, int):
                    continue
                future = self._pending.get(key)
                if future is not None and not future.done():
                    future.set_result(answer)
            await self._process.wait()
        finally:
            for future in self._pending.values():  # nobody will answer them now
                if not future.done():
                    future.set_exception(self._died())

    def _died(self) -> UsageError:
        return UsageError(
            f"the project's worker ({self._command}) exited with code "
            f"{self._process.returncode}{self.last_words()}; check that the project's "
            "environment runs (graph-agents-cli install)"
        )

    def last_words(self) -> str:
        """The last line the worker wrote on stderr, as ` (line)`, or ""."""
        self._log.seek(0)
        lines = [ln for ln in self._log.read().decode(errors="replace").splitlines() if ln]
        return f" ({lines[-1].strip()[:300]})" if lines else ""

    async def _stop(self) -> None:
        stdin = self._process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        try:
            await asyncio.wait_for(self._process.wait(), STOP_GRACE)
        except (TimeoutError, asyncio.CancelledError):
            # calls still running in it (or Ctrl-C): it goes now, with what it started
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)
            await self._process.wait()
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)  # `uv run`'s Python, say
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._log.close()
