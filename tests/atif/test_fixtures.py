"""Every real ATIF file in tests/fixtures/atif loads, or is rejected, as its PROVENANCE.md says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentjudge.atif import Node, load_trees
from agentjudge.atif.document import parse_trajectory
from agentjudge.errors import InputError
from tests.conftest import ATIF_FIXTURES


def _expected() -> dict[str, str]:
    """file -> PASS/FAIL from the harbor column of PROVENANCE.md's table."""
    rows = {}
    for line in (ATIF_FIXTURES / "PROVENANCE.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 13 and cells[1].isdigit():
            rows[cells[2].strip("`")] = cells[-2]
    return rows


EXPECTED = _expected()


def test_provenance_table_covers_every_file() -> None:
    on_disk = {str(p.relative_to(ATIF_FIXTURES)) for p in ATIF_FIXTURES.rglob("*.json")}
    assert set(EXPECTED) == on_disk
    assert set(EXPECTED.values()) == {"PASS", "FAIL"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_loads_or_is_rejected_as_provenance_says(name: str) -> None:
    data = (ATIF_FIXTURES / name).read_bytes()
    if EXPECTED[name] == "PASS":
        parse_trajectory(data, name)
        return
    with pytest.raises(InputError) as caught:
        parse_trajectory(data, name)
    problems = caught.value.problems
    # PROVENANCE.md: every rejected file fails on a step's message or observation content
    assert any(p.path.startswith("$.steps[") for p in problems)
    for problem in problems:
        assert problem.file == name
        assert problem.path.startswith("$.")
        assert re.fullmatch(r"[a-z_]+\.[a-z_]+", problem.rule)
        assert "\n" not in str(problem)


def _tree(path: Path) -> Node:
    (root,) = list(load_trees([path]))
    return root


def test_terminus2_summarization_resolves_its_file_ref_children(atif_fixtures: Path) -> None:
    root = _tree(atif_fixtures / "harbor-golden__t2-context-summarization")
    assert root.valid
    assert root.file.endswith("harbor-golden__t2-context-summarization/trajectory.json")
    names = {c.agent_name: c for c in root.children}
    assert set(names) == {
        "terminus-2-summarization-summary",
        "terminus-2-summarization-questions",
        "terminus-2-summarization-answers",
    }
    assert all(c.kind == "file" and c.depth == 1 and c.parent_step_id == 5 for c in root.children)
    # copied-context steps are context, not steps of the subagent
    assert (
        names["terminus-2-summarization-summary"].steps,
        names["terminus-2-summarization-summary"].context_steps,
    ) == (2, 3)
    assert (
        names["terminus-2-summarization-questions"].steps,
        names["terminus-2-summarization-questions"].context_steps,
    ) == (2, 0)
    assert (
        names["terminus-2-summarization-answers"].steps,
        names["terminus-2-summarization-answers"].context_steps,
    ) == (2, 5)
    assert root.steps == 10
    assert root.subtree_steps == 16
    assert root.omitted == ()


def test_linear_history_is_one_node_without_double_counting(atif_fixtures: Path) -> None:
    roots = list(load_trees([atif_fixtures / "harbor-golden__t2-linear-history"]))
    assert len(roots) == 1, "the continuation file is part of the node, not a root"
    (root,) = roots
    assert root.children == ()
    assert [s.file.name for s in root.segments] == ["trajectory.json", "trajectory.cont-1.json"]
    assert root.steps == 5 + 4  # cont-1's first four steps are copied context
    assert root.context_steps == 4
    # its summarization refs name files this folder does not hold: omitted, not invalid
    assert root.valid
    assert [o.reason for o in root.omitted] == ["file_not_found"] * 3


def test_fast_agent_embedded_subagent_is_a_child(atif_fixtures: Path) -> None:
    root = _tree(atif_fixtures / "fast-agent__golden-multiagent-embedded-v1.7.json")
    (child,) = root.children
    assert child.kind == "embedded"
    assert child.trajectory_id == "traj_child_golden"
    assert child.agent_name == "worker[1]"
    assert child.parent_step_id == 2
    assert child.pointer == "$.subagent_trajectories[0]"
    assert (root.steps, child.steps, root.subtree_steps) == (3, 2, 5)


def test_whole_fixture_folder(atif_fixtures: Path) -> None:
    roots = list(load_trees([atif_fixtures]))
    invalid = sorted(Path(r.file).name for r in roots if not r.valid)
    assert invalid == sorted(n for n, v in EXPECTED.items() if v == "FAIL")
    # referenced files and continuations are children, never roots
    files = {Path(r.file).name for r in roots}
    assert "trajectory.cont-1.json" not in files
    assert not any(f.startswith("trajectory.summarization") for f in files)
    assert len(roots) == len(EXPECTED) - 3 - 1
