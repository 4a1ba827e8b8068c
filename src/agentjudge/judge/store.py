"""The verdict store: sqlite (WAL), request key -> verdict, committed as calls return.

A re-run with the same inputs finds every verdict here and makes no judge call; a run that
was killed finds the calls it completed and repeats none of them. Only verdicts are
stored: an error is tried again next time.

`put` only holds a verdict; `flush` commits everything held in one transaction. The judge
client commits the verdicts of the calls that return within 20 ms of each other together
(`judge/store_commits.py`), and hands no verdict back before it is committed.

A client keeps its verdicts through `Verdicts`: this store on the same machine
(`store_commits.LocalVerdicts`), or, in a Ray worker, the driver's desk that holds it open
(`distributed/desk.py`).
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Final, Literal, Protocol, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from agentjudge.errors import UsageError
from agentjudge.judge.stats import ClientStats
from agentjudge.judge.store_path import default_store_path
from agentjudge.judge.verdict import Verdict

T = TypeVar("T")

Stored = tuple[Verdict, int, int]  # a verdict and its input and output tokens
# what `Verdicts.get` finds under a key whose record cannot be read back (it is judged again)
UNREADABLE: Final = "unreadable"
Found = Stored | Literal["unreadable"] | None


class Verdicts(Protocol):
    """Where a judge client keeps its verdicts: looked up before each call, each verdict the
    judge gives put and flushed before the call hands it back (so a killed job loses none
    it reported)."""

    where: str  # the store as the console names it

    async def get(self, key: str) -> Found:
        """The verdict held or kept under `key`, `UNREADABLE`, or None."""
        ...

    def put(self, key: str, stored: Stored) -> None:
        """Hold a verdict until a flush (`get` sees it at once)."""
        ...

    async def flush(self) -> None:
        """Return once every verdict put so far is kept (a flush may be shared by the
        calls that end close together)."""
        ...


SQLITE_HEADER = b"SQLite format 3\x00"
OPEN_PATIENCE = 30.0  # seconds to wait for other runs opening the same store
SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    record TEXT NOT NULL
)
"""


