"""`ScoreConfig` as a user writes it: in a YAML `--config` file or with `--set`."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentjudge.errors import UsageError
from agentjudge.scoring.config import load_config


def test_one_trajectory_path_may_be_a_string(tmp_path: Path) -> None:
    # as the eval-hub-contrib provider writes it: `trajectory_path: /test_data/runs`
    (tmp_path / "score.yaml").write_text("trajectory_path: runs/\njudge: fake\n")
    assert load_config(tmp_path / "score.yaml", {}).trajectory_path == ["runs/"]
    from_set = load_config(None, {"trajectory_path": "runs/", "judge": "fake"})
    assert from_set.trajectory_path == ["runs/"]
    both = load_config(None, {"trajectory_path": ["a/", "b.json"], "judge": "fake"})
    assert both.trajectory_path == ["a/", "b.json"]


def test_a_trajectory_path_of_another_type_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / "score.yaml").write_text("trajectory_path: 5\njudge: fake\n")
    with pytest.raises(UsageError, match=r"score\.yaml: trajectory_path: "):
        load_config(tmp_path / "score.yaml", {})


def test_a_config_of_bad_yaml_says_where_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "score.yaml").write_text("judge: fake\nrubric: [unclosed\n")
    with pytest.raises(UsageError) as caught:
        load_config(tmp_path / "score.yaml", {})
    assert str(caught.value).endswith("score.yaml: not valid YAML (line 3); fix the syntax")


def test_a_config_that_is_a_folder_asks_for_a_file_not_json(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        load_config(tmp_path, {})
    assert str(caught.value) == f"config file {tmp_path} is a folder; name a file"


def test_an_empty_verdict_store_path_is_refused_not_the_default(tmp_path: Path) -> None:
    (tmp_path / "score.yaml").write_text("judge: fake\ncache_path: ''\n")
    with pytest.raises(UsageError, match=r"score\.yaml: cache_path: an empty path"):
        load_config(tmp_path / "score.yaml", {})


def test_a_bad_trace_format_is_not_quoted_back() -> None:
    # --set never quotes a value back (docs/scoring.md, Flags): it may be a secret
    with pytest.raises(UsageError) as caught:
        load_config(None, {"trace_format": "sk-live-1234567890", "judge": "fake"})
    assert "sk-live" not in str(caught.value)
    assert "trace_format: unknown format: use one of atif," in str(caught.value)
