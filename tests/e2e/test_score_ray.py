"""`agentjudge score --ray` on a real Ray cluster that the module starts on 127.0.0.1 (a
head and one joined node, one CPU each), against the real judge server: the same results
as a local run, and a driver killed part way loses no verdict it was handed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentjudge.testing import JudgeServer, Script
from agentjudge.testing.ray_cluster import LocalRayCluster, ray_env
from tests.atif.docs import doc, with_refs, write
from tests.e2e.otlp import otlp_receiver

pytest.importorskip("ray")
pytestmark = pytest.mark.timeout(300)

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRayCluster]:
    with LocalRayCluster(tmp_path_factory.mktemp("ray"), nodes=2, cpus=1) as running:
        yield running


def score(
    *args: str | Path, cwd: Path, timeout: float = 240, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = ray_env({"AGENTJUDGE_CACHE_DIR": str(cwd / "cache"), "PYTHONPATH": str(SRC), **extra})
    env = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", "score", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd,
    )  # fmt: skip


def collection(folder: Path, trees: int = 12) -> Path:
    """`trees` roots of 9 steps, each delegating to a child of 5: scores spread over [0, 1),
    some under the failure threshold (categorized)."""
    runs = folder / "runs"
    for index in range(trees):
        root = doc(9, session_id=f"root-{index}")
        child = doc(5, session_id=f"child-{index}")
        for document, salt in ((root, 0), (child, 5)):
            # every request of the collection differs (identical ones are shared by the
            # calls in flight at once, which differ between runs)
            document["steps"][0]["message"] = f"t{index}.{salt}: do the task [[score=1]]"
            for step in document["steps"][1:]:
                score = (index * 3 + step["step_id"] * 7 + salt) % 10 / 10
                step["message"] = (
                    f"t{index}.{salt} step {step['step_id']} [[score={score}]]"
                    " [[category=context_loss]]"
                )
        with_refs(root, 4, [{"trajectory_path": f"child{index}.json"}])
        write(runs / f"root{index}.json", root)
        write(runs / f"child{index}.json", child)
    return runs


def judge_flags(server: JudgeServer) -> list[str]:
    return [
        "--judge-url", server.base_url, "--judge-model", "judge", "--concurrency", "4",
        "--set", "judge_initial_backoff_seconds=0.01",
        "--set", "judge_retry_round_pause_seconds=0.1",
    ]  # fmt: skip


def results(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def step_scores(document: dict[str, Any]) -> list[tuple[str, int, float | None, str | None]]:
    return [
        (node["file"], step["step_id"], step["score"], step["category"])
        for trajectory in document["trajectories"]
        for node in trajectory["nodes"]
        for step in node["steps"]
    ]


@pytest.mark.parametrize("mode", ["flat", "hierarchical", "separate"])
def test_a_ray_run_equals_the_local_run(
    tmp_path: Path, cluster: LocalRayCluster, mode: str
) -> None:
    runs = collection(tmp_path)
    with JudgeServer(Script(latency=0.01)) as server:
        flags = [*judge_flags(server), "--set", f"subagent_aggregation={mode}", "--no-cache"]
        local = score(runs, *flags, "-o", "local.json", cwd=tmp_path)
        assert local.returncode == 0, local.stderr
        calls = len(server.log)
        on_ray = score(
            runs, *flags, "--ray-address", cluster.address, "-o", "ray.json", cwd=tmp_path
        )
        assert on_ray.returncode == 0, on_ray.stderr
        assert len(server.log) == 2 * calls  # no call more, none less
    expected, got = results(tmp_path / "local.json"), results(tmp_path / "ray.json")
    assert got["metrics"] == expected["metrics"]
    assert got["metrics_interval"] == expected["metrics_interval"]
    assert step_scores(got) == step_scores(expected)
    assert len(step_scores(got)) == 12 * 14
    assert got["trajectories"] == expected["trajectories"]
    for key in ("status", "error", "failure_categories", "step_errors", "overall_score"):
        assert got[key] == expected[key], key
    assert got["run_metadata"]["atif_complete"] is True
    assert "Traceback" not in on_ray.stderr


# A job on Ray run through the Python API, printing each progress increment as it comes.
PROGRESS_SCRIPT = """
import json, sys, time
from agentjudge.api import score_trajectories
from agentjudge.scoring.config import load_config

