"""Which eval_config.yaml and which cases a grading run uses, chosen as graph-agents-cli
chooses them: the flags first, else what the project and the traces say."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentjudge.cases.loading.config import EvalConfig, load_config
from agentjudge.cases.loading.dataset import (
    Case,
    Dataset,
    PlannedCases,
    cases_from_raw,
    stream_dataset,
)
from agentjudge.cases.loading.expect import normalise_expect
from agentjudge.cases.loading.project import (
    DATASETS_DIR,
    DEFAULT_CONFIG,
    DEFAULT_DATASET,
    caller_dir,
    json_files,
)
from agentjudge.cases.loading.traces import TraceSet
from agentjudge.errors import UsageError


def run_config(root: Path | None, value: str | None) -> EvalConfig:
    """`--config`, else the project's `tests/eval/eval_config.yaml`, else the defaults."""
    if value:
        # graph-agents-cli's order: from where the user stands, else under the project
        path = Path(value)
        if not path.is_absolute():
            here = caller_dir() / path
            path = root / path if root is not None and not here.exists() else here
        return load_config(path, required=True)
    return load_config(root / DEFAULT_CONFIG if root else None)


def planned_cases(
    root: Path | None, value: str | None, traces: TraceSet, note: Callable[[str], None]
) -> PlannedCases:
    """`--dataset`; else the traces' recorded dataset if unchanged; else the cases the
    traces embed; else one expectation-free case per trace (accounting only). Dataset
    files and embedded cases are streamed: each case is checked as the run reaches it."""
    if value:

        def compare(digest: str) -> None:
            if traces.dataset_hash and digest != traces.dataset_hash:
                note(
                    "--dataset differs from the dataset the traces were generated from (hash "
                    "mismatch): its expectations are applied to replies made for another "
                    "version, and cases absent from the traces count as missing; the results "
                    "record both hashes"
                )

        return stream_dataset(_dataset_files(root or Path.cwd(), value), compare)
    recorded = traces.meta.get("dataset_paths") or []
    if recorded and root is not None and isinstance(recorded, list):
        files = [root / str(p) for p in recorded]
        if all(f.is_file() for f in files):
            try:
                digest = _checked_hash(files)
            except UsageError as exc:
                note(f"the recorded dataset is unusable ({exc}); using the cases in the traces")
            else:
                if digest == traces.dataset_hash:
                    return stream_dataset(files)
                note("the dataset changed since the traces were made; using the cases in them")
    if traces.embedded:
        return cases_from_raw(traces.embedded_cases(), f"traces {', '.join(traces.files)}")
    if traces.traces:
        note(
            "the traces carry no case definitions: grading case accounting only; pass "
            "--dataset to apply the expectations"
        )
    expect = normalise_expect(None, "accounting")
    cases = [
        Case(cid, [{"role": "user", "content": ""}], dict(expect), {}, None, None, {"id": cid})
        for cid in traces.traces
    ]
    return Dataset(cases, traces.dataset_hash or "")


def _checked_hash(files: list[Path]) -> str:
    """The hash of dataset files, every case read and checked (and none kept) on the way."""
    stream = stream_dataset(files)
    for _ in stream:
        pass
    return stream.hash


def _dataset_files(root: Path, value: str) -> list[Path]:
    path = Path(value)
    hint = f" (the default is {DEFAULT_DATASET} or every file in {DATASETS_DIR})"
    return json_files(path if path.is_absolute() else root / path, "--dataset", hint)
