"""A big checks-only `grade` as a whole: Ctrl-C while its cases are checked writes nothing,
and the cases first-match matching fails are named in the dataset's order."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agentjudge.cases.grade import GradeOptions, grade
from tests.cases.mixed_set import write_mixed_set

GRADE = [
    sys.executable, "-m", "agentjudge", "grade", "--quiet", "--no-cache",
    "--traces", "traces", "--dataset", "dataset.json", "--config", "eval_config.yaml",
    "--output", "results.json",
]  # fmt: skip


def _reading(pid: int, path: Path) -> bool:
    """Whether process `pid` has `path` open."""
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except (FileNotFoundError, ProcessLookupError):  # it ended, or an fd closed meanwhile
        return False
    return str(path) in links


def test_ctrl_c_while_cases_are_checked_writes_nothing(tmp_path: Path) -> None:
    write_mixed_set(tmp_path, count=60_000)
    dataset = (tmp_path / "dataset.json").resolve()
    with subprocess.Popen(
        GRADE, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        deadline = time.monotonic() + 60
        # the dataset is streamed while its cases are checked (the traces are read before)
        while not _reading(proc.pid, dataset):
            assert proc.poll() is None, "grade ended before its check phase was seen"
            assert time.monotonic() < deadline, "no check phase seen"
            time.sleep(0.005)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().startswith("interrupted: nothing was written")
    assert "Traceback" not in err
    assert not (tmp_path / "results.json").exists()
    assert not list(tmp_path.glob("*.tmp*"))


def _cases(count: int) -> list[dict[str, object]]:
    return [
        {"id": f"c{i}", "messages": [{"role": "user", "content": "hi"}],
         "expect": {"contains": ["fine"]}}
        for i in range(count)
    ]  # fmt: skip


def test_cases_first_match_fails_are_named_in_order(tmp_path: Path) -> None:
    # every 50th case expects "any search" then "search for x" of calls search(q=x),
    # search(q=y): first-match gives the only q=x call to the first entry
    cases = _cases(300)
    calls = [{"name": "search", "args": {"q": "x"}}, {"name": "search", "args": {"q": "y"}}]
    greedy_miss = ["search", {"name": "search", "args_subset": {"q": "x"}}]
    for case in cases[::50]:
        case["expect"] = {"tool_calls": greedy_miss}
    cases[250]["expect"] = {"tool_calls": greedy_miss[::-1]}  # first-match finds it too
    (tmp_path / "dataset.json").write_text(json.dumps({"cases": cases}))
    traces = [
        {"case_id": c["id"], "status": "ok", "response": "fine", "latency_ms": 10,
         "tool_calls": calls}
        for c in cases
    ]  # fmt: skip
    (tmp_path / "traces.json").write_text(json.dumps({"traces": traces}))
    (tmp_path / "eval_config.yaml").write_text("judge: {provider: null}\n")
    output = tmp_path / "results.json"
    options = GradeOptions(
        traces=str(tmp_path / "traces.json"),
        dataset=str(tmp_path / "dataset.json"),
        config=str(tmp_path / "eval_config.yaml"),
        output=str(output),
        use_store=False,
        root=tmp_path,
    )
    assert grade(options, lambda _: None).exit_code == 0
    document = json.loads(output.read_text())
    assert document["warnings"] == [
        "5 case(s) pass their expect checks here that first-match matching, as "
        "graph-agents-cli 0.3.1 does it, fails: c0, c50, c100, c150, c200. agentjudge gives "
        "each expected tool call or approval its own recorded one whenever some assignment "
        "does; graph-agents-cli gives each the first remaining one that fits, and fails "
        "these cases without judging them."
    ]
    assert {case["status"] for case in document["cases"]} == {"passed"}
