"""`eval_config.yaml`: the judge, judge overrides, custom metrics and quality metrics.

The keys and their rules are graph-agents-cli's; every problem is one line (exit 3) naming
the file and the key, found when the file loads, before any judge call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentjudge.cases.loading.dataset import threshold_spec
from agentjudge.cases.loading.judge_metrics import BUILTIN_JUDGES, JudgeSpec, merge_judge
from agentjudge.errors import UsageError, clip
from agentjudge.files import read_text_capped
from agentjudge.judge.samples import MAX_SAMPLES
from agentjudge.nesting import load_yaml

TOP_KEYS = ("judge", "quality_metrics", "judges", "custom_metrics")
# temperature and samples are agentjudge's own (graph-agents-cli has neither)
JUDGE_KEYS = ("provider", "model", "max_tool_result_chars", "temperature", "samples")
DEFAULT_MAX_TOOL_RESULT_CHARS = 50_000


@dataclass(frozen=True, slots=True)
class CustomMetric:
    """A project callable `module:function` scoring `(case, trace)`."""

    name: str
    callable: str
    threshold: float
    description: str = ""


@dataclass(frozen=True, slots=True)
class QualityMetric:
    """A metric allowed to miss its threshold on up to `1 - min_pass_rate` of the cases."""

    name: str
    threshold: float
    min_pass_rate: float = 1.0


@dataclass(slots=True)
class EvalConfig:
    """The parsed configuration; `source` is None when the defaults are used."""

    judge_provider: str | None = None
    judge_model: str | None = None
    max_tool_result_chars: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS
    judge_temperature: float | None = None  # None: not set (the flag, else 0)
    judge_samples: int | None = None  # None: not set (the flag, else 1)
    judges: dict[str, JudgeSpec] = field(default_factory=lambda: dict(BUILTIN_JUDGES))
    custom_metrics: dict[str, CustomMetric] = field(default_factory=dict)
    quality_metrics: dict[str, QualityMetric] = field(default_factory=dict)
    source: Path | None = None

    def metric_names(self) -> set[str]:
        """Every metric a case may declare: judges and custom metrics."""
        return set(self.judges) | set(self.custom_metrics)

    def threshold(self, metric: str, case_spec: dict[str, Any] | None) -> float:
        """The threshold for `metric` on a case: the case's own, else the quality metric's,
        else the judge's, else the custom metric's. None of them is a usage error."""
        if case_spec and case_spec.get("threshold") is not None:
            return float(case_spec["threshold"])
        if metric in self.quality_metrics:
            return self.quality_metrics[metric].threshold
        judge = self.judges.get(metric)
        if judge is not None and judge.threshold is not None:
            return judge.threshold
        if metric in self.custom_metrics:
            return self.custom_metrics[metric].threshold
        raise UsageError(
            f"metric {clip(repr(metric))} has no threshold: set judge.{metric}.threshold on the "
            "case, or "
            f"quality_metrics.{metric}.threshold or judges.{metric}.threshold in eval_config.yaml"
        )


def load_config(path: Path | None, required: bool = False) -> EvalConfig:
    """Read `path`; a missing file means the defaults unless it was asked for (`--config`)."""
    if path is None or not path.is_file():
        if required and path is not None:
            raise UsageError(f"--config {path}: no such file")
        return EvalConfig()
    try:
        data = load_yaml(read_text_capped(path, "--config"), str(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise UsageError(f"{path}: not valid YAML{where}; fix the syntax") from None
    return parse_config(data, path)


def parse_config(data: Any, source: Path | None) -> EvalConfig:
    """Validate a parsed YAML document into an `EvalConfig`."""
    where = str(source) if source else "eval config"
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UsageError(f"{where}: the top level must be a mapping of {', '.join(TOP_KEYS)}")
    unknown = sorted(str(k) for k in data if k not in TOP_KEYS)
    if unknown:
        raise UsageError(
            f"{where}: unknown top-level key(s) {', '.join(unknown)}; known: {', '.join(TOP_KEYS)}"
        )
    judge = data.get("judge") or {}
    if not isinstance(judge, dict):
        raise UsageError(f"{where}: judge: must be a mapping with provider and model")
    unknown = sorted(str(k) for k in judge if k not in JUDGE_KEYS)
    if unknown:
        raise UsageError(
            f"{where}: judge: unknown key(s) {', '.join(unknown)}; known: {', '.join(JUDGE_KEYS)}"
        )
    judges = _judges(data.get("judges"), where)
    custom = _custom_metrics(data.get("custom_metrics"), where)
    both = sorted(set(judges) & set(custom))
    if both:
        raise UsageError(
            f"{where}: {', '.join(both)} is both a judge and a custom metric; rename one"
        )
    provider, model = judge.get("provider"), judge.get("model")
    return EvalConfig(
        judge_provider=str(provider) if provider else None,
        judge_model=str(model) if model else None,
        max_tool_result_chars=_max_chars(judge, where),
        judge_temperature=_temperature(judge.get("temperature"), f"{where}: judge.temperature"),
        judge_samples=_samples(judge.get("samples"), f"{where}: judge.samples"),
        judges=judges,
        custom_metrics=custom,
        quality_metrics=_quality(data.get("quality_metrics"), where, set(judges) | set(custom)),
        source=source,
    )


def _max_chars(judge: dict[str, Any], where: str) -> int | None:
    if "max_tool_result_chars" not in judge:
        return DEFAULT_MAX_TOOL_RESULT_CHARS
    value = judge["max_tool_result_chars"]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(
            f"{where}: judge.max_tool_result_chars: must be a whole number >= 1, or null to "
            f"never cut tool results (got {clip(repr(value))})"
        )
    return value


def _temperature(value: Any, at: str) -> float | None:
    if value is None:
        return None
    number = _number(value, at)
    if not 0.0 <= number <= 2.0:
        raise UsageError(f"{at}: must be between 0 and 2 (got {clip(repr(value))})")
    return number


def _samples(value: Any, at: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SAMPLES:
        raise UsageError(
            f"{at}: must be a whole number from 1 to {MAX_SAMPLES} (got {clip(repr(value))})"
        )
    return value


def _judges(raw: Any, where: str) -> dict[str, JudgeSpec]:
    judges = dict(BUILTIN_JUDGES)
    if raw is None:
        return judges
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: judges: must be a mapping of metric name to its spec")
    for name, entry in raw.items():
        judges[str(name)] = merge_judge(str(name), entry, where)
    return judges


def _custom_metrics(raw: Any, where: str) -> dict[str, CustomMetric]:
    metrics: dict[str, CustomMetric] = {}
    if raw is None:
        return metrics
    if not isinstance(raw, list):
        raise UsageError(f"{where}: custom_metrics: must be a list of 'module:function'")
    for i, item in enumerate(raw):
        at = f"{where}: custom_metrics[{i}]"
        if isinstance(item, str):
            item = {"callable": item}
        if not isinstance(item, dict):
            raise UsageError(f"{at}: must be 'module:function' or a mapping with callable")
        target = item.get("callable") or item.get("function")
        if not isinstance(target, str) or ":" not in target:
            raise UsageError(
                f"{at}.callable: must be 'module:function', e.g. tests.eval.metrics:fn"
            )
        name = str(item.get("name") or target.rsplit(":", 1)[1])
        if name in metrics:
            raise UsageError(
                f"{at}: the name {clip(repr(name))} is used twice; set a distinct name"
            )
        metrics[name] = CustomMetric(
            name=name,
            callable=target,
            threshold=_number(item.get("threshold", 1.0), f"{at}.threshold"),
            description=str(item.get("description") or ""),
        )
    return metrics


def _quality(raw: Any, where: str, known: set[str]) -> dict[str, QualityMetric]:
    metrics: dict[str, QualityMetric] = {}
    if raw is None:
        return metrics
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: quality_metrics: must be a mapping of metric to threshold")
    for name, spec in raw.items():
        at = f"{where}: quality_metrics.{name}"
        spec = threshold_spec(spec)
        if not isinstance(spec, dict):
            raise UsageError(f"{at}: must be a mapping like {{threshold: 4, min_pass_rate: 0.9}}")
        if name not in known:
            raise UsageError(
                f"{at}: not a known judge or custom metric (known: {', '.join(sorted(known))})"
            )
        if spec.get("threshold") is None:
            raise UsageError(f"{at}.threshold: required (a quality metric gates on it)")
        rate = _number(spec.get("min_pass_rate", 1.0), f"{at}.min_pass_rate")
        if not 0.0 <= rate <= 1.0:
            raise UsageError(
                f"{at}.min_pass_rate: must be between 0 and 1 (got {clip(repr(rate))})"
            )
        metrics[str(name)] = QualityMetric(
            str(name), _number(spec["threshold"], f"{at}.threshold"), rate
        )
    return metrics


def _number(value: Any, at: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{at}: must be a number (got {clip(repr(value))})")
    return float(value)
