"""`agentjudge metric list`: every check, modifier, judge and custom metric a case may use."""

from __future__ import annotations

from typing import Any

from agentjudge.cases.loading.config import EvalConfig
from agentjudge.cases.loading.expect import CHECK_DESCRIPTIONS, MODIFIERS
from agentjudge.cases.loading.judge_metrics import BUILTIN_JUDGES


def catalog(config: EvalConfig | None) -> dict[str, Any]:
    """The catalogue; built-in judges always show their default scale, and the project's
    own judges, custom metrics and quality metrics come from its configuration."""
    judges: list[dict[str, Any]] = [
        {"name": n, "scale": s.scale, "description": s.description, "source": "built-in"}
        for n, s in BUILTIN_JUDGES.items()
    ]
    custom: list[dict[str, Any]] = []
    quality: list[str] = []
    if config is not None:
        source = str(config.source)
        judges += [
            {
                "name": name,
                "scale": spec.scale,
                "description": spec.description or "custom rubric",
                "source": source,
            }
            for name, spec in config.judges.items()
            if name not in BUILTIN_JUDGES
        ]
        custom = [
            {
                "name": name,
                "callable": metric.callable,
                "threshold": metric.threshold,
                "description": metric.description,
                "source": source,
            }
            for name, metric in config.custom_metrics.items()
        ]
        quality = sorted(config.quality_metrics)
    return {
        "checks": [{"name": n, "description": d} for n, d in CHECK_DESCRIPTIONS.items()],
        "modifiers": [
            {"name": n, "description": m.description, "default": m.default}
            for n, m in MODIFIERS.items()
        ],
        "judges": judges,
        "custom_metrics": custom,
        "quality_metrics": quality,
    }
