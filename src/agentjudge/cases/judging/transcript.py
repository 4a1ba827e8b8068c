"""What a judge reads of one eval case: every turn's messages, tool calls and replies.

A multi-turn case sends each user message on one thread; its trace keeps the earlier turns
under `turns` and the final turn at the top level. A follow-up is only judged fairly with the
earlier replies and tool results in view, so the prompt carries all of them:

- `conversation`: each earlier turn in full, then the final user message. Dataset messages
  of other roles, which the agent never received, appear in place and say so.
- `transcript`: the conversation, then the final turn's tool calls and reply.
- `tool_calls_section`, `reference_section`, `context_section`: headed blocks, empty when
  there is nothing to show.

The line formats and markers are graph-agents-cli's (`user: `, `agent tool call: `,
`--- turn i of n ---`, the TRUNCATED marker): its users' templates and graders read them.
The case is rendered once (`render_case`) and shared by all of its judges (`fill_prompt`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentjudge.cases.loading import JudgeSpec, scale_value

# Characters of one tool result a judge sees; `judge.max_tool_result_chars` in
# eval_config.yaml, where null means never cut.
DEFAULT_MAX_TOOL_RESULT_CHARS = 50_000

NOT_SENT = "(from the dataset; not sent to the agent)"
UNRECORDED_REPLY = "agent: [reply not recorded in the trace]"
TOOL_CALLS_HEADER = "Tool calls the agent made for this response:"
REFERENCE_HEADER = "Reference answer (ground truth):"
CONTEXT_HEADER = "Grounding context:"


@dataclass(frozen=True, slots=True)
class TruncationNote:
    """One tool result cut for the judge: the judge saw `shown` of its `total` characters."""

    tool: str
    turn: int  # 1-based; the final turn of a single-turn case is 1
    shown: int
    total: int

    @property
    def omitted(self) -> int:
        return self.total - self.shown


@dataclass(frozen=True, slots=True)
class RenderedCase:
    """A case's template values that do not depend on the judge, and what the judge misses."""

    conversation: str
    transcript: str
    response: str
    reference: str
    context: str
    reference_section: str
    context_section: str
    tool_calls_section: str
    truncated: tuple[TruncationNote, ...]
    unrecorded_turns: int  # earlier turns the trace has no record of


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """A judge prompt, with the tool results cut in it and the earlier turns it lacks."""

    text: str
    truncated: tuple[TruncationNote, ...]
    unrecorded_turns: int = 0


def fill_prompt(spec: JudgeSpec, rendered: RenderedCase) -> RenderedPrompt:
    """Fill `spec`'s template with a rendered case (the template was checked on creation);
    a case judged by several judges is rendered once (`render_case`) and filled per judge."""
    values = {
        "metric": spec.name,
        "rubric": spec.rubric,
        "scale": scale_value(spec.scale),
        "conversation": rendered.conversation,
        "transcript": rendered.transcript,
        "response": rendered.response,
        "reference": rendered.reference,
        "context": rendered.context,
        "reference_section": rendered.reference_section,
        "context_section": rendered.context_section,
        "tool_calls_section": rendered.tool_calls_section,
    }
    return RenderedPrompt(
        spec.prompt_template.format_map(values), rendered.truncated, rendered.unrecorded_turns
    )


def lacking(metric: str, rendered: RenderedCase, trace: Mapping[str, Any]) -> list[str]:
    """What built-in judge `metric` needs and this case does not give it: a reference
    answer for `task_success`; context or a tool result for `groundedness`."""
    if metric == "task_success" and not rendered.reference.strip():
        return ["task_success: no reference answer"]
    if metric == "groundedness" and not rendered.context.strip() and not _tool_results(trace):
        return ["groundedness: no context and no tool result"]
    return []


def _tool_results(trace: Mapping[str, Any]) -> bool:
    records = [trace, *(t for t in _items(trace.get("turns")) if isinstance(t, Mapping))]
    return any(
        isinstance(call, Mapping) and call.get("result") not in (None, "")
        for record in records
        for call in _items(record.get("tool_calls"))
    )


