"""Where a graph-agents-cli project keeps things, and what its settings say.

A project is the nearest folder (from the working directory up) holding
`graph-agents-cli-manifest.yaml`. Outside one, `grade` still works on explicit paths.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from dotenv import dotenv_values

from agentjudge.errors import UsageError
from agentjudge.files import read_text_capped
from agentjudge.judge.defaults import GRADE_CALLS
from agentjudge.nesting import load_yaml

MANIFEST = "graph-agents-cli-manifest.yaml"
DATASETS_DIR = "tests/eval/datasets"
DEFAULT_DATASET = f"{DATASETS_DIR}/basic-dataset.json"
DEFAULT_CONFIG = "tests/eval/eval_config.yaml"
TRACES_DIR = "artifacts/traces"
RESULTS_DIR = "artifacts/grade_results"
ARTIFACTS_DIR = "artifacts"
DEFAULT_JUDGE_TIMEOUT = 600.0  # seconds for the whole judging phase, as graph-agents-cli
DEFAULT_JUDGE_CALL_TIMEOUT = GRADE_CALLS.timeout  # seconds for one attempt of one judge call

# Only these prefixes of the process environment matter to grading (graph-agents-cli's own,
# and the judge providers' keys and URLs); the rest is ignored so that nothing unrelated (or
# secret) is ever carried along.
_ENV_PREFIXES = (
    "MODEL_",
    "JUDGE_",
    "TRACE_",
    "AGENTJUDGE_JUDGE_API_KEY",
    "OPENAI_",
    "AZURE_OPENAI_",
    "ANTHROPIC_",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)


def find_root(start: Path | None = None) -> Path | None:
    """The project folder holding the manifest, searching upwards; None outside a project."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / MANIFEST).is_file():
            return folder
    return None


def settings(root: Path | None) -> dict[str, str]:
    """The project's `.env` overlaid by the process environment (which wins)."""
    values: dict[str, str] = {}
    if root is not None and (root / ".env").is_file():
        values = {k: v for k, v in dotenv_values(root / ".env").items() if v is not None}
    for key, value in os.environ.items():
        if key in values or key.startswith(_ENV_PREFIXES):
            values[key] = value
    return values


@dataclass(frozen=True, slots=True)
class Identity:
    """What the results record about the agent: its model, version and capture mode."""

    model: str | None
    agent_version: str | None
    capture: str


def identity(root: Path | None, env: dict[str, str]) -> Identity:
    """The agent's identity from the manifest, `.env` and `pyproject.toml`; None outside."""
    manifest = _yaml_mapping(root / MANIFEST) if root else {}
    params = manifest.get("create_params")
    params = params if isinstance(params, dict) else {}
    provider = env.get("MODEL_PROVIDER") or params.get("model_provider")
    name = env.get("MODEL_NAME") or params.get("model")
    model = f"{provider}/{name}" if provider and name else (name or provider)
    return Identity(
        model=str(model) if model else None,
        agent_version=_project_version(root),
        capture=env.get("TRACE_CAPTURE") or "metadata",
    )


def json_files(path: Path, flag: str, hint: str = "") -> list[Path]:
    """`path` itself, or a folder's `*.json` files in sorted order; a usage error naming
    `flag` when there is nothing there."""
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise UsageError(f"{flag} {path}: the folder has no *.json files")
        return files
    if not path.is_file():
        raise UsageError(f"{flag} {path}: no such file or folder{hint}")
    return [path]


def latest_traces(root: Path) -> Path | None:
    """The newest `artifacts/traces/traces_*.json` by modification time."""
    folder = root / TRACES_DIR
    if not folder.is_dir():
        return None
    # a link's own time: its target may be missing or outside (`trace_files` refuses those)
    files = sorted(folder.glob("traces_*.json"), key=lambda p: p.lstat().st_mtime)
    return files[-1] if files else None


def output_path(root: Path, value: str | None, folder: str, prefix: str) -> Path:
    """Where a results-like file goes: `value` (a file, or a folder for a timestamped name),
    else `<root>/<folder>/<prefix>_<timestamp>.json`. Relative paths are under `root`."""
    if not value:
        return timestamped(root / folder, prefix)
    path = Path(value)
    if not path.is_absolute():
        path = root / path
    if value.endswith(("/", os.sep)) or path.is_dir():
        return timestamped(path, prefix)
    return path


def timestamped(folder: Path, prefix: str, now: datetime | None = None) -> Path:
    """`<folder>/<prefix>_<YYYYmmdd_HHMMSS>.json` (local time); a name already taken gets
    `_2`, `_3`, ... before the extension. Nothing is created."""
    stem = f"{prefix}_{(now or datetime.now()).astimezone().strftime('%Y%m%d_%H%M%S')}"
    candidate = folder / f"{stem}.json"
    counter = 2
    while candidate.exists():
        candidate = folder / f"{stem}_{counter}.json"
        counter += 1
    return candidate


def caller_dir() -> Path:
    """Where the user stands: the working directory, or, when graph-agents-cli runs us from
    the project folder through our extension, the directory it was run from (which the
    extension's launcher passes in `AGENTJUDGE_CALLER_DIR`)."""
    caller = os.environ.get("AGENTJUDGE_CALLER_DIR")
    if caller and Path(caller).is_dir():
        return Path(caller)
    return Path.cwd()


def agent_package(root: Path | None) -> str:
    """The project's agent package (the manifest's `agent_directory`), `app` by default:
    where `app_utils/model.py` and its `get_judge_model()` are."""
    name = (_yaml_mapping(root / MANIFEST) if root else {}).get("agent_directory")
    return name if isinstance(name, str) and name.isidentifier() else "app"


def _yaml_mapping(path: Path) -> dict[str, Any]:
    """The manifest's mapping; missing or not YAML is none (graph-agents-cli's defaults
    hold), but too large, not UTF-8 or nested too deeply is a one-line usage error."""
    if not path.is_file():
        return {}
    try:
        data = load_yaml(read_text_capped(path, "the project manifest"), str(path))
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def _project_version(root: Path | None) -> str | None:
    if root is None or not (root / "pyproject.toml").is_file():
        return None
    try:
        with open(root / "pyproject.toml", "rb") as handle:
            project = tomllib.load(handle).get("project") or {}
    except (OSError, tomllib.TOMLDecodeError):
        return None
    version = project.get("version") if isinstance(project, dict) else None
    return str(version) if version is not None else None
