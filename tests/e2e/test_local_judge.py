"""The embedded judge for real: the CLI in a subprocess, the real model on this CPU.

Skipped when the `local` extra is not installed, except under `make test`, which installs
it and sets AGENTJUDGE_LOCAL_JUDGE_TESTS=required so that a broken install fails. Kept to one
small trajectory: each judge call costs seconds of CPU.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from agentjudge.convert.folder import convert_who_and_when
from agentjudge.judge.providers.local import LOCAL_NOTE, MODEL_NAME, SERVER_MODULE
from tests.atif.docs import step, write
from tests.conftest import FIXTURES

if find_spec("llama_cpp") is None and os.environ.get("AGENTJUDGE_LOCAL_JUDGE_TESTS") != "required":
    pytest.skip("the local extra is not installed", allow_module_level=True)

pytestmark = [
    pytest.mark.local_judge,
    pytest.mark.timeout(300),  # the first run on a machine also joins the 1.1 GB model
    pytest.mark.skipif(sys.platform != "linux", reason="finds the server's process in /proc"),
]

TASK = "What is 17 + 25? Reply with the number."


def arithmetic(folder: Path) -> Path:
    """Two agent steps: one obviously right, one obviously wrong and off-task."""
    document = {
        "schema_version": "ATIF-v1.7",
        "session_id": "local-judge-e2e",
        "agent": {"name": "agent", "version": "1"},
        "extra": {"task_instruction": TASK},
        "steps": [
            step(1, message="17 + 25 = 42. The answer is 42."),
            step(2, message="The answer is 7. I did not add the numbers; I like bananas."),
        ],
    }
    return write(folder / "run.json", document)


def servers() -> set[int]:
    """Pids of every embedded judge's server running on this machine."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if proc.name.isdigit() and SERVER_MODULE.encode() in command:
            found.add(int(proc.name))
    return found


def children(pid: int) -> set[int]:
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(proc.name))
    return found


def command(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "agentjudge", "score", *map(str, args), "--judge", "local"]


