"""The floor `bench/judge_cost.py` reports (issue 37): the least a request pattern that
shows the judge each scored step once can cost in batch mode."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from agentjudge.judge.price import Rates
from agentjudge.scoring.prompts import COMPACT_CHARS

BENCH = Path(__file__).parents[2] / "bench" / "judge_cost.py"


def _bench() -> ModuleType:
    """bench/judge_cost.py, a script (mypy reads bench/ as top-level modules): loaded from
    its file, under its own name."""
    spec = importlib.util.spec_from_file_location("judge_cost", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


cost = _bench()
floor_figures, floor_usd = cost.floor_figures, cost.floor_usd
step_text_tokens, trajectory = cost.step_text_tokens, cost.trajectory
RATES = Rates(input=1.0, cache_read=0.1, cache_write=1.25, output=8.0)


def test_the_floor_bills_the_step_text_once_the_rest_as_cache_reads_all_at_half() -> None:
    # 400k step tokens at $1, the other 600k input at $0.1, 100k output at $8; halved
    usd = floor_usd(RATES, input_tokens=1_000_000, step_tokens=400_000, output_tokens=100_000)
    assert usd == pytest.approx((0.4 + 0.06 + 0.8) / 2)
    # never a cache write, and never fewer than the step tokens at the input rate
    assert floor_usd(RATES, 400_000, 400_000, 0) == pytest.approx(0.2)


def test_the_floor_figures_give_its_share_and_the_part_no_layout_removes() -> None:
    used = {"input_tokens": 1_000_000, "output_tokens": 100_000}
    figures = floor_figures(RATES, used, 400_000, 450_000, contrib_usd=2.52)
    assert figures == {
        "step_text_tokens": 400_000,
        "step_text_tokens_as_the_adapter_sends_them": 450_000,
        "other_input_tokens_at_cache_read": 600_000,
        "output_tokens": 100_000,
        "usd": 0.63,
        "share_of_contrib": 0.25,
        # the step text and the output alone: (0.4 + 0.8) / 2 of 2.52
        "step_text_and_output_share": 0.238,
    }


def test_the_step_text_is_each_judged_step_as_its_prompt_renders_it(tmp_path: Path) -> None:
    steps = 6
    run = trajectory(3, steps)
    (tmp_path / "t.json").write_text(json.dumps(run))
    tokens = step_text_tokens(tmp_path, "openai", "gpt-5-mini")
    # one a scored step (the task's user step too), each the whole step as compact JSON
    # (the bench's tool results are short enough that none is cut; the rendering names a
    # few fields its own way), at the mimics' 4 characters a token: not the shortened
    # form context steps get, nor the whole prompt
    assert len(tokens) == steps
    for count, step in zip(tokens, run["steps"], strict=True):
        whole = len(json.dumps(step, separators=(",", ":"))) // 4
        assert 0.8 * whole <= count <= 1.05 * whole
    assert max(tokens) > 4 * COMPACT_CHARS // 4  # a file read, longer than a context step
