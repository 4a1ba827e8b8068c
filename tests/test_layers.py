"""No import runs upward: every module of `src/agentjudge`, read with `ast` (nothing is
imported), imports only its own unit and the layers below it (docs/architecture.md, Layers).

Every import counts: at the top of a module, inside a function (lazy) or under
`if TYPE_CHECKING:` (what a module names is what it depends on)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "agentjudge"

# The layers, lowest first (docs/architecture.md mirrors this table). A unit is a package or
# a module of `agentjudge`; "" is `agentjudge/__init__.py` (the version). A unit imports
# itself and units of the layers before its own, never a unit of its own layer: `scoring`
# and `cases` side by side never import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    (
        "",
        "confine",
        "files",
        "lazy",
        "collisions",
        "nesting",
        "printable",
        "trust",
        "projectenv",
    ),
    ("atif", "results"),
    ("judge", "traces"),
    ("scoring", "cases"),
    ("report", "calibration", "distributed", "testing"),
    ("convert", "review"),
    ("api",),
    ("integrations",),
    ("cli",),
    ("__main__",),
)

# Inside a unit, its stages in the order data goes through them; each imports only itself
# and the stages before it. None stands for the unit's other modules (its `__init__`, a
# re-exporting facade, may import any of its own).
STAGES: dict[str, tuple[str | None, ...]] = {
    # a grading run's stages; `grade.py` runs them
    "cases": ("loading", "checking", "judging", "outcome", None),
    # providers only translate (they reach no client, store or session); the client sends
    # through them; the session holds a job's client, store and event loop
    "judge": (None, "providers", "batching", "client", "session"),
}

# Imports that run upward today, each a known debt: (importer, imported) modules. Empty:
# a new upward import fails `test_no_import_runs_upward`; fix it, or add it here with why.
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset()


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The modules of ours that `name` imports: `from a import b` names `a.b` when that is
    a module (`from agentjudge.cases import judging`), else `a`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: none today, but resolved as Python does
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                found.add(sub if (sub := f"{base}.{alias.name}") in MODULES else base)
    return {module for module in found if module == PACKAGE or module.startswith(PACKAGE + ".")}


def _unit(module: str) -> str:
    """`agentjudge.judge.client` → `judge`; `agentjudge` → `""`."""
    return module.split(".")[1] if "." in module else ""


def _stage(module: str) -> str | None:
    """The stage of its unit a module is in (None: not in a named stage)."""
    parts = module.split(".")
    stages = STAGES.get(_unit(module), ())
    return parts[2] if len(parts) > 2 and parts[2] in stages else None


LAYER_OF = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def upward(importer: str, imported: str) -> str | None:
    """Why `importer` may not import `imported`, or None when it may."""
    source, target = _unit(importer), _unit(imported)
    if source != target:
        if LAYER_OF[target] < LAYER_OF[source]:
            return None
        where = "its own layer" if LAYER_OF[target] == LAYER_OF[source] else "a higher layer"
        return f"{target or PACKAGE} is in {where}"
    stages = STAGES.get(source)
    facade = MODULES[importer].name == "__init__.py" and _stage(importer) is None
    if stages is None or facade:
        return None
    here, there = stages.index(_stage(importer)), stages.index(_stage(imported))
    return None if there <= here else f"{_stage(imported) or 'its top'} is a later stage"


def test_every_unit_of_the_package_is_in_the_table() -> None:
    units = {_unit(module) for module in MODULES}
    assert units == set(LAYER_OF), "put a new package or module in LAYERS"
    assert len(LAYER_OF) == sum(map(len, LAYERS)), "a unit is in two layers"
    for unit, stages in STAGES.items():
        for stage in stages:
            assert stage is None or f"{PACKAGE}.{unit}.{stage}" in MODULES, (unit, stage)


def test_no_import_runs_upward() -> None:
    found = []
    for importer, path in MODULES.items():
        for imported in sorted(_imports(importer, path)):
            why = upward(importer, imported)
            if why is not None and (importer, imported) not in KNOWN_UPWARD:
                found.append(f"{importer} imports {imported}: {why}")
    assert not found, "imports that run upward:\n" + "\n".join(found)


def test_the_known_upward_imports_are_still_there() -> None:
    """A debt paid is taken off the list, so the list stays the truth."""
    for importer, imported in KNOWN_UPWARD:
        assert imported in _imports(importer, MODULES[importer]), (importer, imported)
        assert upward(importer, imported) is not None, (importer, imported)


@pytest.mark.parametrize(
    ("importer", "imported", "allowed"),
    [
        ("agentjudge.report.html", "agentjudge.scoring.scored", True),
        ("agentjudge.scoring.job", "agentjudge.report.html", False),  # upward
        ("agentjudge.scoring.job", "agentjudge.cases.grade", False),  # side by side
        ("agentjudge.files", "agentjudge.errors", True),
        ("agentjudge.errors", "agentjudge.files", False),
        ("agentjudge.cases.outcome.gate", "agentjudge.cases.checking.checks", True),
        ("agentjudge.cases.checking.checks", "agentjudge.cases.outcome.gate", False),
        ("agentjudge.cases.loading.config", "agentjudge.cases.grade", False),
        ("agentjudge.cases.grade", "agentjudge.cases.judging.runner", True),
        ("agentjudge.judge.client", "agentjudge.judge.providers.base", True),
        ("agentjudge.judge.providers.base", "agentjudge.judge.client", False),
        ("agentjudge.judge.store", "agentjudge.judge.session", False),
        ("agentjudge.judge", "agentjudge.judge.client", True),  # its facade
        ("agentjudge.cli.score", "agentjudge", True),
    ],
)
def test_the_rule(importer: str, imported: str, allowed: bool) -> None:
    assert (upward(importer, imported) is None) is allowed
