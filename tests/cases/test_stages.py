"""The stages of case grading: each `__init__` re-exports its public names, and importing a
stage's package loads none of its modules. That imports go one way, stage to stage, is
checked with the whole package's layers (tests/test_layers.py)."""

from __future__ import annotations

import ast
import importlib
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
