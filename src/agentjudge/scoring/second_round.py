"""One more try for steps whose judge calls failed after all their retries.

A judge that fails a call three times in a row may be answering again a minute later (an
overloaded endpoint, a deploy, a network blip): throwing the run away then, as `fail_fast`
would, loses hours of work for one unlucky step. So such a step waits until nothing else in
the run is being judged (the rest is done, or waiting for its own second try), then a pause,
then is judged once more; only a step that fails again fails its node.
"""

from __future__ import annotations

import asyncio

from agentjudge.judge.client import GARBLED_ANSWERS, JudgeOutcome

# What may pass: a call that got no answer, or the server's (5xx, 429, 408, 409, a 200 that
# is no completion). A refusal (401, 404, 400...) or an unusable verdict would be the same
# the second time.
_TRANSIENT = GARBLED_ANSWERS | {"timeout", "transport_error", "http_408", "http_409", "http_429"}


def worth_another_try(outcome: JudgeOutcome) -> bool:
    """A failed call that a later try might turn into a verdict."""
    if outcome.verdict is not None or outcome.protocol or outcome.error is None:
        return False
    return outcome.error in _TRANSIENT or outcome.error.startswith("http_5")


class SecondRound:
    """Nodes judging (`started`/`finished`) and nodes waiting for their steps' second try
    (`turn`): when none is judging, the waiting ones go, after `pause` seconds."""

    def __init__(self, pause: float) -> None:
        self._pause = pause
        self._judging = 0
        self._waiting: list[asyncio.Future[None]] = []
        self._release: asyncio.TimerHandle | None = None
        self.steps = 0  # steps judged a second time
        self.recovered = 0  # of them, those that got a verdict

    def started(self) -> None:
        self._judging += 1

    def finished(self) -> None:
        self._judging -= 1
        self._maybe_release()

    async def turn(self) -> None:
        """Wait until nothing else is judged, and the pause; the caller stays `started`."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        self._judging -= 1
        self._maybe_release()
        try:
            await waiter
        finally:
            self._judging += 1

    def count(self, retried: list[JudgeOutcome]) -> None:
        self.steps += len(retried)
        self.recovered += sum(o.verdict is not None for o in retried)

    def _maybe_release(self) -> None:
        if self._judging == 0 and self._waiting and self._release is None:
            self._release = asyncio.get_running_loop().call_later(self._pause, self._go)

    def _go(self) -> None:
        self._release = None
        waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            if not waiter.done():
                waiter.set_result(None)
