"""Which approval gate an ``expect.approvals[].match`` names, as graph-agents-cli decides it.

A ``match`` gives ``operation_id``, or ``method`` and ``path``, or all three, and optionally
``api``; every key it gives must agree with the recorded gate. ``path`` is a template whose
``{name}`` placeholders each cover one non-empty segment. Both sides are compared after the
same normalisation (percent-escapes of unreserved characters decoded, other escapes
upper-cased, one trailing slash dropped), so ``/orders/%4F1/`` is ``/orders/O1``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

HTTP_METHODS: tuple[str, ...] = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
MATCH_KEYS: tuple[str, ...] = ("api", "operation_id", "method", "path")

_SEGMENT = re.compile(r"^(?:[^/?#\s{}]|\{[A-Za-z_][A-Za-z0-9_]*\})+$")
_PLACEHOLDER = re.compile(r"(\{[^/{}]+\})")
_SPACE_BY_DOT = re.compile(r"\s\.|\.\s")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def match_problem(match: object) -> str | None:
    """What makes ``match`` unable to name a gated call, or None when it is valid."""
    if not isinstance(match, Mapping) or not match:
        return 'must be an object like {"operation_id": "..."} or {"method": "...", "path": "..."}'
    unknown = sorted(str(key) for key in match if key not in MATCH_KEYS)
    if unknown:
        return f"unknown key(s) {', '.join(unknown)} (known: {', '.join(MATCH_KEYS)})"
    for key in MATCH_KEYS:
        if key in match and not (isinstance(match[key], str) and match[key].strip()):
            return f"{key} must be a non-empty string"
    if ("method" in match) != ("path" in match):
        return "method and path go together"
    if "operation_id" not in match and "method" not in match:
        return "needs operation_id, or method and path"
    if "method" in match and match["method"].upper() not in HTTP_METHODS:
        return f"unknown HTTP method {match['method']!r} (one of {', '.join(HTTP_METHODS)})"
    if "path" in match:
        problem = path_template_problem(match["path"])
        if problem:
            return f"path {problem}"
    return None


def path_template_problem(template: str) -> str | None:
    """What makes ``template`` an invalid path template, or None.

    A template starts with ``/`` and may end with one ``/``; each segment is literal
    characters and ``{name}`` placeholders, and its percent-decoded text is not ``.`` or
    ``..`` and holds nothing a server could route elsewhere (`_segment_text_problem`).
    """
    if not template.startswith("/"):
        return "must start with /"
    body = template[1:].removesuffix("/")
    if not body:
        return None
    for segment in body.split("/"):
        if segment in ("", ".", ".."):
            return "must not have empty, '.' or '..' segments"
        if not _SEGMENT.match(segment):
            return (
                "segments hold literal characters and {name} placeholders only "
                "(no query, fragment or whitespace)"
            )
        text = unquote(_PLACEHOLDER.sub("x", segment))
        if text in (".", ".."):
            return "must not have '.' or '..' segments, percent-encoded ones included (%2E)"
        problem = _segment_text_problem(text)
        if problem:
            return f"has a segment that {problem}"
    return None


def _segment_text_problem(text: str) -> str | None:
    """Why a decoded segment could reach another endpoint than the one it names, or None."""
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
        return "holds a control character (percent-encoded ones included, such as %00)"
    if text[:1].isspace() or text[-1:].isspace():
        return "starts or ends with whitespace (percent-encoded included, such as %20)"
    if _SPACE_BY_DOT.search(text):
        return "has whitespace beside a dot (percent-encoded included, such as a%20.json)"
    if "/" in text or "\\" in text:
        return "holds a backslash or an encoded slash (%5C, %2F)"
    if ";" in text:
        return "holds ';' (or %3B), which some servers drop together with what follows"
    return None


def normalise_path(path: str) -> str:
    """``path`` with unreserved escapes decoded, other escapes upper-cased and one trailing
    slash dropped: the form in which a template and a recorded path are compared."""

    def spell(escape: re.Match[str]) -> str:
        char = chr(int(escape.group(0)[1:], 16))
        return char if char in _UNRESERVED else escape.group(0).upper()

    path = _ESCAPE.sub(spell, path)
    return path[:-1] if len(path) > 1 and path.endswith("/") else path


@functools.lru_cache(maxsize=1024)
def _template_pattern(template: str) -> re.Pattern[str]:
    """The regular expression a normalised template stands for (case-sensitive)."""
    segments = []
    for segment in template.split("/"):
        segments.append(
            "".join(
                "[^/]+" if part.startswith("{") and part.endswith("}") else re.escape(part)
                for part in _PLACEHOLDER.split(segment)
            )
        )
    return re.compile("/".join(segments))


def path_matches(template: str, path: str) -> bool:
    """Whether the recorded ``path`` is one the ``template`` covers."""
    template, path = normalise_path(template), normalise_path(path)
    return template == path or _template_pattern(template).fullmatch(path) is not None


def call_matches(match: Mapping[str, str], gate: Mapping[str, Any]) -> bool:
    """Whether a valid ``match`` names the recorded ``gate``; ``method`` ignores case."""
    if "api" in match and gate.get("api") != match["api"]:
        return False
    if "operation_id" in match and gate.get("operation_id") != match["operation_id"]:
        return False
    if "method" in match and str(gate.get("method") or "").upper() != match["method"].upper():
        return False
    if "path" in match:
        path = gate.get("path")
        if not isinstance(path, str) or not path_matches(match["path"], path):
            return False
    return True


def describe_match(match: Mapping[str, Any]) -> str:
    """A match as reasons print it: ``[api: ][operation_id ][METHOD path]``."""
    parts = []
    if match.get("operation_id"):
        parts.append(str(match["operation_id"]))
    if match.get("method"):
        parts.append(f"{str(match['method']).upper()} {match.get('path')}")
    text = " ".join(parts)
    return f"{match['api']}: {text}" if match.get("api") else text


def describe_gate(gate: Mapping[str, Any]) -> str:
    """A recorded gate as reasons print it: ``[operation_id ]METHOD path (status)``."""
    call = f"{gate.get('method') or '?'} {gate.get('path') or '?'}"
    if gate.get("operation_id"):
        call = f"{gate['operation_id']} {call}"
    return f"{call} ({gate.get('status') or 'undecided'})"
