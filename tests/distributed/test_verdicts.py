"""The two places a judge client keeps its verdicts (`judge.store.Verdicts`): the verdict
store on its machine (`LocalVerdicts`) and a Ray worker's desk (`DeskVerdicts`, here over
a `VerdictDesk` called in-process as its actor would be). The same gets, puts and flushes
see the same verdicts, and what a flush returned from is committed."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentjudge.distributed.desk import DeskVerdicts, VerdictDesk
from agentjudge.judge.store import UNREADABLE, Found, Stored, Verdicts, VerdictStore
from agentjudge.judge.store_commits import LocalVerdicts
from agentjudge.judge.verdict import Verdict

pytestmark = pytest.mark.timeout(30)

FIRST: Stored = (Verdict(0.8, "ok", {"k": 1}, {}), 10, 2)
SECOND: Stored = (Verdict(0.1, "no"), 7, 3)


class _Remote:
    """An actor method as its handle offers it: `.remote(...)`, awaited."""

    def __init__(self, method: Callable[..., Any]) -> None:
        self._method = method

    async def remote(self, *args: Any) -> Any:
        await asyncio.sleep(0)  # an actor call answers later, never at once
        return self._method(*args)


class _Handle:
    def __init__(self, desk: VerdictDesk) -> None:
        self.lookup = _Remote(desk.lookup)
        self.put = _Remote(desk.put)


def _local(path: Path) -> tuple[Verdicts, Callable[[], None]]:
    store = VerdictStore(path)
    return LocalVerdicts(store), store.close


def _desk(path: Path) -> tuple[Verdicts, Callable[[], None]]:
    desk = VerdictDesk(str(path))
    return DeskVerdicts(_Handle(desk), str(path)), desk.close


def _committed(path: Path, key: str) -> Stored | None:
    """What another run opening the store reads under `key`."""
    reader = VerdictStore(path)
    try:
        return reader.get(key)
    finally:
        reader.close()


async def _sequence(verdicts: Verdicts, path: Path) -> list[object]:
    seen: list[object] = [await verdicts.get("a")]
    verdicts.put("a", FIRST)
    seen.append(await verdicts.get("a"))  # held: seen at once
    await verdicts.flush()
    seen.append(_committed(path, "a"))
    seen.append(await verdicts.get("bad"))

    # calls ending together: each flush returns once its own verdict is committed
    async def one(key: str, stored: Stored) -> Found:
        verdicts.put(key, stored)
        await verdicts.flush()
        return _committed(path, key)

    seen += await asyncio.gather(one("b", SECOND), one("c", FIRST))
    verdicts.put("a", SECOND)  # a verdict judged again replaces the one kept
    await verdicts.flush()
    seen.append(await verdicts.get("a"))
    return seen


@pytest.mark.parametrize("kept", [_local, _desk], ids=["local", "desk"])
def test_the_same_sequence_sees_the_same_verdicts(
    kept: Callable[[Path], tuple[Verdicts, Callable[[], None]]], tmp_path: Path
) -> None:
    path = tmp_path / "verdicts.sqlite"
    VerdictStore(path).close()
    with sqlite3.connect(path) as db:  # a record no version of ours wrote
        db.execute("INSERT INTO verdicts VALUES ('bad', '{\"version\": 9}')")
    verdicts, close = kept(path)
    try:
        seen = asyncio.run(_sequence(verdicts, path))
    finally:
        close()
    assert seen == [None, FIRST, FIRST, UNREADABLE, SECOND, FIRST, SECOND]
    assert verdicts.where == str(path)