class StoredVerdict(BaseModel):
    """One stored verdict. `version` changes when the record's meaning does.

    Strict: `put` writes numbers as numbers, so a score stored as `"0.8"` or `true` was
    written by something else and is refused, never converted (the request's `accepts`
    then holds what is left to the checks of a live answer)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    version: Literal[1] = 1
    kind: Literal["verdict"] = "verdict"
    score: float
    reasoning: str
    fields: dict[str, Any]
    scores: dict[str, float] = {}
    input_tokens: int
    output_tokens: int


def store_line(stats: ClientStats, path: str | Path | None) -> str:
    """What the console says when verdicts came from the store (never silently)."""
    where = Path(path) if path else default_store_path()
    return (
        f"{stats.store_hits:,} of {stats.verdicts:,} verdicts from the verdict store ({where}); "
        "--no-cache to judge again"
    )


def _check_path(path: Path) -> None:
    """A path that can hold a verdict store: not a folder, and either nothing yet or an
    SQLite file (any other file is left untouched and refused)."""
    if path.is_dir():
        raise UsageError(f"{path}: a folder, not a verdict store: give --cache a file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        head = b""
        if path.exists():
            with path.open("rb") as existing:
                head = existing.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise _cannot(path, exc) from None
    if head and head != SQLITE_HEADER:
        raise UsageError(
            f"{path}: not a verdict store (not an SQLite database), left untouched: give "
            "--cache a path of its own, or --no-cache"
        )


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def _cannot(path: Path, exc: BaseException) -> UsageError:
    why = getattr(exc, "strerror", None) or str(exc)
    return UsageError(
        f"{path}: cannot open or write the verdict store ({why}); give --cache a writable "
        "path, or --no-cache"
    )


class VerdictStore:
    """A small key-value store of verdicts; safe to share between concurrent runs.

    Opening it checks that it is one and can be written (a `UsageError` naming the fix
    otherwise: exit 3 before any judge call); a store damaged beyond reading (a power loss,
    bytes overwritten), found so when it is opened or at any read or commit later, is set
    aside as `*.damaged-PID` and a new one begun, which `set_aside` says and `on_note` is
    told. A record that cannot be read back is ignored (judged again) and counted in
    `unreadable`.
    """

    def __init__(self, path: Path | str, on_note: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        self.set_aside: Path | None = None
        self.unreadable = 0
        self.on_note = on_note
        self._inode: int | None = None  # of the file this connection opened
        _check_path(self.path)
        try:
            self._db = self._open_shared()
        except sqlite3.DatabaseError as exc:
            if not _damaged(exc):
                raise _cannot(self.path, exc) from None
            self._begin_anew()
        self._held: dict[str, str] = {}  # key -> record, put but not yet committed

    def _begin_anew(self) -> None:
        """Set the damaged store aside and open a new one in its place. Every verdict in it
        can be judged again (a store, not a record): damage is not fatal."""
        opened, self._inode = self._inode, None
        if opened is not None:  # found damaged after it was opened: this connection goes
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self.set_aside = self.path.with_name(f"{self.path.name}.damaged-{os.getpid()}")
        try:
            current: int | None = self.path.stat().st_ino
        except OSError:
            current = None
        # another run sharing the store may have set it aside already: its new one stays
        if current is not None and opened in (None, current):
            self.path.replace(self.set_aside)
            # its log goes with it, or the new store would be read through it
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    self.path.with_name(self.path.name + suffix).replace(
                        self.set_aside.with_name(self.set_aside.name + suffix)
                    )
        try:
            self._db = self._open_shared()
        except sqlite3.DatabaseError as again:
            raise _cannot(self.path, again) from None
        line = self.damage_line()
        if line is not None and self.on_note is not None:
            self.on_note(line)

    def _guarded(self, action: Callable[[], T]) -> T:
        """`action()`, done again on a new store if it finds this one damaged."""
        try:
            return action()
        except sqlite3.DatabaseError as exc:
            if not _damaged(exc):
                raise
        self._begin_anew()
        return action()

    def _open_shared(self) -> sqlite3.Connection:
        """`_open`, waiting for other runs opening the same store at the same moment:
        SQLite refuses a lock upgrade that could deadlock at once ("database is locked"),
        without waiting for its busy timeout."""
        deadline = time.monotonic() + OPEN_PATIENCE
        while True:
            try:
                return self._open()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(random.uniform(0.01, 0.05))

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if tables and "verdicts" not in tables:
                raise UsageError(
                    f"{self.path}: an SQLite database, but not a verdict store (no verdicts "
                    "table): give --cache a path of its own, or --no-cache"
                )
            db.execute("PRAGMA journal_mode=WAL")
            # Each verdict is committed on its own, so a killed process loses none. Without
            # fsync (synchronous=OFF) a commit costs ~15 us instead of ~60 us per judge
            # call; only an OS crash or power loss can damage the file (handled above).
            db.execute("PRAGMA synchronous=OFF")
            db.execute(SCHEMA)
            db.execute("SELECT key FROM verdicts LIMIT 1").fetchall()
            # proof that it can be written, before any judge call
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
            self._inode = self.path.stat().st_ino
        except BaseException:
            db.close()
            raise
        return db

    def damage_line(self) -> str | None:
        """What to say when the store was found damaged and set aside, else None."""
        if self.set_aside is None:
            return None
        return (
            f"verdict store {self.path} was damaged (an OS crash or power loss?): set aside "
            f"as {self.set_aside.name}; a new one is begun, so its verdicts are judged again"
        )

    def get(self, key: str) -> Stored | None:
        """The verdict and its token counts, or None (none stored, or one that cannot be
        read back: not JSON, another format version; counted in `unreadable`)."""
        text = self._held.get(key)
        if text is None:
            row = self._guarded(
                partial(self._row, "SELECT record FROM verdicts WHERE key = ?", (key,))
            )
            if row is None:
                return None
            text = row[0]
        try:
            record = StoredVerdict.model_validate_json(text)
        except ValidationError:
            self.unreadable += 1
            return None
        verdict = Verdict(record.score, record.reasoning, record.fields, record.scores)
        return verdict, record.input_tokens, record.output_tokens

    def has(self, key: str) -> bool:
        """Whether a verdict is held or stored under `key` (without reading it)."""
        if key in self._held:
            return True
        return (
            self._guarded(partial(self._row, "SELECT 1 FROM verdicts WHERE key = ?", (key,)))
            is not None
        )

    def _row(self, query: str, parameters: tuple[str, ...]) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._db.execute(query, parameters).fetchone()
        return row

    def put(self, key: str, verdict: Verdict, input_tokens: int, output_tokens: int) -> None:
        """Hold a verdict until the next `flush` (`get` sees it at once)."""
        # A StoredVerdict record (read back and validated by `get`), written directly: the
        # model's own serializer cost more than the rest of a put.
        record = {
            "version": 1,
            "kind": "verdict",
            "score": verdict.score,
            "reasoning": verdict.reasoning,
            "fields": verdict.fields,
            "scores": verdict.scores,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
        }
        self._held[key] = orjson.dumps(record).decode()

    def flush(self) -> None:
        """Commit every verdict held, in one transaction."""
        if not self._held:
            return
        held, self._held = self._held, {}
        self._guarded(partial(self._commit, held))

    def _commit(self, held: dict[str, str]) -> None:
        self._db.execute("BEGIN")
        try:
            self._db.executemany(
                "INSERT OR REPLACE INTO verdicts (key, record) VALUES (?, ?)", held.items()
            )
        except BaseException:
            # a damaged file may refuse the rollback too: the commit's own error is the one
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def __len__(self) -> int:
        self.flush()
        counted = self._guarded(partial(self._row, "SELECT COUNT(*) FROM verdicts", ()))
        return int(counted[0]) if counted else 0

    def close(self) -> None:
        self.flush()
        self._db.close()
