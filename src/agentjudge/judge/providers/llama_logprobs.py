"""The embedded judge's server process: llama-cpp-python's OpenAI-compatible server, with each
generated token's log-probabilities read from that token's own logits.

llama-cpp-python answers `logprobs` only for a model loaded with `logits_all`: llama.cpp then
computes the whole vocabulary's logits for every prompt token, and each answer normalizes all
of them again in numpy (`Llama._create_completion`). On a 1,350-token prompt that was 5.5 s of
a 9.7 s call, measured here; a binary verdict needs them for two generated tokens. So the model
is loaded without `logits_all`, and a logits processor (llama-cpp-python's public hook, given
each sampled position's logits before the grammar masks them) keeps the best alternatives of
each generated position. The answer carries them in the OpenAI chat shape that
llama-cpp-python's own server writes, so the client is the same.

Run as `python -m agentjudge.judge.providers.llama_logprobs ARGS`, ARGS being
`python -m llama_cpp.server`'s; only the server's child process imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt
from llama_cpp.server.__main__ import main as serve_main


@dataclass(slots=True)
class _Position:
    """One sampled position: the log-probabilities of its best alternatives."""

    top: list[tuple[int, float]]
    logprobs: npt.NDArray[np.single] | None  # kept until the chosen token is known


@dataclass(slots=True)
class AlternativesRecorder:
    """A logits processor that keeps the `count` most probable tokens of every position it
    sees, and learns each position's chosen token from the input of the next one."""

    count: int
    prompt_tokens: int = -1
    positions: list[_Position] = field(default_factory=list)
    chosen: list[tuple[int, float]] = field(default_factory=list)

    def __call__(
        self, input_ids: npt.NDArray[np.intc], logits: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        if self.prompt_tokens < 0:
            self.prompt_tokens = len(input_ids)
        if self.positions:
            # the previous position's token has been evaluated since: it ends input_ids
            previous = self.positions[-1]
            token = int(input_ids[-1])
            assert previous.logprobs is not None
            self.chosen.append((token, float(previous.logprobs[token])))
            previous.logprobs = None
        shifted = logits - np.max(logits)
        logprobs = shifted - np.log(np.sum(np.exp(shifted, dtype=np.single)))
        best = np.argpartition(logprobs, -self.count)[-self.count :]
        top = sorted(((int(i), float(logprobs[i])) for i in best), key=lambda t: -t[1])
        self.positions.append(_Position(top, logprobs))
        return logits

    def chat_logprobs(self, llama: llama_cpp.Llama, text: str) -> dict[str, Any]:
        """`choices[0].logprobs` as OpenAI's chat API and llama-cpp-python's server write it,
        one entry per token of the answer's `text`."""
        self._close(llama, text)
        content = []
        previous: list[int] = []
        for (token, logprob), position in zip(self.chosen, self.positions, strict=False):
            said = _text(llama, token, previous)
            previous.append(token)
            alternatives = [
                {"token": _text(llama, other, []), "logprob": value, "bytes": None}
                for other, value in position.top
            ]
            if all(other != token for other, _ in position.top):
                alternatives.append({"token": said, "logprob": logprob, "bytes": None})
            content.append(
                {"token": said, "logprob": logprob, "bytes": None, "top_logprobs": alternatives}
            )
        return {"content": content, "refusal": None}

    def _close(self, llama: llama_cpp.Llama, text: str) -> None:
        """Learn the last position's token, which no later position shows: the end-of-turn
        token when the answer ended (nothing to add), or its last token when `max_tokens`
        cut it off: the rest of `text`, when that is one token."""
        last = self.positions[-1] if self.positions else None
        if last is None or last.logprobs is None:
            return
        known = llama.detokenize([t for t, _ in self.chosen]).decode("utf-8", "ignore")
        rest = text[len(known) :] if text.startswith(known) else ""
        tokens = llama.tokenize(rest.encode(), add_bos=False, special=False) if rest else []
        if len(tokens) == 1:
            self.chosen.append((tokens[0], float(last.logprobs[tokens[0]])))
        last.logprobs = None


def _text(llama: llama_cpp.Llama, token: int, previous: list[int]) -> str:
    said: bytes = llama.detokenize([token], prev_tokens=previous or None)
    return said.decode("utf-8", "ignore")


# mypy does not read llama_cpp (see pyproject.toml), so Llama is Any to it
class AlternativesLlama(llama_cpp.Llama):  # type: ignore[misc]
    """`llama_cpp.Llama` answering a chat request's `logprobs`/`top_logprobs` with the
    alternatives `AlternativesRecorder` kept, whether or not the model has `logits_all`."""

    def create_chat_completion(self, *args: Any, **kwargs: Any) -> Any:
        """llama-cpp-python's chat completion; with `logprobs`, the recorded ones."""
        if not kwargs.get("logprobs") or kwargs.get("stream"):
            return super().create_chat_completion(*args, **kwargs)
        del kwargs["logprobs"]
        count = kwargs.pop("top_logprobs", None) or 1
        recorder = AlternativesRecorder(max(1, min(int(count), 20)))
        kwargs["logits_processor"] = [*(kwargs.get("logits_processor") or []), recorder]
        answer = super().create_chat_completion(*args, **kwargs)
        choice = answer["choices"][0]
        choice["logprobs"] = recorder.chat_logprobs(self, choice["message"]["content"] or "")
        return answer


def main() -> None:
    """Serve as `python -m llama_cpp.server` does, with `AlternativesLlama` as its model."""
    # the server builds its model as `llama_cpp.Llama(...)`, looked up when it loads it
    llama_cpp.Llama = AlternativesLlama
    serve_main()


if __name__ == "__main__":
    main()
