"""The embedded judge's server reads each answer token's alternatives from that token's own
logits: the same figures llama-cpp-python gives with `logits_all`, without its cost."""

from __future__ import annotations

import math
import os
from importlib.util import find_spec
from typing import Any

import numpy as np
import pytest

if find_spec("llama_cpp") is None and os.environ.get("AGENTJUDGE_LOCAL_JUDGE_TESTS") != "required":
    pytest.skip("the local extra is not installed", allow_module_level=True)

from agentjudge.judge.providers.llama_logprobs import AlternativesLlama, AlternativesRecorder

WORDS = ["[", "true", "false", ",", "]", "<eot>"]
END = WORDS.index("<eot>")


def text_of(token: int, previous: list[int]) -> str:
    return WORDS[token]


def ends_turn(token: int) -> bool:
    return token == END


def log_softmax(logits: list[float]) -> list[float]:
    top = max(logits)
    total = math.log(sum(math.exp(x - top) for x in logits))
    return [x - top - total for x in logits]


def sample(recorder: AlternativesRecorder, logits: list[float], token: int) -> None:
    """One position: the processor sees its logits, then the sampler picks `token`."""
    given = np.array(logits, dtype=np.single)
    returned = recorder(np.array([END], dtype=np.intc), given)
    assert returned is given  # the logits reach the sampler untouched
    recorder.chose(token)


def test_each_answer_token_comes_with_its_best_alternatives() -> None:
    recorder = AlternativesRecorder(count=2)
    first = [4.0, 0.5, 1.0, 0.0, 0.0, 0.0]
    second = [2.0, 1.0, 3.0, 0.0, 0.0, 0.0]  # "false" and "[" likelier; the grammar took "true"
    sample(recorder, first, 0)
    sample(recorder, second, 1)
    sample(recorder, [0.0, 0.0, 0.0, 0.0, 0.0, 9.0], END)  # the end of the turn
    content: Any = recorder.chat_logprobs(text_of, ends_turn)["content"]
    assert [entry["token"] for entry in content] == ["[", "true"]  # no entry for the end
    expected = log_softmax(second)
    assert content[1]["logprob"] == pytest.approx(expected[1], abs=1e-5)
    alternatives = {a["token"]: a["logprob"] for a in content[1]["top_logprobs"]}
    # the two best, then the chosen one, which was not among them
    assert list(alternatives) == ["false", "[", "true"]
    assert alternatives["false"] == pytest.approx(expected[2], abs=1e-5)
    assert alternatives["true"] == pytest.approx(expected[1], abs=1e-5)
    assert [a["token"] for a in content[0]["top_logprobs"]] == ["[", "false"]


def test_an_answer_cut_off_by_max_tokens_keeps_its_last_token() -> None:
    recorder = AlternativesRecorder(count=1)
    logits = [0.0, 2.0, 1.0, 0.0, 0.0, 0.0]
    sample(recorder, logits, 1)  # max_tokens=1: the answer ends without an end-of-turn token
    (entry,) = recorder.chat_logprobs(text_of, ends_turn)["content"]
    assert entry["token"] == "true"
    assert entry["logprob"] == pytest.approx(log_softmax(logits)[1], abs=1e-5)
    assert [a["token"] for a in entry["top_logprobs"]] == ["true"]


@pytest.mark.local_judge
@pytest.mark.timeout(300)
def test_the_figures_are_llama_cpp_pythons_own() -> None:
    """The same request to llama-cpp-python with `logits_all` (its own logprobs) and to
    `AlternativesLlama` without: the same tokens, log-probabilities and alternatives."""
    import llama_cpp

    from agentjudge.judge.model_cache import ensure_model

    model = str(ensure_model())
    request: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": "You check one step. Answer true or false."},
            {"role": "user", "content": "Task: add 2 and 3. The step: the answer is 6."},
        ],
        "response_format": {
            "type": "json_object",
            "schema": {"type": "array", "items": {"type": "boolean"}, "minItems": 2},
        },
        "max_tokens": 12,
        "temperature": 0.0,
        "logprobs": True,
        "top_logprobs": 5,
    }
    settings: dict[str, Any] = {"n_ctx": 1024, "n_threads": 2, "verbose": False}
    library = llama_cpp.Llama(model, logits_all=True, **settings)
    theirs = library.create_chat_completion(**request)["choices"][0]
    library.close()
    ours_model = AlternativesLlama(model, logits_all=False, **settings)
    ours = ours_model.create_chat_completion(**request)["choices"][0]
    ours_model.close()
    assert ours["message"]["content"] == theirs["message"]["content"]
    expected, got = theirs["logprobs"]["content"], ours["logprobs"]["content"]
    assert len(got) == len(expected) >= 4  # "[", a boolean, ",", a boolean...
    for want, have in zip(expected, got, strict=True):
        assert have["token"] == want["token"]
        assert have["logprob"] == pytest.approx(want["logprob"], abs=1e-4)
        wanted = {a["token"]: a["logprob"] for a in want["top_logprobs"]}
        had = {a["token"]: a["logprob"] for a in have["top_logprobs"]}
        assert had.keys() == wanted.keys()
        for token, logprob in wanted.items():
            assert had[token] == pytest.approx(logprob, abs=1e-4)
