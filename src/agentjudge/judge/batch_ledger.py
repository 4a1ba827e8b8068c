"""The batch ledger: which batch holds which request, kept in the verdict store's file.

Tables beside `verdicts` in the same sqlite file (its own connection): `batches` (the
provider's batch id, the judge that owns it, `open` until its results are read, then
`ended`) and `batch_requests` (a request's key -> the last batch it went into). A batch is
written, with all its requests, in one transaction as soon as the provider has accepted it,
so a run killed while it waits finds, on the same command again, every batch it submitted:
it polls them and submits none of their requests again. Before the provider is asked, the
requests are kept in `batch_submissions` under a token sent with the batch (where the API
keeps one), so that a run killed before it learned the batch's id can find it.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS batches (
        id TEXT PRIMARY KEY,
        judge TEXT NOT NULL,
        state TEXT NOT NULL,
        submitted REAL NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS batch_requests (
        key TEXT PRIMARY KEY,
        batch TEXT NOT NULL
    )""",
    # a batch being submitted: its requests are kept under a token of ours before the
    # provider is asked, so that a run killed before it learns the batch's id can find the
    # batch by that token (OpenAI's batch `metadata`) rather than submit it again
    """CREATE TABLE IF NOT EXISTS batch_submissions (
        key TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        judge TEXT NOT NULL,
        started REAL NOT NULL
    )""",
)


class BatchLedger:
    """Batch ids and their requests, in the verdict store at `path` (which is open)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None)
        for statement in SCHEMA:
            self._db.execute(statement)

    def batch_of(self, key: str) -> tuple[str, str] | None:
        """The last batch `key`'s request went into, and its state (`open`, `ended`)."""
        row = self._db.execute(
            "SELECT b.id, b.state FROM batch_requests r JOIN batches b ON b.id = r.batch "
            "WHERE r.key = ?",
            (key,),
        ).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    def submitting(self, token: str, judge: str, keys: list[str]) -> None:
        """Keep `keys` as being submitted under `token`, before the provider is asked."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany(
                "INSERT OR REPLACE INTO batch_submissions (key, token, judge, started) "
                "VALUES (?, ?, ?, ?)",
                ((key, token, judge, time.time()) for key in keys),
            )
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def submission_of(self, key: str) -> tuple[str, float] | None:
        """The token `key` was being submitted under when a run stopped, and when."""
        row = self._db.execute(
            "SELECT token, started FROM batch_submissions WHERE key = ?", (key,)
        ).fetchone()
        return (str(row[0]), float(row[1])) if row else None

    def submitted_keys(self, token: str) -> list[str]:
        """The keys being submitted under `token`."""
        rows = self._db.execute("SELECT key FROM batch_submissions WHERE token = ?", (token,))
        return [str(row[0]) for row in rows]

    def forget_submission(self, token: str) -> None:
        """Drop the submission `token`: it failed, or the provider has no such batch."""
        self._db.execute("DELETE FROM batch_submissions WHERE token = ?", (token,))

    def keys_of(self, batch_id: str) -> list[str]:
        """The keys whose last batch is `batch_id`."""
        rows = self._db.execute("SELECT key FROM batch_requests WHERE batch = ?", (batch_id,))
        return [str(row[0]) for row in rows]

    def add(self, batch_id: str, judge: str, keys: list[str], token: str = "") -> None:
        """Keep a batch the provider accepted, with its requests' keys, in place of its
        submission under `token` (one commit)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute("DELETE FROM batch_submissions WHERE token = ?", (token,))
            self._db.execute(
                "INSERT OR REPLACE INTO batches (id, judge, state, submitted) VALUES (?, ?, ?, ?)",
                (batch_id, judge, "open", time.time()),
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO batch_requests (key, batch) VALUES (?, ?)",
                ((key, batch_id) for key in keys),
            )
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def ended(self, batch_id: str) -> None:
        """The batch's results have been read."""
        self._db.execute("UPDATE batches SET state = 'ended' WHERE id = ?", (batch_id,))

    def close(self) -> None:
        self._db.close()
