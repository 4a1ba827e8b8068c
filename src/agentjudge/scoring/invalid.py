"""What a job says of its invalid input: each bad file with its rule, as `validate` does.

A job that fails on invalid input (`fail_fast`), or whose every root is invalid, would
otherwise say only `invalid_input`: its `error.message` and its console name the files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentjudge.atif import Node
from agentjudge.errors import Problem

# problems named in one message; the results' nodes (and `validate`) hold all of them
LISTED = 10


def input_problems(roots: Iterable[Node]) -> list[Problem]:
    """Every problem of every node of `roots`, in the roots' order."""
    return [problem for root in roots for node in root.walk() for problem in node.problems]


def invalid_input_message(problems: Sequence[Problem], limit: int = LISTED) -> str | None:
    """`2 invalid trajectory file(s): a.json: $: ... [rule]; b.json: ...`, the first
    `limit` problems and a count of the rest; None when there is none."""
    if not problems:
        return None
    files = len({problem.file for problem in problems})
    shown = "; ".join(str(problem) for problem in problems[:limit])
    more = ""
    if len(problems) > limit:
        more = f"; … and {len(problems) - limit} more (agentjudge validate lists them)"
    return f"{files} invalid trajectory file(s): {shown}{more}"