runs, url, address, out = sys.argv[1:]
config = load_config(None, {
    "trajectory_path": [runs], "judge_url": url, "judge_model": "judge",
    "concurrency_limit": 1, "cache": False, "ray_address": address, "output": out,
})
start = time.monotonic()

def progress(roots, total, client):
    print(json.dumps({"total": total}), flush=True)
    return lambda steps: print(json.dumps({"at": time.monotonic() - start, "steps": steps}),
                               flush=True)

score_trajectories(config, progress=progress)
"""


def test_the_progress_bar_moves_before_a_unit_comes_back(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    # one tree, so one unit: a root of 3 steps and its subagent of 30, judged one call at a
    # time (0.1 s each, interleaved): the root is done seconds before its subagent
    root, child = doc(3, session_id="root"), doc(30, session_id="child")
    for document in (root, child):
        for step in document["steps"]:
            step["message"] = f"{document['session_id']} {step['step_id']} [[score=0.9]]"
    with_refs(root, 2, [{"trajectory_path": "child.json"}])
    write(tmp_path / "runs" / "root.json", root)
    write(tmp_path / "runs" / "child.json", child)
    with JudgeServer(Script(latency=0.1)) as server:
        env = ray_env({"PYTHONPATH": str(SRC)})
        done = subprocess.run(
            [sys.executable, "-c", PROGRESS_SCRIPT, str(tmp_path / "runs"), server.base_url,
             cluster.address, str(tmp_path / "out.json")],
            capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0] == {"total": 33}
    # the unit's steps as it reported them while it judged, a step as its score came in,
    # at most every REPORT_INTERVAL (0.5 s) over the 3.3 s of calls: moving only as units
    # come back, the bar would move once, by 33; moving per node, twice (3, then 30)
    moves = [line["steps"] for line in lines[1:]]
    assert sum(moves) == 33, lines
    assert len(moves) >= 3, lines


def test_a_ray_run_exports_the_metrics_a_local_run_exports(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    runs = collection(tmp_path, trees=4)
    # every distinct request fails once (503) before it is answered: errors are counted too
    script = Script(latency=0.01, fail_first=1, fail_first_fault="503", retry_after=0)
    exported: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]] = {}
    for label, where in (("local", []), ("ray", ["--ray-address", cluster.address])):
        with JudgeServer(script) as server, otlp_receiver() as receiver:
            flags = [*judge_flags(server), "--no-cache", *where, "-o", f"{label}.json"]
            done = score(
                runs,
                *flags,
                cwd=tmp_path,
                OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
                OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
            )
            assert done.returncode == 0, done.stderr
            assert "warning" not in done.stderr
            exported[label] = dict(receiver.values)
    judge = results(tmp_path / "ray.json")["judge"]
    assert exported["ray"] == exported["local"]
    mode = ("atif.scoring_mode", "default")
    values = exported["ray"]
    assert values[("atif.judge.call.count", (mode,))] == judge["calls"] == 2 * judge["successes"]
    assert values[("atif.judge.call.success", (mode,))] == judge["successes"]
    assert values[("atif.judge.call.latency", (mode,))] == judge["calls"]  # one per call
    assert values[("atif.judge.call.errors", (mode, ("error.type", "http_503")))] == judge["errors"]
    assert (
        values[("atif.judge.token.count", (mode, ("direction", "input")))]
        == (judge["input_tokens"])
    )


def answered(server: JudgeServer) -> set[str]:
    return {r.body_sha256 for r in list(server.log) if r.outcome == "ok"}


def stored(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store) as db:
        return int(db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])


def test_a_rerun_after_the_driver_is_killed_repeats_no_judge_call(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    runs = collection(tmp_path, trees=16)
    store = tmp_path / "cache" / "verdicts.sqlite"
    script = Script(latency=0.05)
    with JudgeServer(script) as server:
        command = [
            sys.executable, "-m", "agentjudge", "score", str(runs), *judge_flags(server),
            "--judge-call-timeout", "600", "--ray-address", cluster.address, "--quiet",
            "-o", "out.json",
        ]  # fmt: skip
        env = ray_env({"AGENTJUDGE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(SRC)})
        driver = subprocess.Popen(command, cwd=tmp_path, env=env, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while len(answered(server)) < 60 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert driver.poll() is None, "the run ended before it could be killed"
            # from now on every call hangs: the workers' verdicts all reach the store...
            script.latency = 3600
            got = answered(server)
            while stored(store) < len(got) and time.monotonic() < deadline:
                time.sleep(0.05)
                got = answered(server)
            assert stored(store) == len(got) > 0
            # ...and then the driver dies, with calls in flight on its workers
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(30)
        finally:
            if driver.poll() is None:
                os.killpg(driver.pid, signal.SIGKILL)
                driver.wait(30)
        assert not (tmp_path / "out.json").exists()
        script.latency = 0.01
        start = len(server.log)
        again = subprocess.run(command, cwd=tmp_path, env=env, timeout=240)
        assert again.returncode == 0
        rerun = [r.body_sha256 for r in list(server.log)[start:]]
    assert rerun, "the re-run had calls left to make"
    # no call whose answer the killed run had committed is made again (a call answered
    # after `got` was taken, a slow one of the old latency, was still in flight)
    assert not set(rerun) & got
    document = results(tmp_path / "out.json")
    assert document["run_metadata"]["atif_complete"] is True
    assert document["judge"]["cache_hits"] >= len(got)


def test_ctrl_c_cancels_the_work_on_the_cluster_writes_nothing_and_exits_130(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    runs = collection(tmp_path)
    env = ray_env({"AGENTJUDGE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(SRC)})
    with JudgeServer(Script(latency=0.5)) as slow:
        command = [
            sys.executable, "-m", "agentjudge", "score", str(runs), *judge_flags(slow),
            "--ray-address", cluster.address, "-o", "out.json",
        ]  # fmt: skip
        proc = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not slow.log and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        time.sleep(1)  # the calls in flight end; no unit goes on judging
        after = len(slow.log)
        time.sleep(2)
        assert len(slow.log) == after
    assert proc.returncode == 130, err
    assert "interrupted: nothing was written" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.json").exists()


def unit_workers(cluster: LocalRayCluster, node: int) -> list[int]:
    """The worker processes of `node` judging a unit right now."""
    running = []
    for pid in cluster.node_pids(node):
        try:
            name = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if name.startswith(b"ray::score_unit"):
            running.append(pid)
    return running


def test_a_worker_killed_mid_run_costs_only_its_calls_in_flight(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    runs = collection(tmp_path, trees=16)
    with JudgeServer(Script(latency=0.05)) as server:
        flags = judge_flags(server)
        local = score(runs, *flags, "--no-cache", "-o", "local.json", cwd=tmp_path)
        assert local.returncode == 0, local.stderr
        planned = len(server.log)
        server.log.clear()
        command = [
            sys.executable, "-m", "agentjudge", "score", str(runs), *flags, "--quiet",
            "--ray-address", cluster.address, "-o", "ray.json",
        ]  # fmt: skip
        env = ray_env({"AGENTJUDGE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(SRC)})
        driver = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        victims: list[int] = []
        while not victims and time.monotonic() < deadline and driver.poll() is None:
            if len(answered(server)) >= 40:
                victims = unit_workers(cluster, 1)
            time.sleep(0.01)
        assert victims, "no unit was running on the joined node"
        os.kill(victims[0], signal.SIGKILL)  # the worker process, by its PID
        _, err = driver.communicate(timeout=240)
    assert driver.returncode == 0, err
    assert len(server.log) < 2 * planned
    expected, got = results(tmp_path / "local.json"), results(tmp_path / "ray.json")
    assert got["metrics"] == expected["metrics"]
    assert step_scores(got) == step_scores(expected)
    assert got["run_metadata"]["atif_complete"] is True


def parent_title(pid: int) -> str:
    """The command line of `pid`'s parent (a Ray actor's is its title, `ray::NodeJudge...`)."""
    try:
        parent = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1]
        return (Path("/proc") / parent / "cmdline").read_bytes().decode(errors="replace")
    except (OSError, IndexError):
        return ""


@pytest.mark.local_judge
@pytest.mark.timeout(600)  # two servers start, and share this machine's cores
@pytest.mark.skipif(sys.platform != "linux", reason="finds the servers' processes in /proc")
def test_the_embedded_judge_runs_a_server_on_each_node(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    from tests.e2e.test_local_judge import arithmetic, servers

    runs = tmp_path / "runs"
    for name in ("a", "b"):  # a unit each: one per node, and requests that differ
        path = arithmetic(runs / name)
        document = json.loads(path.read_text())
        document["session_id"] = name
        for step in document["steps"]:
            step["message"] = f"(run {name}) {step['message']}"
        path.write_text(json.dumps(document))
    before = servers()
    # --failure-threshold 0: only the step calls are paid for
    flags = ["--judge", "local", "--set", "failure_threshold=0", "--quiet"]
    command = [
        sys.executable, "-m", "agentjudge", "score", str(runs), *flags,
        "--ray-address", cluster.address, "-o", "ray.json",
    ]  # fmt: skip
    env = ray_env({"AGENTJUDGE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(SRC)})
    # stderr to a file: a pipe nobody reads while polling could fill and stall the driver
    errors = tmp_path / "driver.err"
    running: set[int] = set()
    with (
        errors.open("w") as sink,
        subprocess.Popen(command, cwd=tmp_path, env=env, stderr=sink) as driver,
    ):
        while driver.poll() is None:
            running |= {pid for pid in servers() - before if "NodeJudge" in parent_title(pid)}
            time.sleep(0.2)
    assert driver.returncode == 0, errors.read_text()
    assert len(running) == 2  # one server per node, however many units
    # each stopped with the job (only this job's: another process on the machine may run
    # an embedded judge of its own meanwhile)
    assert running.isdisjoint(servers())
    on_ray = results(tmp_path / "ray.json")
    assert on_ray["judge"]["successes"] == 4
    assert on_ray["run_parameters"]["atif_judge"].startswith("local/")
    # a local run finds every verdict in the store the Ray run filled: the same judge,
    # the same requests, the same results
    local = score(runs, *flags, "-o", "local.json", cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    here = results(tmp_path / "local.json")
    assert here["judge"]["cache_hits"] == 4
    assert here["judge"]["successes"] == 0
    assert step_scores(here) == step_scores(on_ray)
    assert all(score is not None for _, _, score, _ in step_scores(on_ray))
    assert here["metrics"] == on_ray["metrics"]


def test_judge_timeout_stops_the_workers_judging_and_keeps_what_they_judged(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    runs = tmp_path / "runs"
    for index in range(4):
        document = doc(4)
        for step in document["steps"]:
            step["message"] = f"t{index} s{step['step_id']} [[score=0.9]]"
        if index == 0:  # its last step's call is never answered
            document["steps"][-1]["message"] += " [[fault=hang]]"
        write(runs / f"t{index}.json", document)
    # the deadline is the driver's, read by every worker; a call alone would wait 600 s.
    # 12 s, of which the other trees take a few (the job's start on the cluster included):
    # each second more is waited by the hanging call, in every run of the suite
    flags = ["--judge-timeout", "12", "--judge-call-timeout", "600"]
    with JudgeServer(Script(hang_seconds=900)) as server:
        started = time.monotonic()
        run = score(runs, *judge_flags(server), *flags, "--ray-address", cluster.address,
                    "-o", "out.json", cwd=tmp_path)  # fmt: skip
        took = time.monotonic() - started
    assert run.returncode == 1, run.stderr
    assert took < 120
    document = results(tmp_path / "out.json")
    assert document["step_errors"] == {"judge_timeout": 1}
    nodes = sorted((t["nodes"][0] for t in document["trajectories"]), key=lambda n: n["file"])
    assert [n["reason"] for n in nodes] == ["judge_timeout", None, None, None]
    assert [s["score"] for s in nodes[0]["steps"]] == [0.9, 0.9, 0.9, None]
