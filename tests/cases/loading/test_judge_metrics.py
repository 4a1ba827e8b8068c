"""Built-in judges, prompt template validation, and `judges.<name>` entries merged over them."""

from __future__ import annotations

import pytest

from agentjudge.cases.loading.judge_metrics import (
    BUILTIN_JUDGES,
    DEFAULT_TEMPLATE,
    PLACEHOLDERS,
    JudgeSpec,
    check_template,
    merge_judge,
    scale_value,
)
from agentjudge.errors import UsageError

WHERE = "tests/eval/eval_config.yaml"


def test_builtin_judges_are_the_three_on_scale_5_without_threshold() -> None:
    assert list(BUILTIN_JUDGES) == ["response_quality", "task_success", "groundedness"]
    for name, spec in BUILTIN_JUDGES.items():
        assert spec.name == name
        assert spec.scale == 5.0
        assert spec.threshold is None
        assert spec.source == "builtin"
        assert spec.prompt_template == DEFAULT_TEMPLATE
        assert spec.description
        # Every rubric anchors the top, middle and bottom of the scale.
        for anchor in ("5: ", "3: ", "1: "):
            assert anchor in spec.rubric, (name, anchor)


def test_groundedness_rubric_tells_the_judge_about_truncated_results() -> None:
    assert "TRUNCATED" in BUILTIN_JUDGES["groundedness"].rubric


def test_placeholders_are_graph_agents_clis_exact_set() -> None:
    assert set(PLACEHOLDERS) == {
        "metric",
        "rubric",
        "scale",
        "conversation",
        "transcript",
        "response",
        "reference",
        "context",
        "reference_section",
        "context_section",
        "tool_calls_section",
    }
    assert len(PLACEHOLDERS) == 11


def test_default_template_has_the_documented_structure() -> None:
    assert check_template(DEFAULT_TEMPLATE) is None
    assert "Rubric ({metric}):\n{rubric}\n" in DEFAULT_TEMPLATE
    assert "{reference_section}{context_section}{tool_calls_section}\n" in DEFAULT_TEMPLATE
    assert DEFAULT_TEMPLATE.index("{conversation}") < DEFAULT_TEMPLATE.index("{response}")
    assert '{{"reasoning": ' in DEFAULT_TEMPLATE


@pytest.mark.parametrize("name", PLACEHOLDERS)
def test_every_allowed_placeholder_is_accepted(name: str) -> None:
    assert check_template(f"before {{{name}}} after") is None


@pytest.mark.parametrize(
    "template",
    [
        "".join("{" + p + "}" for p in PLACEHOLDERS),
        "no placeholders at all",
        'literal braces {{"score": 1}} and {scale}',
        "{scale:>4} {metric!r} {response:^20}",
    ],
)
def test_templates_graph_agents_cli_loads_are_accepted(template: str) -> None:
    assert check_template(template) is None


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("score {x}", "unknown placeholder {x}"),
        ("score {0}", "unknown placeholder {0}"),
        ("score {}", "unnamed placeholder {}"),
        ("{metric.upper}", "unknown placeholder {metric.upper}"),
        ("{rubric[0]}", "unknown placeholder {rubric[0]}"),
        ("{Metric}", "unknown placeholder {Metric}"),
        ("{scale:>{width}}", "unknown placeholder {width}"),
    ],
)
def test_unknown_placeholders_are_named(template: str, problem: str) -> None:
    assert check_template(template) == problem


@pytest.mark.parametrize("template", ["a { b", "a } b", "{metric", '{"score": 1}'])
def test_unbalanced_braces_are_rejected(template: str) -> None:
    problem = check_template(template)
    assert problem is not None


def test_format_specs_that_fail_on_empty_or_numeric_values_are_rejected() -> None:
    # graph-agents-cli rejects `{scale:d}` at load (it formats with empty values) ...
    assert check_template("{scale:d}") is not None
    # ... and `{scale:s}` would fail on the real number, mid-run.
    assert check_template("{scale:s}") is not None
    assert check_template("{metric!z}") is not None


def test_judge_spec_refuses_a_template_it_could_not_render() -> None:
    with pytest.raises(ValueError, match=r"unknown placeholder \{x\}"):
        JudgeSpec("m", 5.0, "r", "{x}", "", None, "config")


def test_scale_value_prints_whole_scales_as_ints() -> None:
    assert scale_value(5.0) == 5
    assert isinstance(scale_value(5.0), int)
    assert scale_value(7.5) == 7.5
    assert scale_value(10) == 10  # an int scale from a caller works on Python 3.11 too


# --- merge_judge ------------------------------------------------------------------------


