"""Benchmark: `agentjudge validate` on a big OTLP/JSON-lines trace file, with the real CLI.

Generates (once, kept under --dir) a file of about --megabytes MB as the Collector's file
exporter writes it: one `ExportTraceServiceRequest` per line, each a batch of spans in the
order they ended, several agent runs in flight at once, so a trace's spans are spread over
several lines. Each trace follows the GenAI conventions as the fixtures in
tests/fixtures/traces/otlp-genai do: an `invoke_agent` span over `chat` spans (the whole
conversation so far in `gen_ai.input.messages`, the answer and its tool calls in
`gen_ai.output.messages`) and `execute_tool` spans (arguments and result).

Then runs `agentjudge validate --quiet` on it --runs times and prints JSON: the file's
size, traces and spans, per run the seconds, and the min/median of seconds, spans/s and
peak RSS (the CLI process and its children, sampled). Targets (issue 36): at least
100,000 spans/s and at most 300 MB.

    python bench/otlp_validate.py [--megabytes 500] [--runs 3] [--dir /tmp] [--keep]
                                  [--tmpdir /dev/shm]

validate writes each trace as an ATIF file into a work folder under TMPDIR, one file a
trace: where creating a file is slow (this machine's /tmp: 0.6-1.5 ms a file, /dev/shm:
25 us) that is most of the wall time; --tmpdir shows the difference.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import Measured, measure

IN_FLIGHT = 8  # agent runs going on at once in the producing process
BATCH_SPANS = (30, 300)  # spans per export (the BatchSpanProcessor sends up to 512)
SYSTEM = (
    "You are a careful coding agent working in the user's repository. Read before you "
    "edit, run the tests after every change, and explain what you did in two sentences. "
) * 6
TOOLS = ("read_file", "run_tests", "search_code", "edit_file")


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


class _Trace:
    """One agent run: its spans, each yielded when it ends (children before parents)."""

    def __init__(self, index: int, rng: random.Random) -> None:
        self.trace_id = f"{rng.getrandbits(128):032x}"
        self.rng, self.index = rng, index
        self.clock = 1_796_309_113_000_000_000 + index * 10_000_000_000
        self.spans = 0

    def _span(
        self,
        name: str,
        parent: str | None,
        start: int,
        attrs: list[dict[str, Any]],
        span_id: str | None = None,
    ) -> dict[str, Any]:
        self.spans += 1
        span: dict[str, Any] = {
            "traceId": self.trace_id,
            "spanId": span_id or f"{self.rng.getrandbits(64):016x}",
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(self.clock),
            "attributes": attrs,
            "status": {},
        }
        if parent is not None:
            span["parentSpanId"] = parent
        return span

    def run(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        agent_id = f"{rng.getrandbits(64):016x}"
        agent_start = self.clock
        task = f"Task {self.index}: the test in tests/test_mod{self.index % 97}.py fails. " * 4
        history: list[dict[str, Any]] = [
            {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
            {"role": "user", "parts": [{"type": "text", "content": task}]},
        ]
        for turn in range(rng.randint(3, 8)):
            start, self.clock = self.clock, self.clock + 900_000_000
            call_id = f"call_{self.index}_{turn}"
            tool = TOOLS[turn % len(TOOLS)]
            arguments = json.dumps({"path": f"src/mod{turn}.py", "pattern": "def parse"})
            text = f"Turn {turn}: the traceback points at the parser; I will look. " * 3
            answer = {
                "role": "assistant",
                "parts": [
                    {"type": "text", "content": text},
                    {"type": "tool_call", "id": call_id, "name": tool, "arguments": arguments},
                ],
            }
            yield self._span(
                "chat gpt-4o-mini",
                agent_id,
                start,
                [
                    _attr("gen_ai.operation.name", "chat"),
                    _attr("gen_ai.agent.name", "coder"),
                    _attr("gen_ai.request.model", "gpt-4o-mini"),
                    _attr("gen_ai.response.model", "gpt-4o-mini-2024-07-18"),
                    _attr("gen_ai.usage.input_tokens", 900 + 400 * turn),
                    _attr("gen_ai.usage.output_tokens", 120),
                    _attr("gen_ai.input.messages", json.dumps(history)),
                    _attr("gen_ai.output.messages", json.dumps([answer])),
                ],
            )
            start, self.clock = self.clock, self.clock + 300_000_000
            result = f"{turn}: line {rng.randint(1, 400)}: def parse(text): ...\n" * 24
            yield self._span(
                f"execute_tool {tool}",
                agent_id,
                start,
                [
                    _attr("gen_ai.operation.name", "execute_tool"),
                    _attr("gen_ai.tool.name", tool),
                    _attr("gen_ai.tool.call.id", call_id),
                    _attr("gen_ai.tool.call.arguments", arguments),
                    _attr("gen_ai.tool.call.result", result),
                ],
            )
            response = {"type": "tool_call_response", "id": call_id, "response": result}
            history += [answer, {"role": "user", "parts": [response]}]
        yield self._span(
            "invoke_agent coder",
            None,
            agent_start,
            [
                _attr("gen_ai.operation.name", "invoke_agent"),
                _attr("gen_ai.agent.name", "coder"),
                _attr("gen_ai.input.messages", json.dumps(history[1:2])),
            ],
            agent_id,
        )


def _export(spans: list[dict[str, Any]]) -> dict[str, Any]:
    resource = [_attr("service.name", "bench-agent"), _attr("telemetry.sdk.language", "python")]
    scope = {"name": "bench-instrumentation", "version": "1.0"}
    return {
        "resourceSpans": [
            {"resource": {"attributes": resource}, "scopeSpans": [{"scope": scope, "spans": spans}]}
        ]
    }


def generate(path: Path, megabytes: int, seed: int = 36) -> tuple[int, int]:
    """Write the file; return its traces and spans."""
    rng = random.Random(seed)
    limit = megabytes * 1_000_000
    traces, spans, written = 0, 0, 0
    running: list[Iterator[dict[str, Any]]] = []
    batch: list[dict[str, Any]] = []
    batch_size = rng.randint(*BATCH_SPANS)
    with path.open("w") as out:
        while written < limit or running:
            while written < limit and len(running) < IN_FLIGHT:
                running.append(_Trace(traces, rng).run())
                traces += 1
            current = rng.choice(running)
            span = next(current, None)
            if span is None:
                running.remove(current)
            else:
                batch.append(span)
            if len(batch) >= batch_size or (not running and batch):
                line = json.dumps(_export(batch), separators=(",", ":")) + "\n"
                out.write(line)
                written += len(line)
                spans += len(batch)
                batch, batch_size = [], rng.randint(*BATCH_SPANS)
    return traces, spans


def _summary(runs: list[Measured], spans: int) -> dict[str, Any]:
    seconds = [r.seconds for r in runs]
    rss = [r.peak_rss_mb for r in runs]
    return {
        "seconds": [round(s, 2) for s in seconds],
        "seconds_min_median": [round(min(seconds), 2), round(statistics.median(seconds), 2)],
        "spans_per_second_best_median": [
            round(spans / min(seconds)),
            round(spans / statistics.median(seconds)),
        ],
        "peak_rss_mb_min_median_max": [min(rss), statistics.median(rss), max(rss)],
        "cpu_seconds_min_median": [
            round(min(r.cpu_seconds for r in runs), 2),
            round(statistics.median(r.cpu_seconds for r in runs), 2),
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp"), help="where the file is kept")
    parser.add_argument("--keep", action="store_true", help="keep the file for the next run")
    parser.add_argument(
        "--tmpdir", help="TMPDIR for validate, where it writes the runs (/dev/shm: a tmpfs)"
    )
    args = parser.parse_args()
    path = args.dir / f"agentjudge-bench-otlp-{args.megabytes}mb.jsonl"
    counts = path.with_suffix(".counts.json")
    if path.exists() and counts.exists():
        traces, spans = json.loads(counts.read_text())
    else:
        traces, spans = generate(path, args.megabytes)
        counts.write_text(json.dumps([traces, spans]))
    size = path.stat().st_size
    command = [
        sys.executable, "-m", "agentjudge", "validate", "--quiet",
        "--max-trajectory-files", str(traces), str(path),
    ]  # fmt: skip
    env = dict(os.environ, TMPDIR=args.tmpdir) if args.tmpdir else None
    try:
        runs = []
        for _ in range(args.runs):
            done = measure(command, interval=0.05, env=env)
            if done.returncode != 0:
                sys.exit(f"validate failed ({done.returncode}): {done.tail()}")
            runs.append(done)
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)
            counts.unlink(missing_ok=True)
    result = {"bytes": size, "traces": traces, "spans": spans, "tmpdir": args.tmpdir}
    print(json.dumps(result | _summary(runs, spans)))


if __name__ == "__main__":
    main()
