"""The fixtures copied into tests/fixtures still equal the team's originals in shared/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO

ORIGINALS = REPO.parent / "shared" / "fixtures"
COPIED = (
    "atif",
    "graph-agents-cli",
    "who-and-when",
    "traces/atif-1.8",
    "traces/claude-code",
    "traces/codex",
    "traces/inspect",
    "traces/openinference",
    "traces/otlp-genai",
)


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("folder", COPIED)
def test_a_copied_fixture_folder_equals_its_original(folder: str) -> None:
    if not (ORIGINALS / folder).is_dir():
        pytest.skip(f"no original to compare with: {ORIGINALS / folder} is not beside this clone")
    copy, original = _files(FIXTURES / folder), _files(ORIGINALS / folder)
    assert sorted(copy) == sorted(original)
    changed = [name for name in copy if copy[name] != original[name]]
    assert changed == []


def test_every_copied_folder_has_its_provenance() -> None:
    for folder in COPIED:
        assert (FIXTURES / folder / "PROVENANCE.md").is_file(), folder
    assert (FIXTURES / "PROVENANCE.md").is_file()
