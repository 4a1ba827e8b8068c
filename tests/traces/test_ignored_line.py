"""The `ignored N lines: ...` line names kinds taken from the file: it stays one short line
whatever the file holds (a `type` of megabytes, thousands of distinct types)."""

from __future__ import annotations

import json
from pathlib import Path

from agentjudge.atif.limits import Limits
from agentjudge.traces.staging import Left, stage
from tests.conftest import FIXTURES

SESSION = FIXTURES / "traces" / "claude-code" / "claude-code-2.1.332__sum-pass"


def test_a_huge_line_type_is_cut_in_the_ignored_line(tmp_path: Path) -> None:
    log = next(SESSION.glob("*.jsonl"))
    huge = json.dumps({"type": "x" * 2_000_000, "sessionId": "s"})
    odd = [json.dumps({"type": f"kind-{index}", "sessionId": "s"}) for index in range(40)]
    (tmp_path / "s.jsonl").write_text(log.read_text() + "\n".join([huge] * 5 + odd) + "\n")

    staged = stage([tmp_path / "s.jsonl"], Limits(), None)

    (left,) = staged.ignored.values()
    line = left.line()
    assert len(line) < 1_000, line[:200]
    assert "x" * 59 + "…" in line
    assert line.endswith(f"and {len(left.counts) - 12} more kinds")
    assert left.counts["x" * 2_000_000] == 5  # the counts themselves are kept whole


def test_a_short_list_of_kinds_reads_as_before() -> None:
    left = Left({"embedding": 10, "retriever": 2}, "spans")
    assert left.line() == "ignored 12 spans: 10 embedding, 2 retriever"