def test_the_real_model_scores_the_bad_step_below_the_good_one(tmp_path: Path) -> None:
    before = servers()
    # --failure-threshold 0: no categorization call, only the two step calls are paid for
    flags: list[str | Path] = [
        "--no-cache",
        "--set",
        "failure_threshold=0",
        "-o",
        tmp_path / "out.json",
    ]
    run = subprocess.run(
        command(arithmetic(tmp_path), *flags),
        capture_output=True, text=True, timeout=280, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    results: dict[str, Any] = json.loads((tmp_path / "out.json").read_text())
    good, bad = results["trajectories"][0]["nodes"][0]["steps"]
    for verdict in (good, bad):
        assert verdict["error"] is None, verdict
        assert 0.0 <= verdict["score"] <= 1.0
        # weighed by the judge's own probabilities: the server sent the answer token's
        # alternatives
        assert "p(true)" in verdict["rationale"], verdict
    assert bad["score"] < good["score"], (good, bad)
    assert results["judge"]["protocol_errors"] == 0
    assert results["run_parameters"]["atif_judge"] == f"local/{MODEL_NAME}"
    assert results["run_metadata"]["judge_notice"] == LOCAL_NOTE
    assert f"note: {LOCAL_NOTE}" in run.stderr.replace("\n", " ")
    # asked in its server's own shape from the first call (the schema beside json_object,
    # which it turns into a grammar): nothing refused, nothing negotiated, no server path
    assert results["judge"]["requests"]["response_format"] == "json_object_schema"
    assert results["judge"]["notes"] == []
    assert (results["judge"]["calls"], results["judge"]["errors"]) == (2, 0)
    assert "refused" not in run.stderr
    assert "site-packages" not in run.stderr
    assert results["judge"]["endpoint"].startswith("http://127.0.0.1:")
    assert servers() <= before  # no server left behind
    # the dry run counts with the model's own tokenizer: exactly the server's usage
    dry = subprocess.run(
        command(tmp_path / "run.json", "--dry-run", "--json", *flags),
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert dry.stderr == ""  # llama.cpp's warning on loading a vocabulary stays unprinted
    plan = json.loads(dry.stdout)
    assert plan["tokenizer"] == f"{MODEL_NAME}'s tokenizer"
    assert plan["step_calls"] == results["judge"]["successes"] == results["judge"]["calls"] == 2
    assert plan["step_input_tokens"] == results["judge"]["input_tokens"]


def one_long_step(folder: Path) -> Path:
    """One agent step, a call of about 2,300 tokens the server computes for seconds (tens
    on 2 busy cores), long enough to be interrupted or killed in."""
    lines = [
        f"Line {i}: 17 + 25 = 42, checked again by adding the tens, then the ones."
        for i in range(70)
    ]
    document = {
        "schema_version": "ATIF-v1.7",
        "session_id": "local-judge-long-step",
        "agent": {"name": "agent", "version": "1"},
        "extra": {"task_instruction": TASK},
        "steps": [step(1, message="\n".join(lines))],
    }
    return write(folder / "long.json", document)


def test_ctrl_c_stops_the_server_and_leaves_nothing_behind(tmp_path: Path) -> None:
    """Ctrl-C while the server computes a call: the CLI stops it and exits within 4 s
    (the server gets SIGTERM, then SIGKILL after 1 s: on SIGTERM uvicorn would first
    finish the call). 1.3-1.6 s measured at load 5 on 2 cores; 5.3 s with a 5 s grace."""
    with subprocess.Popen(
        command(one_long_step(tmp_path), "--no-cache", "-o", tmp_path / "out.json"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    ) as cli:  # fmt: skip
        server = 0
        try:
            server = wait_for_server(cli.pid)
            wait_for_call(server)
            cli.send_signal(signal.SIGINT)
            interrupted = time.monotonic()
            _, err = cli.communicate(timeout=60)
            stopping = time.monotonic() - interrupted
        finally:
            cli.kill()
            if server and running(server):
                os.kill(server, signal.SIGKILL)
    assert cli.returncode == 130, err
    assert "interrupted" in err
    assert not running(server)
    assert stopping < 4, f"the CLI took {stopping:.1f} s to stop after Ctrl-C"
    assert not (tmp_path / "out.json").exists()


def test_a_cli_killed_mid_call_takes_its_server_with_it(tmp_path: Path) -> None:
    """kill -9 of agentjudge while its server computes a call: the kernel kills the server
    too (PR_SET_PDEATHSIG), at once. Were it sent SIGTERM, uvicorn would first finish the
    call."""
    with subprocess.Popen(
        command(one_long_step(tmp_path), "--no-cache", "-o", tmp_path / "out.json"),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
    ) as cli:  # fmt: skip
        server = 0
        try:
            server = wait_for_server(cli.pid)
            wait_for_call(server)
            cli.kill()
            cli.wait()
            deadline = time.monotonic() + 2
            while running(server) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not running(server), "the server outlived its killed parent by 2 s"
        finally:
            cli.kill()
            if server and running(server):
                os.kill(server, signal.SIGKILL)


def running(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for_call(server: int, seconds: float = 120) -> None:
    """Return once `server` computes a judge call: its log (an unnamed temporary file, read
    through /proc) has llama-cpp-python's line for a prompt that follows the readiness
    check's (`Llama.generate: N prefix-match hit, remaining M prompt tokens to eval`)."""
    deadline = time.monotonic() + seconds
    with open(f"/proc/{server}/fd/1", "rb") as log:
        while time.monotonic() < deadline:
            log.seek(0)
            if b"prompt tokens to eval" in log.read():
                return
            time.sleep(0.1)
        log.seek(0)
        tail = log.read()[-500:].decode(errors="replace")
    raise AssertionError(f"the server {server} computed no judge call in {seconds} s: {tail}")


def wait_for_server(cli: int, seconds: float = 120) -> int:
    """The pid of the judge's server the CLI started, once it runs."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = children(cli) & servers()
        if started:
            return started.pop()
        time.sleep(0.2)
    raise AssertionError(f"no judge server child of {cli} after {seconds} s")


def test_the_estimate_is_within_ten_percent_of_the_models_tokenizer() -> None:
    """Plans for judges whose tokenizer is unknown estimate (`scoring/estimate.py`); over
    real trajectories, examples/ and the ATIF fixtures, the estimate stays within 10% of
    what Qwen2.5's tokenizer counts for the same requests (step and categorization)."""
    from agentjudge.atif import load_trees
    from agentjudge.judge.model_cache import ensure_model
    from agentjudge.judge.providers.local import LocalJudge
    from agentjudge.scoring.config import ScoreConfig
    from agentjudge.scoring.criteria import resolve_criteria
    from agentjudge.scoring.estimate import estimate_plan
    from tests.conftest import ATIF_FIXTURES, REPO

    counter, _ = LocalJudge(ensure_model()).token_counter()
    for folder in (REPO / "examples" / "trajectories", ATIF_FIXTURES):
        files = sorted(folder.glob("*.json"))[:12]
        config = ScoreConfig.model_validate(
            {"trajectory_path": [str(f) for f in files], "judge": "fake"}
        )
        roots = list(load_trees(config.trajectory_path, config.limits()))
        criteria = resolve_criteria("default")
        estimated = estimate_plan(roots, config, criteria, lambda _: False)
        counted = estimate_plan(roots, config, criteria, lambda _: False, counter)
        for field in ("step_input_tokens", "categorization_input_tokens_at_most"):
            ratio = getattr(estimated, field) / getattr(counted, field)
            assert 0.9 <= ratio <= 1.1, (folder.name, field, ratio)


def test_calibrate_runs_on_a_converted_who_and_when_run(tmp_path: Path) -> None:
    """issue 19: calibrate end to end with the embedded judge on Who&When: one converted run,
    cut after its labelled step (step 2 of 5), each message cut to 400 characters (whole,
    the two calls took 20-60 s apiece on 2 shared cores, and what is tested is calibrate's
    flow, not the model). Failure threshold 0 sends no categorization call, so the decisive
    step is the lowest-scoring one (no step is below 0): the figures are the real model's,
    whatever they are, and only their shape is asserted."""
    convert_who_and_when(FIXTURES / "who-and-when", tmp_path / "ww")
    everything = json.loads((tmp_path / "ww" / "labels.json").read_text())
    name = "trajectories/algorithm-generated-53.json"
    run = json.loads((tmp_path / "ww" / name).read_text())
    assert everything["trajectories"][name]["decisive"]["step_id"] == 2
    run["steps"] = run["steps"][:2]
    for kept in run["steps"]:
        kept["message"] = kept["message"][:400]
    (tmp_path / "ww" / name).write_text(json.dumps(run))
    subset = {**everything, "trajectories": {name: everything["trajectories"][name]}}
    (tmp_path / "ww" / "subset.json").write_text(json.dumps(subset))
    done = subprocess.run(
        [sys.executable, "-m", "agentjudge", "calibrate", str(tmp_path / "ww" / "subset.json"),
         "--judge", "local", "--no-cache", "--set", "failure_threshold=0", "--json", "--quiet"],
        capture_output=True, text=True, timeout=280, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["trajectories"] == 1
    assert report["unscored_steps"] == 0
    assert report["judge"] == f"local/{MODEL_NAME}"
    figures = report["figures"]
    assert figures["step_accuracy"]["steps"] == 2  # the step before the labelled one, and it
    assert figures["agent_accuracy"]["labelled"] == 1
    assert figures["agent_accuracy"]["no_prediction"] == 0  # every labelled run gets one
    assert figures["decisive_step_accuracy"]["value"] in (0.0, 1.0)
    assert report["judge_usage"]["calls"] == 2  # the two steps, none refused
