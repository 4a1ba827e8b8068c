"""Spans grouped per trace in bounded memory (traces/span_groups.py), with small limits."""

from __future__ import annotations

import itertools
import json
import re
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentjudge.atif.limits import Limits
from agentjudge.errors import InputError
from agentjudge.traces import otlp_genai
from agentjudge.traces.otlp_spans import Placed
from agentjudge.traces.span_groups import grouped
from agentjudge.traces.span_runs import Agent, Call, Other, Role, Spot, ToolRun, Turn
from agentjudge.traces.staging import stage


def _spot(trace: int, span: int, line: int, text: str = "") -> Spot:
    parent = None if span == 0 else f"{trace:08x}{0:08x}"
    role = Agent("a") if span == 0 else Turn(text or f"turn {span}")
    return Placed(f"{trace:032x}", f"{trace:08x}{span:08x}", parent, span, line, role)


def _export_line(spans: list[dict[str, Any]]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n"


def _chat(trace: int, span: int, text: str) -> dict[str, Any]:
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:08x}{span:08x}",
        "name": "chat",
        "startTimeUnixNano": str(span + 1),
        "endTimeUnixNano": str(span + 2),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(answer)}},
        ],
    }


def test_every_role_comes_back_as_it_was_held() -> None:
    roles: list[Role] = [
        Agent("coder", "fix the test"),
        Agent("helper"),
        Turn("I will look", (Call("c1", "read", {"path": "a.py", "n": [1, 2.5, None]}),)),
        Turn("", (), "the task", "gpt", 10, 2, 1),
        ToolRun("read", "c1", {"path": "a.py"}, "def f(): ...", None),
        ToolRun("rm", None, {}, "", "permission denied"),
        Other("not GenAI"),
    ]
    spots: list[Spot] = [
        Placed("t", f"s{n}", None if n == 0 else "s0", 10**18 + n, n + 1, role)
        for n, role in enumerate(roles)
    ]
    (got,) = grouped(spots, "x.jsonl", Limits())
    assert got == ("t", spots)


def test_traces_come_whole_in_the_order_they_first_appeared() -> None:
    # exporters batch spans as they end: the traces' spans interleave over the file
    spots = [_spot(trace, span, line=span) for span in range(3) for trace in (7, 3, 5)]
    got = list(grouped(spots, "x.jsonl", Limits()))
    assert [trace for trace, _ in got] == [f"{t:032x}" for t in (7, 3, 5)]
    assert all([s.span_id[-1] for s in spans] == ["0", "1", "2"] for _, spans in got)


def test_traces_open_at_once_past_the_limit_stop_the_reading_at_that_line() -> None:
    # an endless stream of new traces: held without bound, this would never return
    endless = (_spot(trace, 0, line=trace + 1) for trace in itertools.count())
    with pytest.raises(InputError) as caught:
        list(grouped(endless, "big.jsonl", Limits(max_trajectory_files=50)))
    (problem,) = caught.value.problems
    assert problem.file == "big.jsonl"
    assert problem.path == f"line 51: trace {50:032x}"
    assert problem.rule == "limit.max_trajectory_files"
    assert "raise the limit (--max-trajectory-files) or split the file" in problem.message


def test_a_trace_that_never_ends_stops_the_reading_at_its_limit() -> None:
    # one trace whose spans keep coming, beside short traces that complete
    def spans() -> Iterator[Spot]:
        for line in itertools.count(1):
            yield _spot(0, line, line, text="x" * 1000)
            yield _spot(line, 0, line)

    with pytest.raises(InputError) as caught:
        list(grouped(spans(), "live.jsonl", Limits(max_file_bytes=20_000)))
    (problem,) = caught.value.problems
    assert problem.rule == "limit.max_file_bytes"
    # 20,000 bytes of spans a little over 1,000 bytes each: refused within 20 lines
    assert re.fullmatch(rf"line (1[5-9]|20): trace {0:032x}", problem.path), problem.path
    assert "max_file_bytes=20000" in problem.message
    assert "(--max-file-bytes)" in problem.message


def test_one_huge_trace_in_short_lines_is_one_clear_line(tmp_path: Path) -> None:
    # every line is far under max_file_bytes; together they make one trace over it
    path = tmp_path / "huge.jsonl"
    lines = [_export_line([_chat(1, n, "y" * 2000)]) for n in range(40)]
    path.write_text("".join(lines))
    with pytest.raises(InputError) as caught:
        list(otlp_genai.read(path, "huge.jsonl", Limits(max_file_bytes=50_000)).runs)
    (problem,) = caught.value.problems
    assert problem.file == "huge.jsonl"
    # 50,000 bytes of answers 2,000 bytes each: refused at the 25th line or just before
    assert re.fullmatch(rf"line (2[0-5]): trace {1:032x}", problem.path), problem.path
    assert problem.rule == "limit.max_file_bytes"


def test_many_traces_open_at_once_in_a_file_name_the_line(tmp_path: Path) -> None:
    # 30 traces, each one chat span per line, all open until the file ends
    path = tmp_path / "many.jsonl"
    path.write_text("".join(_export_line([_chat(t, 0, "hi")]) for t in range(30)))
    with pytest.raises(InputError) as caught:
        list(otlp_genai.read(path, "many.jsonl", Limits(max_trajectory_files=20)).runs)
    (problem,) = caught.value.problems
    assert problem.path == f"line 21: trace {20:032x}"
    assert problem.rule == "limit.max_trajectory_files"
    runs = otlp_genai.read(path, "many.jsonl", Limits(max_trajectory_files=30)).runs
    assert len(list(runs)) == 30


def test_what_is_held_while_reading_does_not_grow_with_the_spans_content() -> None:
    # 2,000 traces of one 10 kB span each, 20 MB in all, held until the file ends
    spans = (_spot(trace, 1, trace, text=f"{trace}" + "z" * 10_000) for trace in range(2_000))
    tracemalloc.start()
    try:
        first = next(grouped(spans, "x.jsonl", Limits()))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert first[1][0].role == Turn("0" + "z" * 10_000)
    assert peak < 2_000_000, f"{peak:,} bytes held at the peak"


def test_runs_of_many_trace_files_past_the_limit_stop_before_the_next_file(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        lines = [_export_line([_chat(t, 0, "hi")]) for t in range(2)]
        (tmp_path / f"{name}.jsonl").write_text("".join(lines))
    with pytest.raises(InputError) as caught:
        stage([tmp_path], Limits(max_trajectory_files=3))
    (problem,) = caught.value.problems
    assert problem.rule == "limit.max_trajectory_files"
    # refused after the second file: the third was not read
    assert problem.message.startswith("4 trajectories (runs of trace files counted)")