@pytest.mark.parametrize("entry", [None, {}, {"rubric": None, "scale": None}])
def test_an_empty_entry_keeps_the_builtin(entry: object) -> None:
    assert merge_judge("task_success", entry, WHERE) == BUILTIN_JUDGES["task_success"]


def test_an_entry_overrides_only_its_fields_and_stays_builtin() -> None:
    spec = merge_judge("groundedness", {"rubric": "Cite sources.", "threshold": 4}, WHERE)
    builtin = BUILTIN_JUDGES["groundedness"]
    assert spec.rubric == "Cite sources."
    assert spec.threshold == 4.0
    assert spec.scale == builtin.scale
    assert spec.description == builtin.description
    assert spec.prompt_template == DEFAULT_TEMPLATE
    assert spec.source == "builtin"


def test_a_new_judge_takes_the_defaults_and_comes_from_config() -> None:
    spec = merge_judge("tone", {"rubric": "Be polite.", "scale": 10}, WHERE)
    assert spec == JudgeSpec(
        name="tone",
        scale=10.0,
        rubric="Be polite.",
        prompt_template=DEFAULT_TEMPLATE,
        description="",
        threshold=None,
        source="config",
    )
    assert isinstance(spec.scale, float)


def test_a_custom_template_and_description_are_kept() -> None:
    spec = merge_judge(
        "tone",
        {"rubric": "r", "prompt_template": "{rubric} {transcript}", "description": "d"},
        WHERE,
    )
    assert (spec.prompt_template, spec.description) == ("{rubric} {transcript}", "d")


def test_a_new_judge_needs_a_rubric() -> None:
    with pytest.raises(UsageError) as err:
        merge_judge("tone", {"scale": 5}, WHERE)
    assert str(err.value) == (
        f"{WHERE}: judges.tone.rubric: a judge needs a non-empty rubric; "
        "add judges.tone.rubric with the scoring instructions"
    )


def test_an_empty_rubric_over_a_builtin_is_rejected() -> None:
    with pytest.raises(UsageError, match=r"judges\.task_success\.rubric: "):
        merge_judge("task_success", {"rubric": ""}, WHERE)


def test_an_unknown_placeholder_names_the_field_and_the_allowed_set() -> None:
    with pytest.raises(UsageError) as err:
        merge_judge("tone", {"rubric": "r", "prompt_template": "Score {0} of {scale}"}, WHERE)
    message = str(err.value)
    assert message.startswith(
        f"{WHERE}: judges.tone.prompt_template: unknown placeholder {{0}}; use only {{metric}}, "
    )
    assert "{tool_calls_section}" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("entry", "field", "what"),
    [
        ({"scale": True}, "scale", "expected a number, got a bool"),
        ({"scale": "5"}, "scale", "expected a number, got str"),
        ({"scale": 0}, "scale", "0 is below 1"),
        ({"scale": -5}, "scale", "-5 is below 1"),
        ({"scale": 0.5}, "scale", "0.5 is below 1"),
        ({"scale": float("nan")}, "scale", "expected a finite number"),
        ({"scale": float("inf")}, "scale", "expected a finite number"),
        ({"scale": 10**400}, "scale", "expected a finite number"),
        ({"threshold": False}, "threshold", "expected a number, got a bool"),
        ({"threshold": "4"}, "threshold", "expected a number, got str"),
        ({"threshold": float("nan")}, "threshold", "expected a finite number"),
        ({"rubric": 5}, "rubric", "expected a string, got int"),
        ({"prompt_template": ["x"]}, "prompt_template", "expected a string, got list"),
        ({"description": {"a": 1}}, "description", "expected a string, got dict"),
        ({"treshold": 4}, "treshold", "unknown field; use only scale, rubric,"),
    ],
)
def test_bad_fields_are_one_line_usage_errors(
    entry: dict[str, object], field: str, what: str
) -> None:
    with pytest.raises(UsageError) as err:
        merge_judge("response_quality", entry, WHERE)
    message = str(err.value)
    assert message.startswith(f"{WHERE}: judges.response_quality.{field}: {what}")
    assert "; " in message  # the fix follows the problem
    assert "\n" not in message
    assert err.value.exit_code == 3


def test_a_negative_or_zero_threshold_is_a_number_like_any_other() -> None:
    assert merge_judge("task_success", {"threshold": 0}, WHERE).threshold == 0.0


@pytest.mark.parametrize("entry", ["a rubric", 5, ["rubric"]])
def test_an_entry_that_is_not_a_mapping_is_rejected(entry: object) -> None:
    with pytest.raises(UsageError) as err:
        merge_judge("tone", entry, WHERE)
    assert str(err.value).startswith(f"{WHERE}: judges.tone: expected a mapping, got ")
