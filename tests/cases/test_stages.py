"""The stages of case grading: each `__init__` re-exports its public names, and importing a
stage's package loads none of its modules. That imports go one way, stage to stage, is
checked with the whole package's layers (tests/test_layers.py)."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import agentjudge.cases

CASES = Path(agentjudge.cases.__file__).parent
STAGES = ("loading", "checking", "judging", "outcome")  # data flows left to right


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_re_exports_its_public_names_from_their_modules(stage: str) -> None:
    package = importlib.import_module(f"agentjudge.cases.{stage}")
    homes = {name: module for module, names in package._HOMES.items() for name in names}
    assert sorted(homes) == sorted(package.__all__)
    assert len(set(package.__all__)) == len(package.__all__)
    for name in package.__all__:
        module = importlib.import_module(f"agentjudge.cases.{stage}.{homes[name]}")
        assert getattr(package, name) is getattr(module, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = package.nothing_here


@pytest.mark.parametrize("stage", STAGES)
def test_type_checkers_see_the_same_names_where_they_live(stage: str) -> None:
    """The `if TYPE_CHECKING:` imports of an `__init__` are the names of `__all__`, each
    from the module `_HOMES` gives (what mypy reads is what runs)."""
    package = importlib.import_module(f"agentjudge.cases.{stage}")
    tree = ast.parse((CASES / stage / "__init__.py").read_text(encoding="utf-8"))
    typed = {
        alias.name: node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and ".cases." in node.module
        for alias in node.names
    }
    homes = {name: module for module, names in package._HOMES.items() for name in names}
    assert typed == {name: f"agentjudge.cases.{stage}.{home}" for name, home in homes.items()}


def test_importing_a_stage_loads_none_of_its_modules() -> None:
    """The CLI reads the project's folders at start-up: that must not load YAML, datasets,
    checks, judges or the gate."""
    code = (
        "import sys\n"
        "import agentjudge.cases.loading.project\n"
        "import agentjudge.cases.checking, agentjudge.cases.judging, agentjudge.cases.outcome\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('agentjudge.cases'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == [
        "agentjudge.cases",
        "agentjudge.cases.checking",
        "agentjudge.cases.judging",
        "agentjudge.cases.loading",
        "agentjudge.cases.loading.project",
        "agentjudge.cases.outcome",
    ]


def test_a_run_of_checks_alone_loads_no_store_and_no_junit_writer(tmp_path: Path) -> None:
    """A run with no judge metric names the verdict store's path (no output may overwrite
    it) but never opens the store, and writes no JUnit unless asked: neither module, nor
    sqlite3, is part of its start-up."""
    case = {"id": "c1", "messages": [{"role": "user", "content": "hi"}], "expect": {}}
    (tmp_path / "dataset.json").write_text(json.dumps({"cases": [case]}))
    trace = {"case_id": "c1", "status": "ok", "response": "hello", "latency_ms": 5}
    (tmp_path / "traces.json").write_text(json.dumps({"traces": [trace]}))
    (tmp_path / "eval_config.yaml").write_text("judge: {provider: null}\n")
    code = (
        "import runpy, sys\n"
        "sys.argv = ['agentjudge', 'grade', '--quiet', '--traces', 'traces.json', '--dataset',"
        " 'dataset.json', '--config', 'eval_config.yaml', '--output', 'results.json']\n"
        "try:\n"
        "    runpy.run_module('agentjudge', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code)\n"
        "wanted = ('agentjudge.judge.store', 'sqlite3', 'agentjudge.report.grade_junit')\n"
        "print(' '.join(m for m in wanted if m in sys.modules) or 'none')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.stdout.splitlines()[-2:] == ["exit 0", "none"], done.stdout + done.stderr
    assert json.loads((tmp_path / "results.json").read_text())["summary"]["passed"] == 1
