"""Reading a score on a 1..scale judge scale (the case judges of `agentjudge grade`).

The reply is read the way graph-agents-cli reads it, so the same judge replies give the same
scores: a JSON object with `score` (and `reasoning` or `explanation`), first the whole reply,
then its widest `{...}` span; a bare JSON number; a `score: N` phrase anywhere; the whole
reply as a number. Where graph-agents-cli takes any number, we take only a finite number in
[1, scale], the range the prompt asks for: anything else raises `ProtocolError` with a fixed
kind, and the case is not scored. Where graph-agents-cli's runner fails too (no score, or
a score `float()` refuses), the error also carries its words, which quote the reply
(`ProtocolError.reply_error`): the item's error is worded as graph-agents-cli words it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentjudge.errors import ProtocolError
from agentjudge.judge.verdict import Verdict, number_in, out_of_range

MIN_SCORE = 1.0
MAX_ENUM_SCALE = 100  # a longer enum helps no judge

_JSON_SPAN = re.compile(r"\{.*\}", re.DOTALL)
# graph-agents-cli's phrase, with a lazy gap so "score: -2" reads -2 (out of range), not 2.
_SCORE_PHRASE = re.compile(r"score\W{0,5}?(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# graph-agents-cli quotes this much of the stripped reply when it finds no score
QUOTED_REPLY_CHARS = 200


def parse_scaled_verdict(reply: str, scale: float) -> Verdict:
    """`parse_case_score` as a `Verdict` (what the judge client's requests return)."""
    score, reasoning = parse_case_score(reply, scale)
    return Verdict(score, reasoning)


def parse_case_score(reply: str, scale: float) -> tuple[float, str]:
    """`(score, reasoning)` from a judge reply; raise `ProtocolError` if there is no valid score.

    Kinds: `empty_answer`; `score_missing` (no score anywhere, or `"score": null`);
    `score_not_number` (a bool, a list, text that is not a number...); `score_out_of_range`
    (NaN, an infinity, or outside [1, scale]).
    """
    text = reply.strip()
    if not text:
        raise ProtocolError("empty_answer", reply_error=_no_score(text))
    span = _JSON_SPAN.search(text)
    for candidate in (text, span.group(0)) if span else (text,):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict) and "score" in data:
            reasoning = data.get("reasoning") or data.get("explanation") or ""
            return _in_scale(data["score"], scale), str(reasoning)
        if isinstance(data, int | float) and not isinstance(data, bool):
            return _in_scale(data, scale), ""
    phrase = _SCORE_PHRASE.search(text)
    if phrase:
        return _in_scale(float(phrase.group(1)), scale), text
    if _NUMBER.fullmatch(text):
        return _in_scale(float(text), scale), ""
    raise ProtocolError("score_missing", reply_error=_no_score(text))


def _no_score(text: str) -> str:
    """graph-agents-cli's error for a stripped reply it finds no score in."""
    return f"ValueError: could not parse a score from judge reply: {text[:QUOTED_REPLY_CHARS]!r}"


def _in_scale(value: Any, scale: float) -> float:
    # graph-agents-cli takes float(score): "4" is a score there too, and what float()
    # refuses (null, a list, "four") is its error, in Python's words
    try:
        converted = float(value)
    except (TypeError, ValueError, OverflowError) as exc:
        refused = f"{type(exc).__name__}: {exc}"
        if value is None:
            raise ProtocolError("score_missing", reply_error=refused) from None
        if isinstance(value, int):  # too large for a float: a number, out of any scale
            raise ProtocolError(
                "score_out_of_range", out_of_range(value, MIN_SCORE, scale), refused
            ) from None
        raise ProtocolError("score_not_number", reply_error=refused) from None
    return number_in(converted if isinstance(value, str) else value, "score", MIN_SCORE, scale)


def case_score_schema(scale: float) -> dict[str, Any]:
    """The JSON schema of a case judge's answer, for judges that can be held to one.

    `reasoning` comes first: a model that writes its reasons before the score scores better.
    On a whole-number scale the score is also an `enum` of the whole numbers 1..scale
    (scores are integers on the scale), because grammar-constrained servers such as
    llama.cpp's ignore `minimum`/`maximum` and a small model left free answers "100".
    """
    score: dict[str, Any] = {"type": "number", "minimum": 1, "maximum": _plain(scale)}
    if float(scale).is_integer() and scale <= MAX_ENUM_SCALE:
        score["enum"] = list(range(1, int(scale) + 1))
    return {
        "type": "object",
        "properties": {"reasoning": {"type": "string"}, "score": score},
        "required": ["reasoning", "score"],
        "additionalProperties": False,
    }


def _plain(scale: float) -> int | float:
    # 5 rather than 5.0 in the schema a judge reads
    return int(scale) if float(scale).is_integer() else scale
