"""The helper process (`cases/helper_process.py`): a run graded in two processes writes the
results file one process writes, byte for byte, raises the same error for a bad input at
the same case, and finishes alone when the helper dies. The helper is switched on and off
through `worth_a_helper`, the one place that decides."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentjudge.cases import helper_process
from agentjudge.cases.grade import GradeOptions, grade
from agentjudge.cases.loading import (
    CustomMetric,
    EvalConfig,
    TraceSet,
    load_dataset,
    load_traces,
    stream_dataset,
)
from agentjudge.errors import UsageError
from tests.cases.mixed_set import write_mixed_set


class Run:
    """One `grade` of a folder's files, in this process, the helper on or off."""

    def __init__(self, folder: Path, helper: bool, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder = folder
        self.helper = helper
        self.done = 0  # cases the helper sent back graded
        monkeypatch.setattr(helper_process, "worth_a_helper", lambda *_: helper)
        original = helper_process._Helper.items

        def counting(helper_: Any) -> Iterator[Any]:
            for item in original(helper_):
                self.done += item[3] is not None
                yield item

        monkeypatch.setattr(helper_process._Helper, "items", counting)

    def grade(self, dataset: str = "dataset.json") -> tuple[int, bytes, Any, list[str]]:
        """The exit code, the results file (its time made constant), the console's
        flagged cases and the notes."""
        output = self.folder / f"results-{self.helper}.json"
        options = GradeOptions(
            traces=str(self.folder / "traces"),
            dataset=str(self.folder / dataset),
            config=str(self.folder / "eval_config.yaml"),
            output=str(output),
            use_store=False,
            root=self.folder,
        )
        notes: list[str] = []
        run = grade(options, notes.append)
        data = re.sub(rb'"graded_at": "[^"]*"', b"", output.read_bytes(), count=1)
        return run.exit_code, data, run.flagged, notes


@pytest.mark.parametrize("judged", [False, True], ids=["checks", "fake-judge"])
def test_two_processes_write_what_one_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judged: bool
) -> None:
    write_mixed_set(tmp_path, judged=judged)
    alone = Run(tmp_path, False, monkeypatch).grade()
    helped = Run(tmp_path, True, monkeypatch)
    assert helped.grade() == alone
    # a third of the blocks, less the cases with a judge metric, which come back undone
    assert helped.done > (400 if judged else 600)


def _write(folder: Path, cases: list[Any], tail: str = "") -> None:
    """A dataset of `cases` (raw, `tail` appended to its text), a trace for each, a config."""
    text = json.dumps({"cases": cases})
    (folder / "dataset.json").write_text(text[: len(text) - 2] + tail if tail else text)
    traces = [
        {"case_id": c["id"], "status": "ok", "response": "fine", "latency_ms": 10}
        for c in cases
        if isinstance(c, dict) and isinstance(c.get("id"), str)
    ]
    (folder / "traces").mkdir(exist_ok=True)
    (folder / "traces" / "a.json").write_text(json.dumps({"traces": traces}))
    (folder / "eval_config.yaml").write_text("judge: {provider: null}\n")


def _cases(count: int = 300) -> list[Any]:
    return [
        {"id": f"c{i}", "messages": [{"role": "user", "content": "hi"}],
         "expect": {"contains": ["fine"], "max_latency_ms": 100 if i % 7 else 5}}
        for i in range(count)
    ]  # fmt: skip


def _break(kind: str, cases: list[Any], at: int) -> None:
    if kind == "messages":
        cases[at]["messages"] = []
    elif kind == "duplicate":
        cases[at]["id"] = "c3"
    elif kind == "metric":
        cases[at]["judge"] = {"no_such_metric": {"threshold": 3}}
    elif kind == "expect":
        cases[at]["expect"] = {"contains": 5}
    else:
        cases[at] = "not a case"


