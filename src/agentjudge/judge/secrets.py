"""Judge credentials: read from a secret file or the environment, never written anywhere;
and the redaction of whatever might carry one (URLs, a server's error messages)."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from agentjudge.errors import UsageError
from agentjudge.files import read_text_capped

API_KEY_ENV = "AGENTJUDGE_JUDGE_API_KEY"
MAX_KEY_FILE_BYTES = 64 * 1024  # a key is a line; a bigger file is the wrong one
# The query parameters an endpoint keeps when it is shown: any other may carry a credential
# (Gemini's native `key=`, Azure API Management's `subscription-key=`, SAS `sig=`, ...).
_SHOWN_QUERY = frozenset({"api-version"})
# user info runs to the last "@" of the authority (a password may hold "@" itself)
_URL_CREDENTIALS = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s?#]*@", re.IGNORECASE)
_KEY_LIKE = re.compile(
    r"\b(?:sk-[A-Za-z0-9_*\-]{8,}|AIza[0-9A-Za-z_\-]{20,})"
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"
)

# names of environment variables that hold credentials, as providers and scaffolds name them
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)


def load_api_key(
    key_file: Path | str | None = None,
    env_names: Iterable[str] = (API_KEY_ENV,),
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The key from `key_file` (first line, stripped) if given, else from the first of
    `env_names` that is set, else None."""
    if key_file is not None:
        path = Path(key_file)
        names = " or ".join(env_names)
        try:
            text = read_text_capped(path, "key file", MAX_KEY_FILE_BYTES)
        except UsageError as exc:
            raise UsageError(
                f"cannot read the judge API key file: {exc}; fix the path or set {names} instead"
            ) from None
        key = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not key:
            raise UsageError(f"{path}: the judge API key file is empty")
        return key
    environ = os.environ if environ is None else environ
    for name in env_names:
        if environ.get(name):
            return environ[name]
    return None


def redact_url(url: str) -> str:
    """`https://user:pw@host/v1` -> `https://***@host/v1`: credentials never reach output."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))


def redact_endpoint(url: str) -> str:
    """A judge endpoint as it may be shown and stored: no user info, and of its query only
    `api-version` (`?key=`, `?subscription-key=`... go)."""
    parts = urlsplit(redact_url(url))
    host = parts.netloc.rsplit("@", 1)[-1]
    query = [(k, v) for k, v in parse_qsl(parts.query) if k.lower() in _SHOWN_QUERY]
    return urlunsplit((parts.scheme, host, parts.path, urlencode(query), ""))


def endpoint_secrets(url: str) -> list[str]:
    """The credentials a judge endpoint carries: its user info (as written, decoded, and
    as the Basic authorization it is sent as) and its query's values but `api-version`'s."""
    parts = urlsplit(url)
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        user, _, password = userinfo.partition(":")
        plain = f"{unquote(user)}:{unquote(password)}"
        found += [userinfo, plain, base64.b64encode(plain.encode()).decode()]
        found += [password, unquote(password)] if password else []
    found += [v for k, v in parse_qsl(parts.query) if k.lower() not in _SHOWN_QUERY]
    return found


def env_secrets(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values in `env` (a project's `.env` under the environment) whose names say they
    are credentials (`*_KEY`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`...): a project's judge
    runs with them, so its errors may echo any of them. Values under 8 characters are not
    keys (`AUTH_MODE=true`) and masking them would blank ordinary words."""
    return tuple(
        value for name, value in env.items() if _SECRET_NAME.search(name) and len(value) >= 8
    )


def redact_secrets(text: str, secrets: Iterable[str]) -> str:
    """`text` with each of `secrets` (of 4 characters or more) replaced by `***`, and a
    secret's start that ends `text` too (what was left of it where the text was cut)."""
    for secret in secrets:
        if len(secret) < 4:
            continue
        text = text.replace(secret, "***")
        for length in range(len(secret) - 1, 3, -1):
            if text.endswith(secret[:length]):
                text = text[:-length] + "***"
                break
    return text


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with each of `secrets`, URL credentials, bearer tokens and strings shaped like
    well-known API keys replaced by `***` (a server's error message may echo any of them)."""
    text = redact_secrets(text, secrets)
    text = _URL_CREDENTIALS.sub(r"\1***@", text)
    return _KEY_LIKE.sub("***", text)
