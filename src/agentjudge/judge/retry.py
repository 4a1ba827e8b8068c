"""Retries of one judge call: which failures are tried again, how long to wait, when to stop.

A rate limit (429, or 503 with Retry-After) is waited out, as long as the server asks or
with backoff, within a budget of seconds from the first, and spends no attempt; any other
retryable failure (5xx, a dropped connection, a timeout) spends one of a fixed number, with
exponential backoff and full jitter.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type

from agentjudge.errors import JudgeError

T = TypeVar("T")


class Retryable(Exception):
    """A failed call that sending again may cure, of a fixed `kind` (`http_503`, `timeout`)."""

    def __init__(
        self,
        kind: str,
        retry_after: float | None = None,
        message: str = "",
        rate_limited: bool = False,
    ) -> None:
        super().__init__(kind)
        self.kind = kind
        self.retry_after = retry_after
        self.message = message
        self.rate_limited = rate_limited  # "wait and ask again", not a failure


class RetryPolicy:
    """One call's retries: rate limits waited out within `retry_budget` seconds, other
    failures at most `max_attempts` in all (see the module's docstring)."""

    def __init__(
        self, max_attempts: int, retry_budget: float, initial_backoff: float, max_backoff: float
    ) -> None:
        self._max_attempts = max_attempts
        self._retry_budget = retry_budget
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._failures = 0
        self._rate_limits = 0
        self._deadline: float | None = None
        self.delay = 0.0

    @property
    def limited_for(self) -> float:
        """Seconds since this call's first rate limit (0 before one)."""
        if self._deadline is None:
            return 0.0
        return time.monotonic() - (self._deadline - self._retry_budget)

    @property
    def retry_budget(self) -> float:
        return self._retry_budget

    def exhausted(self, exc: Retryable) -> bool:
        """Count `exc`; True when the call must give up, else `delay` is the wait."""
        if exc.rate_limited:
            self._rate_limits += 1
            now = time.monotonic()
            if self._deadline is None:
                self._deadline = now + self._retry_budget
            self.delay = self._backoff(self._rate_limits, exc)
            return now + self.delay > self._deadline
        self._failures += 1
        self.delay = self._backoff(self._failures, exc)
        return self._failures >= self._max_attempts

    def stop(self, state: RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        assert isinstance(exc, Retryable)
        return self.exhausted(exc)

    def _backoff(self, count: int, exc: Retryable) -> float:
        """Exponential backoff with full jitter after `count` such answers; a server's
        Retry-After is honoured (with a little jitter so retries do not arrive together)."""
        backoff = random.uniform(0, min(self._max_backoff, self._initial_backoff * 2**count))
        if exc.retry_after is not None:
            return exc.retry_after + backoff * 0.1
        return backoff


async def retried(
    attempt: Callable[[], Awaitable[T]],
    policy: Callable[[], RetryPolicy],
    on_retry: Callable[[], None],
    on_wait: Callable[[Retryable, RetryPolicy], None] | None = None,
) -> T:
    """What `attempt()` returns, tried again on `Retryable` as a new `policy()` says (and
    `on_retry()` before each retry, `on_wait(failure, policy)` before each wait, the
    policy's `delay`); a `JudgeError` of the last failure's kind when the policy gives up."""
    try:
        # most calls succeed at once: only a failed call pays for the retry machinery
        return await attempt()
    except Retryable as exc:
        first = exc
    retries = policy()
    if retries.exhausted(first):
        raise JudgeError(first.kind, first.message)

    def waiting(state: RetryCallState) -> None:
        failure = state.outcome.exception() if state.outcome else None
        if on_wait is not None and isinstance(failure, Retryable):
            on_wait(failure, retries)

    if on_wait is not None:
        on_wait(first, retries)
    await asyncio.sleep(retries.delay)
    retrying = AsyncRetrying(
        stop=retries.stop,
        wait=lambda _: retries.delay,
        retry=retry_if_exception_type(Retryable),
        before_sleep=waiting,
        reraise=True,
    )
    try:
        async for each in retrying:
            with each:
                on_retry()
                return await attempt()
    except Retryable as exc:
        raise JudgeError(exc.kind, exc.message) from None
    raise AssertionError("unreachable: tenacity returns or raises")


def retry_after(headers: httpx.Headers) -> float | None:
    """The wait a server asks for: `retry-after-ms` (Azure OpenAI's), else `Retry-After`
    in seconds or as an HTTP date; at most two minutes."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            seconds = _seconds_until(value) if name == "retry-after" else float("nan")
        if seconds == seconds:  # not NaN
            return min(max(seconds, 0.0), 120.0)
    return None


def _seconds_until(date: str) -> float:
    """Seconds from now to an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`); NaN if it is none."""
    try:
        when = email.utils.parsedate_to_datetime(date)
    except (TypeError, ValueError):
        return float("nan")
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - datetime.now(UTC)).total_seconds()