def _same_error(folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The usage error grading `folder` raises, the same with and without the helper;
    nothing is written either way."""
    errors = []
    for helper in (False, True):
        with pytest.raises(UsageError) as raised:
            Run(folder, helper, monkeypatch).grade()
        errors.append(str(raised.value))
    assert errors[0] == errors[1]
    assert not list(folder.glob("results-*.json"))
    return errors[0]


# The helper grades blocks 1, 4, 7... of 64 cases: 100 is its, 30 and 140 are not.
@pytest.mark.parametrize("kind", ["messages", "duplicate", "metric", "expect", "not-object"])
@pytest.mark.parametrize("at", [[100], [30, 100], [100, 140]], ids=str)
def test_a_bad_case_raises_the_error_one_process_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, at: list[int]
) -> None:
    cases = _cases()
    for index in at:
        _break(kind, cases, index)
    _write(tmp_path, cases)
    error = _same_error(tmp_path, monkeypatch)
    first = at[0]
    assert f"cases[{first}]" in error or f"'c{first}'" in error  # the first bad one


def test_a_dataset_cut_short_raises_the_error_one_process_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, _cases(), tail=', {"id": "c300", "mess')
    assert "is not valid JSON" in _same_error(tmp_path, monkeypatch)


def test_when_the_helper_dies_this_process_grades_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_mixed_set(tmp_path)
    alone = Run(tmp_path, False, monkeypatch).grade()
    graded = [0]
    original = helper_process._grade

    def dying(*args: Any) -> Any:  # runs in the helper only: it dies at its 100th case
        graded[0] += 1
        if graded[0] == 100:
            os._exit(9)
        return original(*args)

    monkeypatch.setattr(helper_process, "_grade", dying)
    helped = Run(tmp_path, True, monkeypatch)
    assert helped.grade() == alone
    assert 0 < helped.done < 100  # what it sent before it died was used


def test_when_no_process_can_be_forked_one_grades_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_mixed_set(tmp_path)
    alone = Run(tmp_path, False, monkeypatch).grade()

    def no_fork() -> int:
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(os, "fork", no_fork)
    helped = Run(tmp_path, True, monkeypatch)
    assert helped.grade() == alone
    assert helped.done == 0


def test_a_helper_is_started_only_where_it_pays_and_is_safe(tmp_path: Path) -> None:
    write_mixed_set(tmp_path, count=1200)
    files = sorted((tmp_path / "traces").glob("*.json"))
    traces = load_traces(files)
    config = EvalConfig()
    stream = stream_dataset([tmp_path / "dataset.json"])
    worth = helper_process.worth_a_helper
    assert len(traces.traces) >= helper_process.MIN_TRACES
    # this test's process may hold other threads (servers of other tests): say none
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(threading, "active_count", lambda: 1)
        assert worth(stream, traces, config)
        few = TraceSet(traces={k: traces.traces[k] for k in list(traces.traces)[:999]})
        assert not worth(stream, few, config)
        assert not worth(load_dataset([tmp_path / "dataset.json"]), traces, config)
        custom = EvalConfig(custom_metrics={"m": CustomMetric("m", "mod:fn", 0.5)})
        assert not worth(stream, traces, custom)
        patch.setattr(threading, "active_count", lambda: 2)
        assert not worth(stream, traces, config)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as children:
            found += [int(c) for c in children.read().split()]
    return found


GRADE = [
    sys.executable, "-m", "agentjudge", "grade", "--quiet", "--no-cache",
    "--traces", "traces", "--dataset", "dataset.json", "--config", "eval_config.yaml",
    "--output", "results.json",
]  # fmt: skip


def _helper_of(proc: subprocess.Popen[str]) -> int:
    """The pid of the grade process's helper, once it has one."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        helpers = _children(proc.pid)
        if helpers:
            return helpers[0]
        time.sleep(0.005)
    raise AssertionError("grade ended before its helper was seen")


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.01)
    return not os.path.exists(f"/proc/{pid}")


def test_ctrl_c_while_the_helper_runs_writes_nothing_and_leaves_no_process(
    tmp_path: Path,
) -> None:
    write_mixed_set(tmp_path, count=60_000)
    with subprocess.Popen(
        GRADE, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        helper = _helper_of(proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().startswith("interrupted: nothing was written")
    assert "Traceback" not in err
    assert not (tmp_path / "results.json").exists()
    assert not list(tmp_path.glob("*.tmp*"))
    assert _gone(helper)  # killed and reaped, not orphaned


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_helper_outlives_no_grade_killed_outright(tmp_path: Path, sig: int) -> None:
    """Killed with no chance to stop its helper, grade leaves none behind: the helper's
    next send fails, and the caller reading grade's output sees its end."""
    write_mixed_set(tmp_path, count=60_000)
    with subprocess.Popen(
        GRADE, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        helper = _helper_of(proc)
        proc.send_signal(sig)
        proc.communicate(timeout=30)  # hangs while a helper holds grade's stdout
    assert proc.returncode == -sig
    assert _gone(helper)


def test_cases_first_match_fails_are_named_in_order_whoever_graded_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every 50th case expects "any search" then "search for x" of calls search(q=x),
    # search(q=y): first-match gives the only q=x call to the first entry; 100 and 150 are
    # in the helper's blocks, 0, 50 and 200 not
    cases = _cases()
    calls = [{"name": "search", "args": {"q": "x"}}, {"name": "search", "args": {"q": "y"}}]
    greedy_miss = ["search", {"name": "search", "args_subset": {"q": "x"}}]
    for case in cases[::50]:
        case["expect"] = {"tool_calls": greedy_miss}
    cases[250]["expect"] = {"tool_calls": greedy_miss[::-1]}  # first-match finds it too
    _write(tmp_path, cases)
    traces = json.loads((tmp_path / "traces" / "a.json").read_text())
    for trace in traces["traces"]:
        trace["tool_calls"] = calls
    (tmp_path / "traces" / "a.json").write_text(json.dumps(traces))
    alone = Run(tmp_path, False, monkeypatch).grade()
    helped = Run(tmp_path, True, monkeypatch)
    assert helped.grade() == alone
    assert helped.done  # c100 and c150 among them
    document = json.loads((tmp_path / "results-False.json").read_text())
    assert document["warnings"] == [
        "5 case(s) pass their expect checks here that first-match matching, as "
        "graph-agents-cli 0.3.1 does it, fails: c0, c50, c100, c150, c200. agentjudge gives "
        "each expected tool call or approval its own recorded one whenever some assignment "
        "does; graph-agents-cli gives each the first remaining one that fits, and fails "
        "these cases without judging them."
    ]
    statuses = {case["id"]: case["status"] for case in document["cases"]}
    assert statuses["c100"] == statuses["c250"] == "passed"
