"""The OTLP GenAI and OpenInference readers on the real producers' files, and on bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentjudge.atif.document import parse_trajectory
from agentjudge.traces import openinference, otlp_genai
from agentjudge.traces.otlp_spans import Placed, Span, SpanEvent
from agentjudge.traces.span_runs import Agent, Role, Turn, read_runs
from tests.conftest import FIXTURES

TRACES = FIXTURES / "traces"
FOLDERS = ("otlp-genai", "openinference")
# Terminus-2's handover after its compaction (the ATIF original's user step 7)
LATER_USER_MESSAGES = {"harbor-atif2otel__terminus-2__summarize.otlp.jsonl": 1}


def agentjudge(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", *map(str, args)],
        capture_output=True, text=True, timeout=120, cwd=cwd,
    )  # fmt: skip


def described(folder: str) -> dict[str, dict[str, Any]]:
    """Per file, what its PROVENANCE.md row says: model turns, subagents, other span counts."""
    rows = {}
    for line in (TRACES / folder / "PROVENANCE.md").read_text().splitlines():
        match = re.match(r"\| `([^`]+)` \|.*\| (\d+) spans \(([^)]*)\);?(.*)\|$", line)
        if match is None:
            continue
        name, _, kinds, rest = match.groups()
        counts = {k: int(n) for k, n in (part.rsplit(" ", 1) for part in kinds.split(", "))}
        rows[name] = {
            "turns": counts.get("chat", counts.get("LLM")),
            "subagents": 1 if "sub-agent" in rest and "summarization" not in rest else 0,
            "counts": counts,
        }
    return rows


@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cwd = tmp_path_factory.mktemp("validate")
    done = agentjudge("validate", "--json", *(TRACES / f for f in FOLDERS), cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


@pytest.mark.parametrize("folder", FOLDERS)
def test_validate_gives_the_nodes_and_steps_each_provenance_describes(
    folder: str, validated: dict[str, Any]
) -> None:
    roots = {Path(r["file"].rpartition(":")[0]).name: r for r in validated["roots"]}
    rows = described(folder)
    assert len(rows) == len(list((TRACES / folder).glob("*.otlp.json*")))
    for name, row in rows.items():
        root = roots[name]
        # a step per model turn, each agent's user input (the root's and a subagent's), and
        # each user message a conversation started anew from (PROVENANCE rows do not say)
        assert root["valid"], root
        assert root["subagents"] == row["subagents"], name
        later = LATER_USER_MESSAGES.get(name, 0)
        assert root["steps"] == row["turns"] + 1 + row["subagents"] + later, name


def test_spans_that_are_no_step_are_counted_by_kind(validated: dict[str, Any]) -> None:
    ignored = {Path(k).name: v for k, v in validated["ignored"].items()}
    for folder, kind, key in (
        ("otlp-genai", "execute_event_loop_cycle", "execute_event_loop_cycle"),
        ("openinference", "CHAIN", "chain"),
    ):
        for name, row in described(folder).items():
            if kind in row["counts"]:
                assert ignored[name] == {"unit": "spans", "counts": ignored[name]["counts"]}
                assert ignored[name]["counts"][key] == row["counts"][kind], name


def test_convert_writes_valid_atif_whose_steps_point_at_spans(tmp_path: Path) -> None:
    done = agentjudge(
        "convert", "traces", *(TRACES / f for f in FOLDERS), "--out", tmp_path / "out", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    written = sorted((tmp_path / "out").glob("*.json"))
    assert len(written) == sum(len(described(f)) for f in FOLDERS)
    for path in written:
        traj = parse_trajectory(path.read_bytes(), path.name)
        trace_id = path.stem.rpartition("__")[2]
        for step in traj.steps:
            assert step.extra is not None
            assert step.extra["source"]["trace_id"] == trace_id
            assert re.fullmatch(r"[0-9a-f]{16}", step.extra["source"]["span_id"])


def _spans_doc(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TRACES / "otlp-genai" / name).read_text())
    return data


def _spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for r in doc["resourceSpans"] for ss in r["scopeSpans"] for s in ss["spans"]]


def _broken_parent(doc: dict[str, Any]) -> str:
    span = next(s for s in _spans(doc) if s.get("parentSpanId"))
    span["parentSpanId"] = "00000000deadbeef"
    return f"span {span['spanId']}: its parent span 00000000deadbeef is not in the file"


def _cycle(doc: dict[str, Any]) -> str:
    spans = _spans(doc)
    root = next(s for s in spans if not s.get("parentSpanId"))
    child = next(s for s in spans if s.get("parentSpanId") == root["spanId"])
    root["parentSpanId"] = child["spanId"]
    return "its parent links form a cycle"


def _no_end(doc: dict[str, Any]) -> str:
    span = _spans(doc)[2]
    del span["endTimeUnixNano"]
    return f"span {span['spanId']}: span has no endTimeUnixNano"


@pytest.mark.parametrize("damage", [_broken_parent, _cycle, _no_end])
def test_a_damaged_trace_is_one_clear_line_naming_file_line_and_span(
    tmp_path: Path, damage: Any
) -> None:
    doc = _spans_doc("pydantic-ai__subagent-pass.otlp.json")
    expected = damage(doc)
    good = json.dumps(_spans_doc("pydantic-ai__sum-pass.otlp.json"))
    (tmp_path / "spans.jsonl").write_text(good + "\n" + json.dumps(doc) + "\n")
    done = agentjudge("validate", "spans.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    problems = [line for line in done.stdout.splitlines() if line.startswith("    ")]
    assert len(problems) == 1, done.stdout
    assert problems[0].strip().startswith("spans.jsonl: line 2: trace ")
    assert expected in problems[0]


def test_one_bad_line_of_a_jsonl_names_its_line(tmp_path: Path) -> None:
    good = json.dumps(_spans_doc("pydantic-ai__sum-pass.otlp.json"))
    (tmp_path / "spans.jsonl").write_text(good + "\n" + good[:-40] + "\n" + good + "\n")
    done = agentjudge("validate", "spans.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    assert "spans.jsonl: line 2: not valid JSON" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_format_forces_the_reader(tmp_path: Path) -> None:
    source = TRACES / "otlp-genai" / "pydantic-ai__sum-pass.otlp.json"
    forced = agentjudge("validate", "--format", "openinference", source, cwd=tmp_path)
    assert forced.returncode == 1
    assert "no agent, model turn or tool span" in forced.stdout
    unknown = agentjudge("validate", "--format", "nope", source, cwd=tmp_path)
    assert unknown.returncode == 3
    assert "use one of atif, openinference, otlp-genai" in unknown.stderr


def _span(attributes: dict[str, Any], events: tuple[SpanEvent, ...]) -> Span:
    return Span("t", "s", None, "chat m", 1, 2, None, attributes, events, {}, 1)


def test_the_older_event_based_messages_are_read() -> None:
    events = (
        SpanEvent("gen_ai.user.message", {"content": "add 17 and 25"}),
        SpanEvent(
            "gen_ai.choice",
            {
                "message": json.dumps(
                    {
                        "content": "calling the adder",
                        "tool_calls": [
                            {"id": "c1", "function": {"name": "add", "arguments": '{"a": 17}'}}
                        ],
                    }
                )
            },
        ),
    )
    turn = otlp_genai.classify(_span({"gen_ai.operation.name": "chat"}, events))
    assert isinstance(turn, Turn)
    assert turn.user_input == "add 17 and 25"
    assert turn.text == "calling the adder"
    assert [(c.call_id, c.name, c.arguments) for c in turn.calls] == [("c1", "add", {"a": 17})]


def test_pydantic_ais_events_attribute_is_read() -> None:
    """pydantic-ai's first instrumentation: the events as a JSON list in `events`."""
    events = [
        {"event.name": "gen_ai.system.message", "role": "system", "content": "be brief"},
        {"event.name": "gen_ai.user.message", "role": "user", "content": "what is 17+25?"},
        {
            "event.name": "gen_ai.choice",
            "index": 0,
            "message": {"role": "assistant", "content": "42"},
        },
    ]
    attributes = {"gen_ai.operation.name": "chat", "events": json.dumps(events)}
    turn = otlp_genai.classify(_span(attributes, ()))
    assert isinstance(turn, Turn)
    assert (turn.user_input, turn.text, turn.calls) == ("what is 17+25?", "42", ())


