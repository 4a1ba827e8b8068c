"""Criteria resolution: every mode validated before any judge call, errors that say the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentjudge.errors import UsageError
from agentjudge.scoring.criteria import DEFAULT_RUBRIC, Rubric, resolve_criteria


def test_default_mode() -> None:
    criteria = resolve_criteria("default")
    assert criteria.rubric == DEFAULT_RUBRIC
    assert criteria.reference_for("x", "y") is None


def test_custom_rubric_from_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(
        "name: quality\naggregation: weighted_mean\ncriteria:\n"
        "  - {name: correctness, description: right answer, weight: 3}\n"
        "  - {name: clarity, description: clear, weight: 1}\n"
    )
    rubric = resolve_criteria("custom", path).rubric
    assert [c.name for c in rubric.criteria] == ["correctness", "clarity"]
    assert rubric.combine({"correctness": 1.0, "clarity": 0.0}) == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("aggregation", "expected"), [("weighted_mean", 0.75), ("mean", 0.5), ("minimum", 0.0)]
)
def test_rubric_aggregations(aggregation: str, expected: float) -> None:
    rubric = Rubric.model_validate(
        {
            "aggregation": aggregation,
            "criteria": [
                {"name": "a", "description": "a", "weight": 3},
                {"name": "b", "description": "b", "weight": 1},
            ],
        }
    )
    assert rubric.combine({"a": 1.0, "b": 0.0}) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("rubric", "message"),
    [
        ({"criteria": []}, "criteria: Tuple should have at least 1 item"),
        (
            {"criteria": [{"name": "a", "description": "x"}, {"name": "a", "description": "y"}]},
            "criteria: criterion names must be unique",
        ),
        ({"criteria": [{"name": "a", "description": "x", "weight": 0}]}, "weight must be"),
        ({"criteria": [{"name": "a", "description": "x", "colour": 1}]}, "Extra inputs"),
    ],
)
def test_invalid_custom_rubrics(rubric: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        resolve_criteria("custom", rubric)
    assert str(caught.value).startswith("inline rubric: ")
    assert message in str(caught.value)


def test_oversized_rubric(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"criteria": [{"name": "a", "description": "x" * 17000}]}))
    with pytest.raises(UsageError, match="more than 16 KiB"):
        resolve_criteria("custom", path)


def test_missing_inputs_say_the_flag() -> None:
    with pytest.raises(UsageError, match="--rubric FILE"):
        resolve_criteria("custom")
    with pytest.raises(UsageError, match="--set reference_registry_path=FILE"):
        resolve_criteria("reference")


def test_reference_registry(tmp_path: Path) -> None:
    registry = {
        "version": 1,
        "rubrics": {
            "answers": {
                "criteria": [{"name": "correct", "description": "matches the reference"}],
                "references": {"t-1": {"answer": "42"}, "default": {"answer": "fallback"}},
            }
        },
    }
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(registry))
    criteria = resolve_criteria("reference", registry=path, reference_rubric="answers")
    assert criteria.reference_for("t-1", "other") == "42"
    assert criteria.reference_for(None, "t-1") == "42"
    assert criteria.reference_for("nope", "nope") == "fallback"
    with pytest.raises(UsageError, match="no rubric named 'default' \\(it has: answers\\)"):
        resolve_criteria("reference", registry=path)
