"""Loading: a project's files read and validated, before any check runs or judge is called.

`project` (where things live, the settings), `dataset` with each case's `expect` block
(`expect`, an approval `match` in `approval_match`), `config` (eval_config.yaml, with the
judge metrics it may define in `judge_metrics`), `traces` (an ATIF file read as a trace in
`trajectories`), and `run_inputs` (which config and cases a run uses). What the files are
validated against lives here too, as every problem must surface before anything is spent:
the later stages read the same vocabulary, and `metric_catalog` lists it (`metric list`).

A name loads its module on first use: the CLI reads `project` at start-up, and must not
pay for YAML, datasets or ATIF models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from agentjudge.cases.loading.approval_match import call_matches, describe_gate, describe_match
    from agentjudge.cases.loading.config import (
        CustomMetric,
        EvalConfig,
        QualityMetric,
        load_config,
        parse_config,
    )
    from agentjudge.cases.loading.dataset import (
        Case,
        CaseStream,
        Dataset,
        PlannedCases,
        cases_from_raw,
        load_dataset,
        stream_dataset,
    )
    from agentjudge.cases.loading.expect import (
        CHECK_DESCRIPTIONS,
        CHECKS,
        MODIFIERS,
        SCOPE_ALL_TURNS,
        normalise_expect,
    )
    from agentjudge.cases.loading.judge_metrics import BUILTIN_JUDGES, JudgeSpec, scale_value
    from agentjudge.cases.loading.metric_catalog import catalog
    from agentjudge.cases.loading.project import (
        ARTIFACTS_DIR,
        DATASETS_DIR,
        DEFAULT_CONFIG,
        DEFAULT_DATASET,
        DEFAULT_JUDGE_CALL_TIMEOUT,
        DEFAULT_JUDGE_TIMEOUT,
        RESULTS_DIR,
        Identity,
        agent_package,
        caller_dir,
        find_root,
        identity,
        json_files,
        output_path,
        settings,
        timestamped,
    )
    from agentjudge.cases.loading.run_inputs import planned_cases, run_config
    from agentjudge.cases.loading.traces import TraceSet, load_traces, trace_files
    from agentjudge.cases.loading.trajectories import trace_from_atif

__all__ = [
    "ARTIFACTS_DIR",
    "BUILTIN_JUDGES",
    "CHECKS",
    "CHECK_DESCRIPTIONS",
    "DATASETS_DIR",
    "DEFAULT_CONFIG",
    "DEFAULT_DATASET",
    "DEFAULT_JUDGE_CALL_TIMEOUT",
    "DEFAULT_JUDGE_TIMEOUT",
    "MODIFIERS",
    "RESULTS_DIR",
    "SCOPE_ALL_TURNS",
    "Case",
    "CaseStream",
    "CustomMetric",
    "Dataset",
    "EvalConfig",
    "Identity",
    "JudgeSpec",
    "PlannedCases",
    "QualityMetric",
    "TraceSet",
    "agent_package",
    "call_matches",
    "caller_dir",
    "cases_from_raw",
    "catalog",
    "describe_gate",
    "describe_match",
    "find_root",
    "identity",
    "json_files",
    "load_config",
    "load_dataset",
    "load_traces",
    "normalise_expect",
    "output_path",
    "parse_config",
    "planned_cases",
    "run_config",
    "scale_value",
    "settings",
    "stream_dataset",
    "timestamped",
    "trace_files",
    "trace_from_atif",
]

_HOMES = {
    "approval_match": ("call_matches", "describe_gate", "describe_match"),
    "config": ("CustomMetric", "EvalConfig", "QualityMetric", "load_config", "parse_config"),
    "dataset": (
        "Case",
        "CaseStream",
        "Dataset",
        "PlannedCases",
        "cases_from_raw",
        "load_dataset",
        "stream_dataset",
    ),
    "expect": ("CHECKS", "CHECK_DESCRIPTIONS", "MODIFIERS", "SCOPE_ALL_TURNS", "normalise_expect"),
    "judge_metrics": ("BUILTIN_JUDGES", "JudgeSpec", "scale_value"),
    "metric_catalog": ("catalog",),
    "project": (
        "ARTIFACTS_DIR",
        "DATASETS_DIR",
        "DEFAULT_CONFIG",
        "DEFAULT_DATASET",
        "DEFAULT_JUDGE_CALL_TIMEOUT",
        "DEFAULT_JUDGE_TIMEOUT",
        "RESULTS_DIR",
        "Identity",
        "agent_package",
        "caller_dir",
        "find_root",
        "identity",
        "json_files",
        "output_path",
        "settings",
        "timestamped",
    ),
    "run_inputs": ("planned_cases", "run_config"),
    "traces": ("TraceSet", "load_traces", "trace_files"),
    "trajectories": ("trace_from_atif",),
}

if not TYPE_CHECKING:  # mypy reads the imports above, so an unknown name stays an error
    __getattr__ = lazy_exports(__name__, _HOMES)
