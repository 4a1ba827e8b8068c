"""Session logs of any shape: a reader gives valid ATIF runs or one InputError, never a
crash (a log of an unknown version must not take the tool down with a traceback)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentjudge.atif import parse_trajectory
from agentjudge.atif.limits import Limits
from agentjudge.errors import InputError
from agentjudge.traces import claude_code, codex, inspect_log
from agentjudge.traces.read import Format

# the keys and values the readers look at, so that generated lines reach their branches
KEYS = st.sampled_from(
    [
        "type",
        "message",
        "content",
        "role",
        "id",
        "model",
        "usage",
        "text",
        "thinking",
        "tool_use_id",
        "is_error",
        "input",
        "name",
        "sessionId",
        "isSidechain",
        "agentId",
        "isMeta",
        "origin",
        "toolUseResult",
        "payload",
        "call_id",
        "arguments",
        "output",
        "summary",
        "ordinal",
        "subagent_history_start_ordinal",
        "source",
        "info",
        "last_token_usage",
        "item",
        "agent_thread_id",
        "kind",
        "events",
        "event",
        "span_id",
        "parent_id",
        "function",
        "result",
        "error",
        "choices",
        "tool_calls",
        "samples",
        "epoch",
        "attachments",
        "input_tokens",
        "output_tokens",
        "namespace",
    ]
)
VALUES = st.sampled_from(
    [
        "user",
        "assistant",
        "text",
        "tool_use",
        "tool_result",
        "thinking",
        "Agent",
        "Task",
        "session_meta",
        "response_item",
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "agent_message",
        "event_msg",
        "token_count",
        "item_completed",
        "SubAgentActivity",
        "started",
        "turn_context",
        "compacted",
        "model",
        "tool",
        "span_begin",
        "agent",
        "developer",
        "spawn_agent",
        "t1",
        "s1",
        "attachment://x",
    ]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | VALUES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=6),
    max_leaves=30,
)
LINES = st.lists(st.dictionaries(KEYS, JSON, max_size=8), min_size=1, max_size=8)

LIMIT = Limits()


def _check(fmt: Format, path: Path) -> None:
    try:
        got = fmt.read(path, path.name, Limits())
    except InputError as exc:
        refused: InputError | None = exc
    else:
        refused = None
    if refused is not None:
        assert all("\n" not in str(p) for p in refused.problems)
        return
    for run in got.runs:
        parse_trajectory(json.dumps(run.document, default=str).encode(), run.name)
    assert all(isinstance(n, int) and n > 0 for n in got.ignored.values())


def _write(lines: list[dict[str, Any]], name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="ss-odd-"))
    path = folder / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINES)
def test_a_claude_code_log_of_any_shape_reads_or_is_refused(lines: list[dict[str, Any]]) -> None:
    _check(claude_code.FORMAT, _write(lines, "s1.jsonl"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINES)
def test_a_codex_rollout_of_any_shape_reads_or_is_refused(lines: list[dict[str, Any]]) -> None:
    _check(codex.FORMAT, _write(lines, "rollout-x-s1.jsonl"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(KEYS, JSON, max_size=8), max_size=4), JSON)
def test_an_inspect_log_of_any_shape_reads_or_is_refused(
    samples: list[dict[str, Any]], header: Any
) -> None:
    log = {"version": 2, "status": "success", "eval": header, "samples": samples}
    _check(inspect_log.FORMAT, _write([log], "log.json"))
