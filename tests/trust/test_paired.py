"""Paired deltas: a planted regression is significant, noise is not, and both are seeded."""

from __future__ import annotations

import random

import pytest

from agentjudge.trust.paired import paired_summary, sign_flip_p_value


def _noise(seed: int, n: int = 100) -> list[float]:
    rng = random.Random(seed)
    return [rng.choice((-0.25, 0.0, 0.25)) for _ in range(n)]


def test_a_regression_on_30_of_100_is_significant() -> None:
    deltas = [-0.5] * 30 + _noise(1, 70)
    summary = paired_summary(deltas, seed=0)
    assert summary.count == 100
    assert summary.mean_delta == pytest.approx(sum(deltas) / 100)
    assert summary.p_value is not None
    assert summary.p_value < 0.01
    assert summary.interval is not None
    assert summary.interval[1] < 0


def test_noise_alone_is_not_significant_in_19_of_20_seeds() -> None:
    significant = 0
    for seed in range(20):
        summary = paired_summary(_noise(100 + seed), seed=seed, resamples=400)
        assert summary.p_value is not None
        assert summary.interval is not None
        significant += summary.p_value < 0.05
        assert summary.interval[0] <= summary.mean_delta <= summary.interval[1]  # type: ignore[operator]
    assert significant <= 2


def test_seeded_and_exact_at_the_edges() -> None:
    deltas = _noise(5)
    assert paired_summary(deltas, seed=3) == paired_summary(deltas, seed=3)
    assert sign_flip_p_value([], seed=0) is None
    assert sign_flip_p_value([0.0, 0.0], flips=99) == 1.0
    # every flip of one nonzero delta is as far from 0: p = 1
    assert sign_flip_p_value([0.3], flips=50) == 1.0
    empty = paired_summary([])
    assert (empty.count, empty.mean_delta, empty.interval, empty.p_value) == (0, None, None, None)


def test_the_normal_limit_agrees_with_exact_flips(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentjudge.trust import paired

    deltas = [-0.5] * 8 + _noise(9, 60)
    exact = sign_flip_p_value(deltas, seed=1, flips=2000)
    monkeypatch.setattr(paired, "MULTINOMIAL_BUDGET", 0)
    limit = sign_flip_p_value(deltas, seed=1, flips=2000)
    assert exact is not None
    assert limit is not None
    assert limit == pytest.approx(exact, abs=0.03)
