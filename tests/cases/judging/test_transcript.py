"""What a case judge reads: conversation, transcript, sections, truncation, notes, warnings.

The expected texts are graph-agents-cli 0.3.1's (checked against its renderer): its users'
templates and graders read these lines and markers.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentjudge.cases.judging.transcript import (
    RenderedPrompt,
    TruncationNote,
    fill_prompt,
    judge_notes,
    lacking,
    render_case,
    truncation_marker,
)
from agentjudge.cases.loading.judge_metrics import BUILTIN_JUDGES, PLACEHOLDERS, JudgeSpec

# Every placeholder, separated by `|`, so a test sees each value exactly.
ALL = "|".join("{" + p + "}" for p in PLACEHOLDERS)


def spec(template: str = ALL, scale: float = 5.0) -> JudgeSpec:
    return JudgeSpec("tone", scale, "RUBRIC", template, "", None, "config")


def values(case: dict[str, Any], trace: dict[str, Any], limit: int | None = 50) -> list[str]:
    return fill_prompt(spec(), render_case(case, trace, limit)).text.split("|")


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


SINGLE = {
    "id": "order",
    "messages": [{"role": "system", "content": "Be brief."}, user("Status of ORD-1?")],
}


def test_a_single_turn_case_has_no_turn_markers() -> None:
    trace = {"response": "It shipped.", "tool_calls": []}
    metric, rubric, scale, conversation, transcript, response, *rest = values(SINGLE, trace)
    assert (metric, rubric, scale) == ("tone", "RUBRIC", "5")
    assert conversation == (
        "system (from the dataset; not sent to the agent): Be brief.\nuser: Status of ORD-1?"
    )
    assert transcript == conversation + "\nagent: It shipped."
    assert response == "It shipped."
    assert rest == ["", "", "", "", ""]  # no reference, context or tool calls: empty sections


def test_tool_calls_render_sorted_json_args_empty_args_and_the_error_flag() -> None:
    trace = {
        "response": "ok",
        "tool_calls": [
            {
                "name": "getOrder",
                "args": {"z": 1, "a": [1, 2], "é": "ü"},
                "result": {"b": 2, "a": 1},
            },
            {"name": "noArgs", "args": {}, "result": "plain", "is_error": True},
            {"name": "nullArgs", "args": None, "result": None},
            {"name": "listArgs", "args": [], "result": [3, 1]},
            "not a call",
        ],
    }
    *_, transcript, _response, _ref, _ctx, _ref_s, _ctx_s, section = values(SINGLE, trace)
    calls = [
        'getOrder({"a": [1, 2], "z": 1, "é": "ü"}) -> {"a": 1, "b": 2}',
        "noArgs() -> plain (error)",
        "nullArgs() -> ",
        "listArgs([]) -> [3, 1]",
    ]
    assert section == (
        "\nTool calls the agent made for this response:\n"
        + "\n".join(f"- {c}" for c in calls)
        + "\n"
    )
    assert transcript.endswith("\n".join(f"agent tool call: {c}" for c in calls) + "\nagent: ok")


def test_reference_and_context_sections_appear_only_when_non_empty() -> None:
    case = {**SINGLE, "reference": "Shipped", "context": "ORD-1 left on Monday."}
    *_, reference, context, reference_section, context_section, _ = values(case, {"response": "x"})
    assert (reference, context) == ("Shipped", "ORD-1 left on Monday.")
    assert reference_section == "\nReference answer (ground truth):\nShipped\n"
    assert context_section == "\nGrounding context:\nORD-1 left on Monday.\n"
    empty = {**SINGLE, "reference": "", "context": None}
    assert values(empty, {"response": "x"})[-5:] == ["", "", "", "", ""]


MULTI = {
    "id": "multi",
    "messages": [
        {"role": "system", "content": "sys"},
        user("u1"),
        {"role": "assistant", "content": "a-dataset"},
        user("u2"),
        user("u3"),
        {"role": "assistant", "content": "trailing"},
    ],
}


def test_a_multi_turn_case_shows_every_turn_with_dataset_messages_in_place() -> None:
    trace = {
        "response": "final",
        "tool_calls": [{"name": "f", "args": {"q": 1}, "result": "F"}],
        "turns": [
            {"response": "r1", "tool_calls": [{"name": "t", "args": {"k": "v"}, "result": "T"}]},
            {"response": {"b": 1, "a": 2}, "tool_calls": []},
            {"response": "final"},
        ],
    }
    rendered = render_case(MULTI, trace, 50)
    assert rendered.conversation == "\n".join(
        [
            "system (from the dataset; not sent to the agent): sys",
            "--- turn 1 of 3 ---",
            "user: u1",
            'agent tool call: t({"k": "v"}) -> T',
            "agent: r1",
            "assistant (from the dataset; not sent to the agent): a-dataset",
            "--- turn 2 of 3 ---",
            "user: u2",
            'agent: {"a": 2, "b": 1}',
            "--- turn 3 of 3 ---",
            "user: u3",
            "assistant (from the dataset; not sent to the agent): trailing",
        ]
    )
    assert rendered.transcript == (
        rendered.conversation + '\nagent tool call: f({"q": 1}) -> F\nagent: final'
    )
    assert rendered.tool_calls_section == (
        '\nTool calls the agent made for this response:\n- f({"q": 1}) -> F\n'
    )
    assert rendered.unrecorded_turns == 0
    assert judge_notes(rendered) == []


def test_turns_the_trace_did_not_record_are_marked_and_noted() -> None:
    case = {"id": "c", "messages": [user("u1"), user("u2"), user("u3")]}
    trace = {"response": "final", "turns": [{"response": "r1"}]}
    rendered = render_case(case, trace, None)
    assert rendered.conversation == "\n".join(
        [
            "--- turn 1 of 3 ---",
            "user: u1",
            "agent: r1",
            "--- turn 2 of 3 ---",
            "user: u2",
            "agent: [reply not recorded in the trace]",
            "--- turn 3 of 3 ---",
            "user: u3",
        ]
    )
    assert rendered.unrecorded_turns == 1
    assert judge_notes(rendered) == [
        "1 earlier turn(s) have no recorded reply in the trace "
        "(re-run eval generate to record every turn)"
    ]
    without_turns = render_case(case, {"response": "final"}, None)
    assert without_turns.unrecorded_turns == 2


def test_a_turn_record_that_is_not_an_object_counts_as_an_empty_turn() -> None:
    case = {"id": "c", "messages": [user("u1"), user("u2")]}
    rendered = render_case(case, {"response": "final", "turns": ["junk", {}]}, None)
    assert rendered.conversation.splitlines()[2] == "agent: "
    assert rendered.unrecorded_turns == 0


LONG = "0123456789" * 3  # 30 characters


def test_a_long_tool_result_is_cut_at_the_limit_with_the_marker_and_a_note() -> None:
    trace = {"response": "ok", "tool_calls": [{"name": "search", "result": LONG, "is_error": True}]}
    rendered = render_case(SINGLE, trace, 10)
    marker = (
        " [TRUNCATED by graph-agents-cli: the judge sees the first 10 of 30 characters of this "
        "tool result; 20 more were returned to the agent but are not shown here. Do not treat a "
        "claim as unsupported only because it could come from the omitted part.]"
    )
    assert truncation_marker(10, 30) == marker
    line = f"search() -> 0123456789{marker} (error)"
    assert rendered.tool_calls_section == (
        f"\nTool calls the agent made for this response:\n- {line}\n"
    )
    assert rendered.transcript.endswith(f"agent tool call: {line}\nagent: ok")
    # Shown twice in the prompt (section and transcript), cut once.
    assert rendered.truncated == (TruncationNote("search", 1, 10, 30),)
    assert rendered.truncated[0].omitted == 20
    assert judge_notes(rendered) == [
        "1 tool result(s) cut for the judge (20 characters not shown; raise "
        "judge.max_tool_result_chars in eval_config.yaml to show more)"
    ]


def test_results_in_every_turn_are_cut_and_each_cut_is_noted_with_its_turn() -> None:
    trace = {
        "response": "final",
        "tool_calls": [{"name": "f", "result": LONG}],
        "turns": [{"response": "r1", "tool_calls": [{"name": "t", "result": {"k": LONG}}]}, {}, {}],
    }
    rendered = render_case(MULTI, trace, 25)
    assert rendered.truncated == (
        TruncationNote("t", 1, 25, len('{"k": "' + LONG + '"}')),
        TruncationNote("f", 3, 25, 30),
    )
    assert "agent tool call: t() -> " + '{"k": "' + LONG[:18] + " [TRUNCATED" in (
        rendered.conversation
    )
    assert judge_notes(rendered)[0].startswith("2 tool result(s) cut for the judge (19 characters")


def test_a_result_of_exactly_the_limit_is_not_cut() -> None:
    trace = {"response": "ok", "tool_calls": [{"name": "s", "result": LONG}]}
    rendered = render_case(SINGLE, trace, 30)
    assert rendered.truncated == ()
    assert "TRUNCATED" not in rendered.transcript


def test_a_null_limit_never_cuts() -> None:
    huge = "y" * 200_000
    trace = {"response": "ok", "tool_calls": [{"name": "s", "result": huge}]}
    rendered = render_case(SINGLE, trace, None)
    assert rendered.truncated == ()
    assert f"s() -> {huge}\n" in rendered.tool_calls_section


@pytest.mark.parametrize(("scale", "shown"), [(5.0, "5"), (10.0, "10"), (7.5, "7.5")])
def test_scale_prints_as_an_int_when_whole(scale: float, shown: str) -> None:
    prompt = fill_prompt(spec("{scale}", scale), render_case(SINGLE, {"response": "x"}, None))
    assert prompt.text == shown


def test_the_default_template_fills_every_part_of_a_builtin_prompt() -> None:
    case = {**SINGLE, "reference": "Shipped"}
    trace = {"response": "It shipped.", "tool_calls": [{"name": "s", "result": LONG}]}
    prompt = fill_prompt(BUILTIN_JUDGES["task_success"], render_case(case, trace, 10))
    text = prompt.text
    assert "Rubric (task_success):\n" + BUILTIN_JUDGES["task_success"].rubric + "\n" in text
    assert "\nsystem (from the dataset; not sent to the agent): Be brief.\n" in text
    assert "\nIt shipped.\n\nReference answer (ground truth):\nShipped\n" in text
    assert "Grounding context" not in text
    assert "\n- s() -> 0123456789 [TRUNCATED by graph-agents-cli:" in text
    assert "from 1 to 5 " in text
    assert "{" + '"reasoning"' in text  # literal braces survive formatting
    assert prompt.truncated == (TruncationNote("s", 1, 10, 30),)


def test_fill_prompt_reuses_one_rendered_case_for_several_judges() -> None:
    rendered = render_case(SINGLE, {"response": "x"}, None)
    prompts = [fill_prompt(judge, rendered) for judge in BUILTIN_JUDGES.values()]
    assert [p.text for p in prompts] == [
        fill_prompt(judge, render_case(SINGLE, {"response": "x"}, None)).text
        for judge in BUILTIN_JUDGES.values()
    ]
    assert len({p.text for p in prompts}) == 3


def test_judge_notes_of_a_prompt_with_both_problems_come_in_order() -> None:
    prompt = RenderedPrompt("p", (TruncationNote("a", 1, 5, 9), TruncationNote("b", 2, 5, 6)), 2)
    assert judge_notes(prompt) == [
        "2 tool result(s) cut for the judge (5 characters not shown; raise "
        "judge.max_tool_result_chars in eval_config.yaml to show more)",
        "2 earlier turn(s) have no recorded reply in the trace "
        "(re-run eval generate to record every turn)",
    ]


def test_what_a_built_in_judge_needs_and_a_case_lacks() -> None:
    bare = {"messages": [{"role": "user", "content": "weather in Paris?"}]}
    trace = {"response": "Sunny."}
    rendered = render_case(bare, trace, 50000)
    assert lacking("task_success", rendered, trace) == ["task_success: no reference answer"]
    assert lacking("groundedness", rendered, trace) == [
        "groundedness: no context and no tool result"
    ]
    assert lacking("response_quality", rendered, trace) == []
    with_reference = render_case({**bare, "reference": "Sunny, 21 C."}, trace, 50000)
    assert lacking("task_success", with_reference, trace) == []
    with_context = render_case({**bare, "context": "Paris: sunny."}, trace, 50000)
    assert lacking("groundedness", with_context, trace) == []
    # a tool result, in the final turn or an earlier one, is something to ground claims in
    called = {**trace, "tool_calls": [{"name": "get_weather", "args": {}, "result": "sunny"}]}
    assert lacking("groundedness", render_case(bare, called, 50000), called) == []
    earlier = {**trace, "turns": [{"tool_calls": [{"name": "w", "result": {"t": 21}}]}]}
    assert lacking("groundedness", render_case(bare, earlier, 50000), earlier) == []