def render_case(
    case: Mapping[str, Any], trace: Mapping[str, Any], max_tool_result_chars: int | None
) -> RenderedCase:
    """Render a case (the dataset's `messages`, `reference`, `context`) and its trace."""
    messages = [m for m in _items(case.get("messages")) if isinstance(m, Mapping)]
    user_total = sum(1 for m in messages if m.get("role") == "user")
    raw_turns = trace.get("turns")
    turns = [t if isinstance(t, Mapping) else {} for t in _items(raw_turns)]
    cuts: list[TruncationNote] = []
    lines: list[str] = []
    turn = 0
    unrecorded = 0
    for message in messages:
        role = message.get("role", "?")
        content = str(message.get("content", ""))
        if role != "user":
            lines.append(f"{role} {NOT_SENT}: {content}")
            continue
        turn += 1
        if user_total > 1:
            lines.append(f"--- turn {turn} of {user_total} ---")
        lines.append(f"user: {content}")
        if turn == user_total:
            continue  # the final turn's calls and reply are what the judge scores
        if turn > len(turns):
            unrecorded += 1
            lines.append(UNRECORDED_REPLY)
            continue
        record = turns[turn - 1]
        for call in _call_lines(record.get("tool_calls"), turn, max_tool_result_chars, cuts):
            lines.append(f"agent tool call: {call}")
        lines.append(f"agent: {_as_text(record.get('response'))}")

    conversation = "\n".join(lines)
    final_calls = _call_lines(trace.get("tool_calls"), max(turn, 1), max_tool_result_chars, cuts)
    response = trace.get("response")
    lines.extend(f"agent tool call: {call}" for call in final_calls)
    lines.append(f"agent: {_as_text(response)}")
    reference = _case_text(case.get("reference"))
    context = _case_text(case.get("context"))
    return RenderedCase(
        conversation=conversation,
        transcript="\n".join(lines),
        response="" if response is None else str(response),
        reference=reference,
        context=context,
        reference_section=f"\n{REFERENCE_HEADER}\n{reference}\n" if reference else "",
        context_section=f"\n{CONTEXT_HEADER}\n{context}\n" if context else "",
        tool_calls_section=(
            f"\n{TOOL_CALLS_HEADER}\n" + "\n".join(f"- {call}" for call in final_calls) + "\n"
            if final_calls
            else ""
        ),
        truncated=tuple(cuts),
        unrecorded_turns=unrecorded,
    )


def _call_lines(
    calls: object, turn: int, limit: int | None, cuts: list[TruncationNote]
) -> list[str]:
    """`name(args) -> result[ (error)]` per call; cut results are appended to `cuts`."""
    lines: list[str] = []
    for call in _items(calls):
        if not isinstance(call, Mapping):
            continue
        name = str(call.get("name"))
        result = _as_text(call.get("result"))
        if limit is not None and len(result) > limit:
            cuts.append(TruncationNote(name, turn, limit, len(result)))
            result = result[:limit] + truncation_marker(limit, len(result))
        args = call.get("args")
        args_text = "" if args is None or args == {} else _as_text(args)
        flag = " (error)" if call.get("is_error") else ""
        lines.append(f"{name}({args_text}) -> {result}{flag}")
    return lines


def truncation_marker(shown: int, total: int) -> str:
    """The in-band note after a cut tool result, word for word graph-agents-cli's."""
    return (
        f" [TRUNCATED by graph-agents-cli: the judge sees the first {shown} of {total} "
        f"characters of this tool result; {total - shown} more were returned to the agent "
        "but are not shown here. Do not treat a claim as unsupported only because it could "
        "come from the omitted part.]"
    )


def _items(value: object) -> Sequence[object]:
    return value if isinstance(value, list | tuple) else ()


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):  # e.g. keys of mixed types cannot be sorted
        return str(value)


def _case_text(value: object) -> str:
    return value if isinstance(value, str) else ""


def judge_notes(rendered: RenderedCase | RenderedPrompt) -> list[str]:
    """A case's `judge_notes` in the results file (the key is left out when this is empty)."""
    notes: list[str] = []
    if rendered.truncated:
        omitted = sum(note.omitted for note in rendered.truncated)
        notes.append(
            f"{len(rendered.truncated)} tool result(s) cut for the judge ({omitted} characters "
            "not shown; raise judge.max_tool_result_chars in eval_config.yaml to show more)"
        )
    if rendered.unrecorded_turns:
        notes.append(
            f"{rendered.unrecorded_turns} earlier turn(s) have no recorded reply in the trace "
            "(re-run eval generate to record every turn)"
        )
    return notes
