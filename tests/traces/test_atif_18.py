"""ATIF v1.8 files (tests/fixtures/traces/atif-1.8) load into the trees their PROVENANCE.md
describes, and an audio part reaches the judge as "[audio, N s]"."""

from __future__ import annotations

import pytest

from agentjudge.atif import load_trees
from agentjudge.scoring.steps import FileCache, node_steps
from tests.traces.trees import TRACES, Shape, shape

FOLDER = TRACES / "atif-1.8"

# (agent, steps with copied context, children) per PROVENANCE.md
CASES: dict[str, Shape] = {
    "terminus-2__sum-pass": ("terminus-2", 5, ()),
    "terminus-2__tool-error": ("terminus-2", 5, ()),
    "terminus-2__summarize": (
        "terminus-2",
        10,
        (
            ("terminus-2-summarization-summary", 6, ()),
            ("terminus-2-summarization-questions", 2, ()),
            ("terminus-2-summarization-answers", 8, ()),
        ),
    ),
    "agentloop__atif_v18_multimodal.json": ("synthetic-agent", 2, ()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_atif_18_file_loads_into_its_tree(name: str) -> None:
    (root,) = list(load_trees([FOLDER / name]))
    assert root.valid, root.all_problems()
    assert root.schema_version == "ATIF-v1.8"
    assert shape(root) == CASES[name]


def test_the_judge_reads_an_audio_part_as_its_length() -> None:
    (root,) = list(load_trees([FOLDER / "agentloop__atif_v18_multimodal.json"]))
    first = node_steps(root, FileCache()).steps[0]
    assert first.data["message"] == (
        "Read the card and listen to the instruction.\n[image: media/card.png]\n[audio, 1.5 s]"
    )
