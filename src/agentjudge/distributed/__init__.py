"""Scoring on a Ray cluster (`agentjudge score --ray`, docs/distributed.md).

The driver (`driver.py`) loads, validates and plans as a local run does, cuts the roots
into units of whole trees (`units.py`, pure), and has Ray tasks judge them (`worker.py`):
each runs the same per-tree scoring code as a local run (`ScoringJob.judge_trees`) with a
judge client of its own, its share of `concurrency_limit`. The trees come back to the
driver, which aggregates them with the same code as a local run (`ScoringJob.result`).
The verdict store stays on the driver's machine: one actor there (`desk.py`) answers the
workers' look-ups and commits the verdicts they get, as they get them.

`ray` is imported only here, and only when a job asks for it: the rest of agentjudge runs
without it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from agentjudge.errors import UsageError

EXTRA_HINT = "pip install 'agentjudge[ray]'"


def require_ray() -> ModuleType:
    """The `ray` module, or a `UsageError` (exit 3) naming the extra that installs it."""
    try:
        ray = importlib.import_module("ray")
        # `ray.util.scheduling_strategies`, which pins the desk and the embedded judge's
        # servers to their nodes, is a submodule that `import ray` does not always load
        importlib.import_module("ray.util.scheduling_strategies")
        return ray
    except ImportError:
        raise UsageError(
            f"--ray or --ray-address (ray_address) needs Ray, which is not installed: {EXTRA_HINT}"
        ) from None
