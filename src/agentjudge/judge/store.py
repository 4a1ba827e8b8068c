"""The verdict store: sqlite (WAL), request key -> verdict, committed as each call returns.

A re-run with the same inputs finds every verdict here and makes no judge call; a run that
was killed finds the calls it completed and repeats none of them. Only verdicts are
stored: an error is tried again next time.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agentjudge.judge.verdict import Verdict

SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    record TEXT NOT NULL
)
"""


class StoredVerdict(BaseModel):
    """One stored verdict. `version` changes when the record's meaning does."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    kind: Literal["verdict"] = "verdict"
    score: float
    reasoning: str
    fields: dict[str, Any]
    scores: dict[str, float] = {}
    input_tokens: int
    output_tokens: int


def default_store_path() -> Path:
    """`$AGENTJUDGE_CACHE_DIR/verdicts.sqlite`, else the user cache folder."""
    base = os.environ.get("AGENTJUDGE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "agentjudge"
    )
    return Path(base) / "verdicts.sqlite"


class VerdictStore:
    """A small key-value store of verdicts; safe to share between concurrent runs."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError:
            # A cache, not a record: one damaged (say by a power loss) is set aside, not fatal.
            self.path.replace(self.path.with_name(f"{self.path.name}.damaged-{os.getpid()}"))
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        # Each verdict is committed on its own, so a killed process loses none. Without
        # fsync (synchronous=OFF) a commit costs ~15 us instead of ~60 us per judge call;
        # only an OS crash or power loss can then damage the file (handled above).
        db.execute("PRAGMA synchronous=OFF")
        db.execute(SCHEMA)
        db.execute("SELECT key FROM verdicts LIMIT 1").fetchall()
        return db

    def get(self, key: str) -> tuple[Verdict, int, int] | None:
        """The verdict and its token counts, or None."""
        row = self._db.execute("SELECT record FROM verdicts WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        record = StoredVerdict.model_validate_json(row[0])
        verdict = Verdict(record.score, record.reasoning, record.fields, record.scores)
        return verdict, record.input_tokens, record.output_tokens

    def put(self, key: str, verdict: Verdict, input_tokens: int, output_tokens: int) -> None:
        record = StoredVerdict(
            score=verdict.score,
            reasoning=verdict.reasoning,
            fields=verdict.fields,
            scores=verdict.scores,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )
        self._db.execute(
            "INSERT OR REPLACE INTO verdicts (key, record) VALUES (?, ?)",
            (key, record.model_dump_json()),
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])

    def close(self) -> None:
        self._db.close()
