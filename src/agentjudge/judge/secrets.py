"""Judge credentials: read from the environment or a secret file, never written anywhere."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from agentjudge.errors import UsageError

API_KEY_ENV = "AGENTJUDGE_JUDGE_API_KEY"


def load_api_key(key_file: Path | str | None = None, env: str = API_KEY_ENV) -> str | None:
    """The key from `key_file` (first line, stripped) if given, else from `$env`, else None."""
    if key_file is not None:
        path = Path(key_file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(
                f"{path}: cannot read the judge API key file ({exc.strerror}); "
                f"fix the path or set {env} instead"
            ) from None
        key = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not key:
            raise UsageError(f"{path}: the judge API key file is empty")
        return key
    return os.environ.get(env) or None


def redact_url(url: str) -> str:
    """`https://user:pw@host/v1` -> `https://***@host/v1`: credentials never reach output."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))
