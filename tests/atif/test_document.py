"""The schema and the rules: one test per rule, asserting the exact problem users see."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentjudge.atif.document import parse_trajectory
from agentjudge.errors import InputError, Problem
from tests.atif.docs import doc, step, with_refs


def problems_of(document: dict[str, Any] | bytes) -> list[Problem]:
    data = document if isinstance(document, bytes) else json.dumps(document).encode()
    with pytest.raises(InputError) as caught:
        parse_trajectory(data, "t.json")
    return list(caught.value.problems)


def only(document: dict[str, Any] | bytes) -> tuple[str, str]:
    (problem,) = problems_of(document)
    return problem.path, problem.rule


@pytest.mark.parametrize("version", [f"ATIF-v1.{n}" for n in range(9)])
def test_every_version_loads(version: str) -> None:
    traj = parse_trajectory(json.dumps(doc(3, version)).encode(), "t.json")
    assert traj.schema_version == version


def test_missing_schema_version_defaults_to_latest_like_harbor() -> None:
    document = doc(2)
    del document["schema_version"]
    assert parse_trajectory(json.dumps(document).encode(), "t.json").schema_version == "ATIF-v1.8"


def test_atif_schema_version_is_an_alias_as_the_contrib_provider_reads_it() -> None:
    document = doc(2, "ATIF-v1.6")
    document["atif_schema_version"] = document.pop("schema_version")
    assert parse_trajectory(json.dumps(document).encode(), "t.json").schema_version == "ATIF-v1.6"
    document["schema_version"] = "ATIF-v1.6"  # both, the same: fine
    assert parse_trajectory(json.dumps(document).encode(), "t.json").schema_version == "ATIF-v1.6"
    document["schema_version"] = "ATIF-v1.7"
    (problem,) = problems_of(document)
    assert problem.rule == "schema.value_error"
    assert "atif_schema_version 'ATIF-v1.6' differ: keep one" in problem.message


def test_unknown_schema_version() -> None:
    (problem,) = problems_of(doc(2, "ATIF-v2.0"))
    assert str(problem) == (
        "t.json: $.schema_version: schema_version must be one of ATIF-v1.0, ATIF-v1.1, "
        "ATIF-v1.2, ATIF-v1.3, ATIF-v1.4, ATIF-v1.5, ATIF-v1.6, ATIF-v1.7, ATIF-v1.8 "
        "[schema.literal_error]"
    )


def test_not_json() -> None:
    (problem,) = problems_of(b'{"steps": [')
    assert (problem.path, problem.rule) == ("$", "schema.json_invalid")
    assert problem.message.startswith("not valid JSON (")


def test_bytes_of_another_encoding_say_to_save_as_utf8() -> None:
    # a Latin-1 "é" in a message: the code point alone does not say what to do
    data = json.dumps(doc(1)).replace("task", "t\u00e2che", 1).encode("latin-1")
    (problem,) = problems_of(data)
    assert problem.rule == "schema.json_invalid"
    assert problem.message.endswith("; save the file as UTF-8"), problem.message
    (plain,) = problems_of(b'{"steps": [')
    assert "UTF-8" not in plain.message


@pytest.mark.parametrize(
    ("encode", "name"),
    [
        (lambda text: b"\xef\xbb\xbf" + text.encode(), "UTF-8"),
        (lambda text: text.encode("utf-16"), "UTF-16"),
        (lambda text: text.encode("utf-32"), "UTF-32"),
    ],
)
def test_a_byte_order_mark_is_named_with_the_fix(encode: Any, name: str) -> None:
    # the parser alone says "expected value at line 1 column 1", which names no cause
    (problem,) = problems_of(encode(json.dumps(doc(1))))
    assert problem.rule == "schema.json_invalid"
    assert problem.message == (
        f"the file starts with a {name} byte order mark; save it as UTF-8 without one"
    )


def test_top_level_must_be_an_object() -> None:
    assert only(b"[1, 2]") == ("$", "schema.model_type")


def test_unknown_key_is_rejected_with_the_fix() -> None:
    document = doc(2)
    document["steps"][1]["colour"] = "red"
    (problem,) = problems_of(document)
    assert str(problem) == (
        "t.json: $.steps[1].colour: unknown key: ATIF objects forbid extra keys "
        "(put custom data under 'extra') [schema.extra_forbidden]"
    )


def test_empty_steps() -> None:
    assert only(doc(2, steps=[])) == ("$.steps", "schema.too_short")


def test_message_type() -> None:
    document = doc(2)
    document["steps"][0]["message"] = {"role": "user", "content": "hi"}
    (problem,) = problems_of(document)
    assert (problem.path, problem.rule) == ("$.steps[0].message", "schema.content_type")
    assert problem.message == "must be a string or a list of content parts"


def test_content_parts() -> None:
    document = doc(2)
    document["steps"][0]["message"] = [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"media_type": "image/png", "path": "a.png"}},
        {
            "type": "audio",
            "source": {"media_type": "audio/wav", "path": "a.wav", "duration_sec": 1},
        },
    ]
    parse_trajectory(json.dumps(document).encode(), "t.json")
    document["steps"][0]["message"] = [
        {"type": "text", "text": "x", "source": {"media_type": "image/png", "path": "a.png"}},
        {"type": "image", "source": {"media_type": "audio/wav", "path": "a.wav"}},
    ]
    problems = problems_of(document)
    assert [(p.path, p.rule) for p in problems] == [
        ("$.steps[0].message[0]", "schema.value_error"),
        ("$.steps[0].message[1]", "schema.value_error"),
    ]
    assert problems[0].message == "a content part sets exactly one of 'text' and 'source'"


def test_step_ids_must_be_positions() -> None:
    document = doc(3)
    document["steps"][2]["step_id"] = 7
    (problem,) = problems_of(document)
    assert str(problem) == (
        "t.json: $.steps[2].step_id: step_id is 7 but must be 3 (its 1-based position) "
        "[step_id.sequence]"
    )


def test_timestamps_must_be_iso8601() -> None:
    document = doc(2)
    document["steps"][0]["timestamp"] = "2026-07-12T12:00:00Z"
    parse_trajectory(json.dumps(document).encode(), "t.json")
    document["steps"][1]["timestamp"] = "yesterday"
    assert only(document) == ("$.steps[1].timestamp", "timestamp.iso8601")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("model_name", "m"),
        ("reasoning_effort", "high"),
        ("reasoning_content", "hmm"),
        ("tool_calls", []),
        ("metrics", {"prompt_tokens": 1}),
    ],
)
def test_agent_only_fields(name: str, value: Any) -> None:
    document = doc(2)
    document["steps"][0][name] = value
    (problem,) = problems_of(document)
    assert (problem.path, problem.rule) == (f"$.steps[0].{name}", "step.agent_only_field")
    assert "this step's source is 'user'" in problem.message


def test_llm_call_count_zero_forbids_llm_fields() -> None:
    document = doc(2)
    document["steps"][1].update(llm_call_count=0, reasoning_effort="low")
    parse_trajectory(json.dumps(document).encode(), "t.json")
    document["steps"][1].update(metrics={"prompt_tokens": 3}, reasoning_content="r")
    problems = problems_of(document)
    assert [(p.path, p.rule) for p in problems] == [
        ("$.steps[1].metrics", "step.llm_call_count_zero"),
        ("$.steps[1].reasoning_content", "step.llm_call_count_zero"),
    ]


def test_source_call_id_must_match_a_tool_call_of_the_same_step() -> None:
    document = doc(3)
    document["steps"][1]["tool_calls"] = [
        {"tool_call_id": "c1", "function_name": "ls", "arguments": {}}
    ]
    document["steps"][1]["observation"] = {"results": [{"source_call_id": "c1", "content": "ok"}]}
    parse_trajectory(json.dumps(document).encode(), "t.json")
    document["steps"][2]["observation"] = {"results": [{"source_call_id": "c1", "content": "x"}]}
    assert only(document) == (
        "$.steps[2].observation.results[0].source_call_id",
        "observation.source_call_id",
    )


def test_tool_call_arguments_must_be_an_object() -> None:
    document = doc(2)
    document["steps"][1]["tool_calls"] = [
        {"tool_call_id": "c1", "function_name": "ls", "arguments": '{"a": 1}'}
    ]
    assert only(document) == ("$.steps[1].tool_calls[0].arguments", "schema.dict_type")


def test_session_id_required_before_v1_7() -> None:
    parse_trajectory(json.dumps(doc(2, "ATIF-v1.7", session_id=None)).encode(), "t.json")
    assert only(doc(2, "ATIF-v1.6", session_id=None)) == ("$.session_id", "session_id.required")


def test_ref_shape_by_version() -> None:
    single = {"session_id": "child"}
    parse_trajectory(json.dumps(with_refs(doc(2, "ATIF-v1.1"), 1, single)).encode(), "t.json")
    parse_trajectory(json.dumps(with_refs(doc(2, "ATIF-v1.2"), 1, [single])).encode(), "t.json")
    assert only(with_refs(doc(2, "ATIF-v1.2"), 1, single)) == (
        "$.steps[1].observation.results[0].subagent_trajectory_ref",
        "ref.shape",
    )


def test_ref_target_by_version() -> None:
    assert only(with_refs(doc(2, "ATIF-v1.7"), 1, [{"session_id": "child"}])) == (
        "$.steps[1].observation.results[0].subagent_trajectory_ref[0]",
        "ref.target",
    )
    assert only(with_refs(doc(2, "ATIF-v1.5"), 1, [{"trajectory_path": "c.json"}])) == (
        "$.steps[1].observation.results[0].subagent_trajectory_ref[0].session_id",
        "ref.session_id",
    )


def test_embedded_subagents_need_unique_ids() -> None:
    child = doc(2, trajectory_id="c")
    nameless = doc(1)
    document = doc(2, subagent_trajectories=[child, dict(child), nameless])
    problems = problems_of(document)
    assert [(p.path, p.rule) for p in problems] == [
        ("$.subagent_trajectories[1].trajectory_id", "subagent.trajectory_id"),
        ("$.subagent_trajectories[2].trajectory_id", "subagent.trajectory_id"),
    ]


def test_rules_apply_inside_embedded_subagents() -> None:
    child = doc(2, trajectory_id="c")
    child["steps"][1]["step_id"] = 5
    assert only(doc(2, subagent_trajectories=[child])) == (
        "$.subagent_trajectories[0].steps[1].step_id",
        "step_id.sequence",
    )


def test_problems_are_capped_per_file() -> None:
    document = doc(2)
    document["steps"] = [step(i + 1, "user", model_name="m") for i in range(80)]
    problems = problems_of(document)
    assert len(problems) == 51
    assert problems[-1].message == "... and 30 more problems"


def test_negative_total_steps_rejected() -> None:
    assert only(doc(2, final_metrics={"total_steps": -1})) == (
        "$.final_metrics.total_steps",
        "schema.greater_than_equal",
    )


@pytest.mark.parametrize("value", [True, "1", 1.0])
def test_step_id_must_be_a_real_integer(value: Any) -> None:
    document = doc(2)
    document["steps"][0]["step_id"] = value
    (problem,) = problems_of(document)
    assert problem.path == "$.steps[0].step_id"
