"""`convert traces --out`: a folder outside the inputs, else one usage line (exit 3) before
anything is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentjudge.errors import UsageError
from agentjudge.traces.to_atif import convert_to_atif
from tests.conftest import FIXTURES

TRACE = FIXTURES / "traces" / "otlp-genai" / "pydantic-ai__sum-pass.otlp.json"


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(TRACE, folder / TRACE.name)
    return folder


def test_an_out_that_is_a_file_is_a_usage_error(traces: Path, tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text("{}")
    with pytest.raises(UsageError, match=r"results\.json: is not a folder; --out must name"):
        convert_to_atif([traces], tmp_path / "results.json")
    assert (tmp_path / "results.json").read_text() == "{}"


@pytest.mark.parametrize("inside", ["", "converted"])
def test_an_out_inside_the_trace_folder_is_refused(traces: Path, inside: str) -> None:
    with pytest.raises(UsageError, match=r"is inside the trace folder .*choose an --out outside"):
        convert_to_atif([traces], traces / inside)
    assert [p.name for p in traces.rglob("*")] == [TRACE.name]  # nothing written


def test_an_out_beside_the_traces_converts_again_and_again(traces: Path, tmp_path: Path) -> None:
    for _ in range(2):
        done = convert_to_atif([traces], tmp_path / "atif")
        assert [p.parent for p in done.written] == [tmp_path / "atif"]
