"""The few error types a user can cause, and the exit codes they map to.

This module imports nothing from agentjudge: every other module may raise these.

Hierarchy::

    AgentJudgeError            a problem the user can fix; printed once, no traceback
    ├── InputError             an input file (or collection) is not valid  -> exit 1
    └── UsageError             bad flags, missing paths, bad configuration -> exit 3

Anything else that escapes a command is a bug of ours: exit 4, one line saying so (the
traceback only with `--debug`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_JOB_FAILED = 2
EXIT_USAGE = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130


# How much of a value a one-line message shows: input may hold a megabyte where a name goes.
SHOWN_CHARS = 200


def clip(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` cut to `limit` characters, saying how long it was: safe to put in one line."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason an input is rejected: where (file + JSON path), which rule, and what to do.

    Each part is cut (`clip`) so that a line stays readable whatever the input holds: a
    JSON path may carry a key of any length, a message a value of any length.
    """

    file: str
    path: str
    rule: str
    message: str

    def __post_init__(self) -> None:
        for name, limit in (("file", 1000), ("path", SHOWN_CHARS), ("message", 1000)):
            value = getattr(self, name)
            if len(value) > limit:
                object.__setattr__(self, name, clip(value, limit))

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: {self.message} [{self.rule}]"

    def as_dict(self) -> dict[str, str]:
        return {"file": self.file, "path": self.path, "rule": self.rule, "message": self.message}


class AgentJudgeError(Exception):
    """Base of every error a user can cause; the CLI prints it without a traceback."""

    exit_code: int = EXIT_INVALID


class InputError(AgentJudgeError):
    """Input that is not valid; carries every problem found, one line each."""

    exit_code = EXIT_INVALID

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("InputError needs at least one problem")
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class UsageError(AgentJudgeError):
    """A usage or configuration error: what was wrong and how to fix it, in one line."""

    exit_code = EXIT_USAGE


class JudgeError(Exception):
    """A judge call that failed after its retries. `kind` is a fixed, safe error type.

    The message never holds a raw response body or a library's exception text: those may
    carry prompts, secrets or garbage. `detail` is at most a server's own explanation of a
    refused call, redacted and cut by the provider (`Provider.error_message`).
    """

    def __init__(self, kind: str, detail: str = "") -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}" if detail else kind)


class ProtocolError(JudgeError):
    """The judge answered (often HTTP 200) but the answer is not a usable verdict.

    `reply_error` is the error graph-agents-cli's judge runner raises reading the same reply
    (`Type: message`), for a case judge's reply it reads no score from; "" otherwise. It may
    quote the reply, so it is redacted before it is shown (the judge client does it).
    """

    def __init__(self, kind: str, detail: str = "", reply_error: str = "") -> None:
        super().__init__(kind, detail)
        self.reply_error = reply_error
