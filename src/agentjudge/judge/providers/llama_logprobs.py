"""The embedded judge's server process: llama-cpp-python's OpenAI-compatible server, with each
generated token's log-probabilities read from that token's own logits.

llama-cpp-python answers `logprobs` only for a model loaded with `logits_all`: llama.cpp then
computes the whole vocabulary's logits for every prompt token, and each answer normalizes all
of them again in numpy (`Llama._create_completion`). On a 1,350-token prompt that was about
5.4 s of a 9.7 s call, measured here; a binary verdict needs them for two generated tokens.
So the model is loaded without `logits_all`. A logits processor (llama-cpp-python's public
hook, given each sampled position's logits before the grammar masks them) keeps the best
alternatives of each generated position, and `Llama.sample` tells it the token it picked.
The answer carries them in the OpenAI chat shape that llama-cpp-python's own server writes,
so the client is the same.

Run as `python -m agentjudge.judge.providers.llama_logprobs ARGS`, ARGS being
`python -m llama_cpp.server`'s; only the server's child process imports this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt
from llama_cpp.server.__main__ import main as serve_main


@dataclass(slots=True)
class AlternativesRecorder:
    """A logits processor that keeps the `count` most probable tokens of every position it
    sees; `chose` is told each position's sampled token."""

    count: int
    tops: list[list[tuple[int, float]]] = field(default_factory=list)
    chosen: list[tuple[int, float]] = field(default_factory=list)
    _logprobs: npt.NDArray[np.single] | None = None  # the position awaiting its token

    def __call__(
        self, input_ids: npt.NDArray[np.intc], logits: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        shifted = logits - np.max(logits)
        logprobs = shifted - np.log(np.sum(np.exp(shifted, dtype=np.single)))
        best = np.argpartition(logprobs, -self.count)[-self.count :]
        top = sorted(((int(i), float(logprobs[i])) for i in best), key=lambda t: -t[1])
        self.tops.append(top)
        self._logprobs = logprobs
        return logits

    def chose(self, token: int) -> None:
        """The token sampled at the position seen last."""
        if self._logprobs is not None:
            self.chosen.append((token, float(self._logprobs[token])))
            self._logprobs = None

    def chat_logprobs(
        self, text_of: Callable[[int, list[int]], str], ends_turn: Callable[[int], bool]
    ) -> dict[str, Any]:
        """`choices[0].logprobs` as OpenAI's chat API and llama-cpp-python's server write it:
        one entry per answer token (`text_of(token, tokens before it)`), up to the token
        that ends the turn, which the answer's text leaves out too."""
        content = []
        previous: list[int] = []
        for (token, logprob), top in zip(self.chosen, self.tops, strict=False):
            if ends_turn(token):
                break
            said = text_of(token, previous)
            previous.append(token)
            alternatives = [
                {"token": text_of(other, []), "logprob": value, "bytes": None}
                for other, value in top
            ]
            if all(other != token for other, _ in top):  # the grammar's pick, not a likely one
                alternatives.append({"token": said, "logprob": logprob, "bytes": None})
            content.append(
                {"token": said, "logprob": logprob, "bytes": None, "top_logprobs": alternatives}
            )
        return {"content": content, "refusal": None}


# mypy does not read llama_cpp (see pyproject.toml), so Llama is Any to it
class AlternativesLlama(llama_cpp.Llama):  # type: ignore[misc]
    """`llama_cpp.Llama` answering a chat request's `logprobs`/`top_logprobs` with the
    alternatives `AlternativesRecorder` kept, whether or not the model has `logits_all`.
    Not for streamed answers: those go to llama-cpp-python as they are (and need
    `logits_all` for log-probabilities)."""

    _recorder: AlternativesRecorder | None = None

    def create_chat_completion(self, *args: Any, **kwargs: Any) -> Any:
        """llama-cpp-python's chat completion; with `logprobs`, the recorded ones."""
        if not kwargs.get("logprobs") or kwargs.get("stream"):
            return super().create_chat_completion(*args, **kwargs)
        if kwargs.get("logit_bias"):
            # llama-cpp-python drops every logits processor when it adds its bias one
            raise ValueError("logprobs with logit_bias is not supported by this server")
        del kwargs["logprobs"]
        count = kwargs.pop("top_logprobs", None) or 1
        recorder = AlternativesRecorder(max(1, min(int(count), 20)))
        # first: it sees the model's own logits, before any other processor changes them
        kwargs["logits_processor"] = [recorder, *(kwargs.get("logits_processor") or [])]
        self._recorder = recorder
        try:
            answer = super().create_chat_completion(*args, **kwargs)
        finally:
            self._recorder = None
        answer["choices"][0]["logprobs"] = recorder.chat_logprobs(self._text_of, self._ends_turn)
        return answer

    def sample(self, *args: Any, **kwargs: Any) -> Any:
        """llama-cpp-python's sampling (`generate` calls it once per position), its token
        told to the recorder of the request being answered."""
        token = super().sample(*args, **kwargs)
        if self._recorder is not None:
            self._recorder.chose(int(token))
        return token

    def _text_of(self, token: int, previous: list[int]) -> str:
        said: bytes = self.detokenize([token], prev_tokens=previous or None)
        return said.decode("utf-8", "ignore")

    def _ends_turn(self, token: int) -> bool:
        # as `Llama._create_completion` tells the end of an answer
        return bool(llama_cpp.llama_vocab_is_eog(self._model.vocab, token))


def main() -> None:
    """Serve as `python -m llama_cpp.server` does, with `AlternativesLlama` as its model."""
    # the server builds its model as `llama_cpp.Llama(...)`, looked up when it loads it
    llama_cpp.Llama = AlternativesLlama
    serve_main()


if __name__ == "__main__":
    main()