def test_a_pretty_printed_document_is_read_whole(tmp_path: Path) -> None:
    doc = _spans_doc("pydantic-ai__subagent-pass.otlp.json")
    (tmp_path / "trace.json").write_text(json.dumps(doc, indent=2))
    done = agentjudge("validate", "--json", "trace.json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    (root,) = json.loads(done.stdout)["roots"]
    assert (root["steps"], root["subagents"]) == (6, 1)


def test_an_export_longer_than_the_limit_names_its_line(tmp_path: Path) -> None:
    good = json.dumps(_spans_doc("pydantic-ai__sum-pass.otlp.json"))
    other = json.dumps(_spans_doc("pydantic-ai__sum-wrong.otlp.json"))
    (tmp_path / "spans.jsonl").write_text(good + "\n" + other + " " * 60_000 + "\n")
    done = agentjudge("validate", "--max-file-bytes", "60000", "spans.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    assert "spans.jsonl: line 2: one export longer than max_file_bytes=60000" in done.stdout


def _export_of(spans: list[dict[str, Any]], like: dict[str, Any]) -> dict[str, Any]:
    resource = like["resourceSpans"][0]
    scope = resource["scopeSpans"][0]["scope"]
    return {
        "resourceSpans": [
            {"resource": resource["resource"], "scopeSpans": [{"scope": scope, "spans": spans}]}
        ]
    }


def test_a_trace_split_over_lines_is_grouped_into_one_run(tmp_path: Path) -> None:
    doc = _spans_doc("pydantic-ai__subagent-pass.otlp.json")
    spans = _spans(doc)
    other = _spans_doc("pydantic-ai__sum-pass.otlp.json")
    lines = [_export_of(spans[::2], doc), other, _export_of(spans[1::2], doc)]
    (tmp_path / "spans.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = agentjudge("validate", "--json", "spans.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    roots = {r["file"].rpartition(":")[2]: r for r in json.loads(done.stdout)["roots"]}
    split = roots[spans[0]["traceId"]]
    assert (split["steps"], split["subagents"]) == (6, 1)
    assert roots[_spans(other)[0]["traceId"]]["steps"] == 4


def _converted(tmp_path: Path, folder: str, name: str) -> dict[str, Any]:
    out = tmp_path / "out"
    done = agentjudge("convert", "traces", TRACES / folder / name, "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("*.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _model_turn_tokens(folder: str, name: str) -> int:
    total = 0
    for span in _spans(json.loads((TRACES / folder / name).read_text())):
        attrs = {a["key"]: a["value"] for a in span["attributes"]}
        if attrs["gen_ai.operation.name"]["stringValue"] == "chat":
            total += int(attrs["gen_ai.usage.input_tokens"]["intValue"])
    return total


@pytest.mark.parametrize(
    "name", ["strands-attrs__subagent-pass.otlp.json", "pydantic-ai__subagent-pass.otlp.json"]
)
def test_tokens_are_counted_once_from_the_model_turns(tmp_path: Path, name: str) -> None:
    """strands repeats its turns' usage on the agent span: those are not added again."""
    doc = _converted(tmp_path, "otlp-genai", name)
    assert doc["final_metrics"]["total_prompt_tokens"] == _model_turn_tokens("otlp-genai", name)
    child = doc["subagent_trajectories"][0]
    own = sum(s.get("metrics", {}).get("prompt_tokens", 0) for s in doc["steps"])
    assert (
        own + child["final_metrics"]["total_prompt_tokens"]
        == (doc["final_metrics"]["total_prompt_tokens"])
    )


def test_a_new_conversation_after_a_compaction_starts_with_its_user_message(
    tmp_path: Path,
) -> None:
    """harbor's export of Terminus-2 handing over after a compaction: its turn-1 model calls
    are sent "Here are the answers..." (their `input.value`), the user step 7 of the ATIF
    run it was converted from. Read, the trace has that run's steps but the system step
    of the compaction (a CHAIN span, counted)."""
    name = "harbor-atif2otel__terminus-2__summarize.otlp.jsonl"
    doc = _converted(tmp_path, "openinference", name)
    original = json.loads(
        (TRACES / "atif-1.8" / "terminus-2__summarize" / "trajectory.json").read_text()
    )
    expected = [(s["source"], s["message"]) for s in original["steps"] if s["source"] != "system"]
    assert [(s["source"], s["message"]) for s in doc["steps"]] == expected
    assert expected[5][1].startswith("Here are the answers the other agent provided.")


def test_only_a_turn_sent_another_first_user_message_adds_a_user_step() -> None:
    """Every turn of a conversation repeats its first user message: that is one step; the
    first turn's may be worded otherwise than the agent's input (a template) and adds none."""
    roles: list[Role] = [
        Agent("solver", "add 17 and 25"),
        Turn("reading", user_input="Task: add 17 and 25"),
        Turn("adding", user_input="Task: add 17 and 25"),
        Turn("resuming", user_input="Summary so far: the numbers are 17 and 25"),
        Turn("the total is 42", user_input="Summary so far: the numbers are 17 and 25"),
    ]
    spots = [
        Placed("t", f"s{n}", None if n == 0 else "s0", 10**18 + n, n + 1, role)
        for n, role in enumerate(roles)
    ]
    (run,) = read_runs([("t", spots)], "spans.jsonl", "test").runs
    assert [(s["source"], s["message"]) for s in run.document["steps"]] == [
        ("user", "add 17 and 25"),
        ("agent", "reading"),
        ("agent", "adding"),
        ("user", "Summary so far: the numbers are 17 and 25"),
        ("agent", "resuming"),
        ("agent", "the total is 42"),
    ]


def test_an_llm_spans_message_list_input_value_is_its_user_input() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "Here are the answers"},
        {"role": "user", "content": "and more"},
    ]
    attributes = {"openinference.span.kind": "LLM", "input.value": json.dumps(messages)}
    turn = openinference.classify(_span(attributes, ()))
    assert isinstance(turn, Turn)
    assert turn.user_input == "Here are the answers"
    plain = openinference.classify(_span({**attributes, "input.value": "[not json"}, ()))
    assert isinstance(plain, Turn)
    assert plain.user_input is None


def test_a_handoff_is_one_root_whose_steps_name_their_agent(tmp_path: Path) -> None:
    doc = _converted(tmp_path, "otlp-genai", "openai-agents-otel__handoff-pass.otlp.json")
    assert doc["agent"]["name"] == "triage"
    speakers = [s["extra"].get("agent_name") for s in doc["steps"] if s["source"] == "agent"]
    assert speakers == ["triage", "researcher", "researcher"]


def test_a_failed_tool_is_a_result_marked_as_an_error(tmp_path: Path) -> None:
    doc = _converted(tmp_path, "otlp-genai", "strands-attrs__tool-error.otlp.json")
    results = [r for s in doc["steps"] for r in s.get("observation", {}).get("results", ())]
    failed = [r for r in results if r["extra"].get("error")]
    assert len(results) == 2
    assert len(failed) == 1
    assert failed[0]["content"].startswith("[tool error: No such file: config.yaml]")


def test_a_subagent_is_referenced_from_the_tool_call_that_started_it(tmp_path: Path) -> None:
    doc = _converted(tmp_path, "openinference", "langgraph__subagent-pass.otlp.json")
    (child,) = doc["subagent_trajectories"]
    refs = [
        (step["tool_calls"], result)
        for step in doc["steps"]
        for result in step.get("observation", {}).get("results", ())
        if result.get("subagent_trajectory_ref")
    ]
    ((calls, result),) = refs
    assert result["subagent_trajectory_ref"] == [{"trajectory_id": child["trajectory_id"]}]
    assert [c["function_name"] for c in calls] == ["ask_researcher"]
    assert result["source_call_id"] == calls[0]["tool_call_id"]
    # the subagent's own tool ran beside its agent spans, inside the parent's tool call
    assert [c["function_name"] for s in child["steps"] for c in s.get("tool_calls", ())] == [
        "read_file"
    ]
    # each graph's model node (an AGENT span named "agent") is named after its graph
    assert (doc["agent"]["name"], child["agent"]["name"]) == ("coordinator", "researcher")


def test_a_langgraph_node_keeps_its_name_in_a_graph_not_named(tmp_path: Path) -> None:
    name = "langgraph__subagent-pass.otlp.json"
    doc = json.loads((TRACES / "openinference" / name).read_text())
    (top,) = (s for s in _spans(doc) if s["name"] == "coordinator")
    top["name"] = "LangGraph"  # what LangGraph calls a graph given no name
    (tmp_path / name).write_text(json.dumps(doc))
    out = tmp_path / "out"
    done = agentjudge("convert", "traces", name, "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("*.json")
    converted = json.loads(path.read_text())
    assert converted["agent"]["name"] == "agent"
    assert converted["subagent_trajectories"][0]["agent"]["name"] == "researcher"


def test_a_line_file_no_reader_knows_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_text('{"type": "message"}\n')
    done = agentjudge("validate", "events.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    assert "events.jsonl: $: not a trace format agentjudge recognises; name its format" in (
        done.stdout
    )


def test_an_otlp_export_of_other_spans_is_not_taken_for_atif(tmp_path: Path) -> None:
    doc = _spans_doc("pydantic-ai__sum-pass.otlp.json")
    for span in _spans(doc):
        span["attributes"] = [a for a in span["attributes"] if not a["key"].startswith("gen_ai")]
    (tmp_path / "http.json").write_text(json.dumps(doc))
    done = agentjudge("validate", "http.json", cwd=tmp_path)
    assert done.returncode == 1
    assert "http.json: $: an OTLP export whose first 64 KiB hold no GenAI or OpenInference" in (
        done.stdout
    )


def _chain(operations: list[str | None]) -> dict[str, Any]:
    """One trace of spans each the child of the one before, with these GenAI operations."""
    spans = []
    for index, operation in enumerate(operations):
        attributes = []
        if operation is not None:
            attributes.append({"key": "gen_ai.operation.name", "value": {"stringValue": operation}})
        spans.append(
            {
                "traceId": "ab" * 16,
                "spanId": f"{index + 1:016x}",
                **({"parentSpanId": f"{index:016x}"} if index else {}),
                "name": operation or "step",
                "startTimeUnixNano": str(1000 + index),
                "endTimeUnixNano": str(100_000 - index),
                "attributes": attributes,
            }
        )
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}


def test_spans_nested_deeper_than_the_stack_are_read(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text(
        json.dumps(_chain(["invoke_agent", *[None] * 5000, "chat"]))
    )
    done = agentjudge("validate", "deep.json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ignored 5000 spans: 5000 not GenAI" in done.stdout


def test_agents_nested_past_the_limit_are_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text(json.dumps(_chain(["invoke_agent"] * 60)))
    done = agentjudge("validate", "deep.json", cwd=tmp_path)
    assert done.returncode == 1
    assert f"span {52:016x}: agents nested more than 50 deep" in done.stdout


def test_a_line_nested_too_deep_is_one_clear_line(tmp_path: Path) -> None:
    good = json.dumps(_spans_doc("pydantic-ai__sum-pass.otlp.json"))
    (tmp_path / "spans.jsonl").write_text(good + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    done = agentjudge("validate", "spans.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    assert "spans.jsonl: line 2: JSON nested more than 100 levels deep" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_the_runs_of_trace_files_count_against_the_file_limit(tmp_path: Path) -> None:
    lines = [
        _spans_doc(n)
        for n in ("pydantic-ai__sum-pass.otlp.json", "pydantic-ai__sum-wrong.otlp.json")
    ]
    (tmp_path / "spans.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = agentjudge("validate", "--max-trajectory-files", "1", "spans.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    # refused at the line the second trace starts, before the rest of the file is held
    assert "spans.jsonl: line 2: trace " in done.stdout
    assert "more than max_trajectory_files=1 traces in this file" in done.stdout
    (tmp_path / "copy.jsonl").write_text((tmp_path / "spans.jsonl").read_text())
    both = agentjudge(
        "validate", "--max-trajectory-files", "3", "spans.jsonl", "copy.jsonl", cwd=tmp_path
    )
    assert "trajectories (runs of trace files counted), more than max_trajectory_files=3" in (
        both.stderr
    )
