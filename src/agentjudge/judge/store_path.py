"""Where the verdict store lives by default: apart from `store`, so that a run which only
names the path (grade checks that no output overwrites it) does not import SQLite and the
store's models."""

from __future__ import annotations

import os
from pathlib import Path


def default_store_path() -> Path:
    """`$AGENTJUDGE_CACHE_DIR/verdicts.sqlite`, else the user cache folder."""
    base = os.environ.get("AGENTJUDGE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "agentjudge"
    )
    return Path(base) / "verdicts.sqlite"
