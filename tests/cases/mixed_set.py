"""A large, messy grading input for the results-file comparisons: every check kind, about a
fifth of the cases failing with reasons, missing and errored traces, a case traced twice
across two files, traces no case asked for, non-ASCII text, and run metadata on both sides
of the `traces` array. Deterministic: the same files for the same `count`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}


def _case(index: int, judged: bool) -> dict[str, Any]:
    kind = index % 9
    expect: dict[str, Any] = {"max_latency_ms": 5000}
    case: dict[str, Any] = {
        "id": f"case-{index:05d}",
        "messages": [{"role": "user", "content": f"Where is order {index}? ¿Dónde está?"}],
    }
    if kind == 0:
        expect |= {"contains": ["order", "on its way"], "not_contains": ["refund"]}
    elif kind == 1:
        expect |= {"regex": r"ORD-\d{5}", "tool_calls": [{"name": "get_order"}]}
    elif kind == 2:
        calls = [{"name": "get_order", "args_subset": {"id": index}}, {"name": "notify"}]
        expect |= {"tool_calls": calls, "ordered": index % 2 == 0}
    elif kind == 3:
        expect |= {"json_schema": SCHEMA}
    elif kind == 4:
        expect |= {"no_tool_calls": True, "max_tokens": 1000}
    elif kind == 5:
        expect |= {"max_tokens": 1000 if index % 2 else 2000}
    elif kind == 6:
        expect |= {"contains": ["配送"], "not_contains": ["取消"]}
    elif kind == 7:
        expect |= {"tool_calls": [{"name": "get_order"}, {"name": "notify"}], "ordered": True}
    else:
        expect |= {"contains": ["order"]}
        if judged:
            case["judge"] = {"response_quality": {"threshold": 4}}
            case["reference"] = f"order {index} ships today"
    case["expect"] = expect
    return case


def _trace(index: int, latency: int | None = None) -> dict[str, Any]:
    kind = index % 9
    response = f"Hello: order ORD-{index:05d} is on its way. 配送中"
    if kind == 3:
        response = json.dumps({"answer": response} if index % 4 else {"reply": response})
    calls = [
        {"id": f"c{index}", "name": "get_order", "args": {"id": index, "full": index % 3 == 0},
         "result": "shipped", "is_error": False},
        {"id": f"n{index}", "name": "notify", "args": {"to": "user"}, "result": "ok",
         "is_error": False},
    ]  # fmt: skip
    if kind == 4 and index % 2:
        calls = []
    if kind == 7 and index % 4 == 3:
        calls.reverse()  # the order check fails
    tokens = 1500 if kind == 5 else 300
    trace: dict[str, Any] = {
        "case_id": f"case-{index:05d}", "status": "ok", "response": response,
        "tool_calls": calls, "usage": {"input_tokens": tokens - 100, "output_tokens": 100},
        "latency_ms": latency if latency is not None else (9000 if index % 5 == 3 else 700),
        "error": None, "thread_id": f"t{index}", "run_id": f"r{index}",
    }  # fmt: skip
    if index % 89 == 0:
        trace |= {"status": "error", "error": "agent crashed: boom", "response": ""}
    return trace


def write_mixed_set(folder: Path, count: int = 2000, judged: bool = False) -> None:
    """`dataset.json`, `eval_config.yaml` and `traces/{a,b}.json` under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    cases = [_case(i, judged) for i in range(count)]
    (folder / "dataset.json").write_text(json.dumps({"cases": cases}, ensure_ascii=False))
    config = "judge: {provider: null}\n"
    if judged:
        config = (
            "judge: {provider: fake, model: fake-judge}\n"
            "quality_metrics:\n  response_quality: {threshold: 4, min_pass_rate: 0.5}\n"
        )
    (folder / "eval_config.yaml").write_text(config)
    first = [_trace(i) for i in range(count) if i % 97]  # every 97th case has no trace
    first += [_trace(count + i) for i in range(3)]  # traces no case asked for
    # traced again by a later run: the later file wins (its latency passes)
    later = [_trace(i, latency=100) for i in range(1, count, 50)]
    traces = folder / "traces"
    traces.mkdir(exist_ok=True)
    a = {"dataset_hash": None, "generated_at": "2026-01-01T00:00:00", "agent_version": "1.0",
         "traces": first, "model": "m-1"}  # fmt: skip
    b = {"dataset_hash": None, "generated_at": "2026-01-02T00:00:00", "traces": later,
         "target": "local", "model_provider": "acme"}  # fmt: skip
    (traces / "a.json").write_text(json.dumps(a, ensure_ascii=False))
    (traces / "b.json").write_text(json.dumps(b, ensure_ascii=False))
