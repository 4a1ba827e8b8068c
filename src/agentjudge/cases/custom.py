"""Custom metrics, run in the project's own environment when it has one.

With a `.venv` in the project folder, every item goes through one worker subprocess of
that interpreter (`custom_worker.py`, which needs nothing of ours installed there). Without
one, the metrics are imported here, with the project folder first on `sys.path`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from agentjudge.cases import custom_worker
from agentjudge.cases.gate import MetricResult
from agentjudge.errors import UsageError


def project_python(root: Path) -> Path | None:
    """The project's own interpreter, unless it is the one running us already."""
    for candidate in (root / ".venv" / "bin" / "python", root / ".venv" / "Scripts" / "python.exe"):
        if candidate.exists():
            if Path(sys.prefix).resolve() == (root / ".venv").resolve():
                return None
            return candidate
    return None


async def run_custom(items: list[dict[str, Any]], root: Path) -> dict[str, MetricResult]:
    """Results by item id for `{id, callable, case, trace}` items."""
    if not items:
        return {}
    python = project_python(root)
    if python is None:
        raw = await asyncio.to_thread(_in_process, items, root)
    else:
        raw = await _in_worker(items, root, python)
    return {
        str(r["id"]): MetricResult(
            score=r.get("score"), reasoning=str(r.get("reasoning") or ""), error=r.get("error")
        )
        for r in raw
    }


def _in_process(items: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    folder = str(root.resolve())
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        return [custom_worker.run_item(item) for item in items]
    finally:
        if added:
            sys.path.remove(folder)


async def _in_worker(items: list[dict[str, Any]], root: Path, python: Path) -> list[dict[str, Any]]:
    payload = "".join(json.dumps(item) + "\n" for item in items).encode()
    try:
        process = await asyncio.create_subprocess_exec(
            str(python),
            custom_worker.__file__,
            cwd=root,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise UsageError(
            f"custom metrics: cannot start the project's interpreter {python} ({exc.strerror}); "
            "repair or remove the project's .venv"
        ) from None
    try:
        stdout, stderr = await process.communicate(payload)
    except BaseException:
        process.kill()
        await process.wait()
        raise
    lines = [json.loads(line) for line in stdout.decode().splitlines() if line.strip()]
    if process.returncode != 0 or len(lines) != len(items):
        last = stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise UsageError(
            f"custom metrics: the worker in {python} exited with code {process.returncode} "
            f"({last[0][:200]}); check that the project's .venv runs Python >= 3.10"
        )
    return lines
