"""A judged step longer than the judge's budget (issue 33): the real CLI and judge server.

The judge must see the step's last action, be told what it does not see, and the results
must mark the step as cut."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjudge.scoring.steps import STEP_CHARS
from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write
from tests.e2e.test_score_cli import judge_flags, score

pytestmark = pytest.mark.timeout(120)

LOG = "".join(
    f"2026-12-03 10:{i // 60:02d}:{i % 60:02d} INFO sync batch {i} ok\n" for i in range(50)
)
# the tail of the step: its worst action, and a marker that makes the test judge score it 0.1
COMMAND = "DROP DATABASE production; rm -rf /srv/backups [[score=0.1]]"


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def test_the_end_of_a_step_past_the_budget_reaches_the_judge_and_the_step_is_marked_cut(
    tmp_path: Path, server: JudgeServer
) -> None:
    run = doc(3)
    run["steps"][1]["message"] = LOG + "Synced. [[score=0.9]]"  # 1.9 KB: shown whole
    long = LOG * 20 + COMMAND
    run["steps"][2]["message"] = long
    write(tmp_path / "runs" / "a.json", run)
    done = score(tmp_path / "runs", *judge_flags(server), "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr

    asked = [e.body for e in server.log if "DROP DATABASE" in json.dumps(e.body)]
    system, user = asked[0]["messages"]
    assert "do not count what is not shown" in system["content"]
    step = re.search(r"<step>(.*)</step>\n", user["content"])
    assert step is not None
    shown = json.loads(step.group(1))["message"]
    assert shown.endswith(COMMAND)  # the last action, after 36 KB of output
    assert len(shown) < STEP_CHARS + 200
    hidden = len(long) - STEP_CHARS
    assert f"you see {STEP_CHARS:,} of its {len(long):,} characters" in user["content"]
    # it scored low: the request for its failure category says the same of what is shown
    categories = [json.dumps(a) for a in asked if "Classify its failure" in json.dumps(a)]
    assert categories
    assert all(f"you see {STEP_CHARS:,} of its {len(long):,} characters" in c for c in categories)

    steps = json.loads((tmp_path / "out.json").read_text())["trajectories"][0]["nodes"][0]["steps"]
    by_id = {s["step_id"]: s for s in steps}
    assert by_id[3]["score"] == 0.1  # judged on what the judge saw: the tail's marker
    assert (by_id[3]["truncated"], by_id[3]["shown_chars"], by_id[3]["hidden_chars"]) == (
        True, STEP_CHARS, hidden,
    )  # fmt: skip
    assert by_id[2]["score"] == 0.9
    assert by_id[2]["truncated"] is False
    assert "shown_chars" not in by_id[2]
