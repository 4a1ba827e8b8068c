"""Hostile use of the command line: outputs that are not regular files, a full disk, judge
URLs with credentials or a bad port, and an internal error. The real CLI in a subprocess
(in process where a fault must be injected), the real judge server."""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentjudge import cli, files
from agentjudge.cli import validate
from agentjudge.errors import EXIT_INTERNAL, EXIT_USAGE, UsageError
from agentjudge.testing import JudgeServer
from tests.e2e.test_grade_cli import PROJECT
from tests.e2e.test_score_cli import judge_flags, results, score, tree
from tests.report.test_html import GOLDEN

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def run(command: str, *args: str | Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "JUDGE_BASE_URL"
    }
    clean["AGENTJUDGE_CACHE_DIR"] = str(cwd / "cache")
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", command, *map(str, args)],
        capture_output=True, text=True, timeout=110, env={**clean, **env}, cwd=cwd,
    )  # fmt: skip


# What an output path may already be, and how to tell afterwards that it was left alone.
def make_folder(path: Path) -> Callable[[], bool]:
    path.mkdir()
    (path / "keep.txt").write_text("mine")
    return lambda: path.is_dir() and (path / "keep.txt").read_text() == "mine"


def make_fifo(path: Path) -> Callable[[], bool]:
    os.mkfifo(path)
    return lambda: stat.S_ISFIFO(os.lstat(path).st_mode)


def make_device(path: Path) -> Callable[[], bool]:
    if os.geteuid() != 0:
        pytest.skip("creating a device node needs root")
    os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 7))  # what /dev/full is
    return lambda: stat.S_ISCHR(os.lstat(path).st_mode)


def make_symlink(path: Path) -> Callable[[], bool]:
    elsewhere = path.parent.parent / f"elsewhere-{path.name}"
    elsewhere.write_text("theirs")
    path.symlink_to(elsewhere)
    return lambda: path.is_symlink() and elsewhere.read_text() == "theirs"


KINDS = {
    "folder": make_folder,
    "fifo": make_fifo,
    "device": make_device,
    "symlink": make_symlink,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("flag", ["-o", "--html", "manifest"])
def test_score_refuses_outputs_that_are_not_regular_files(
    tmp_path: Path, server: JudgeServer, kind: str, flag: str
) -> None:
    runs = tree(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    extra: list[str] = []
    if flag == "manifest":
        target = work / "out.eligible_trajectories.json"
        extra = ["-o", str(work / "out.json"), "--set", "training_threshold=0.5"]
    else:
        target = work / "target"
        extra = [flag, str(target)] + (["-o", str(work / "out.json")] if flag != "-o" else [])
    intact = KINDS[kind](target)
    done = score(runs, *judge_flags(server), *extra, cwd=tmp_path)
    assert done.returncode == EXIT_USAGE, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: {target}: is a ")
    assert "must name a regular file or a new one" in line
    assert server.log == []  # refused before any judge call
    assert intact()
    assert not (work / "out.json").exists()


# a folder is a valid --output of grade (results_<ts>.json go inside)
@pytest.mark.parametrize(
    ("flag", "kind"),
    [
        (f, k)
        for f in ("--junit", "--html", "--output")
        for k in KINDS
        if (f, k) != ("--output", "folder")
    ],
)
def test_grade_refuses_outputs_that_are_not_regular_files(
    tmp_path: Path, server: JudgeServer, kind: str, flag: str
) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    target = tmp_path / "target"
    intact = KINDS[kind](target)
    done = run("grade", flag, target, cwd=project, JUDGE_BASE_URL=server.base_url)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr.startswith(f"error: {target}: is a "), done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert server.log == []
    assert intact()


@pytest.mark.parametrize("kind", KINDS)
def test_report_refuses_outputs_that_are_not_regular_files(tmp_path: Path, kind: str) -> None:
    document = tmp_path / "results.json"
    shutil.copy(GOLDEN / "fail_and_missing.results.json", document)
    target = tmp_path / "out"
    intact = KINDS[kind](target)
    done = run("report", document, "-o", target, cwd=tmp_path)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr.startswith(f"error: {target}: is a "), done.stderr
    assert intact()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs: a disk that fills up (needs the right to mount, as root here)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with pytest.raises(OSError, match="No space left"):
            write_forever(fd)
    finally:
        os.close(fd)


def write_forever(fd: int) -> None:
    while True:
        os.write(fd, b"x" * 65536)


def test_a_full_disk_is_one_line_and_the_old_results_stay(
    tmp_path: Path, server: JudgeServer, small_disk: Path
) -> None:
    runs = tree(tmp_path)
    out = small_disk / "out.json"
    first = score(runs, *judge_flags(server), "-o", out, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = out.read_bytes()
    fill(small_disk)
    again = score(runs, *judge_flags(server), "-o", out, cwd=tmp_path)
    assert again.returncode == EXIT_USAGE, again.stderr
    (line,) = [line for line in again.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {out}: cannot write the results (No space left on device)")
    assert "Traceback" not in again.stderr
    assert out.read_bytes() == before
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "out.json"]


def test_a_write_that_fails_late_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a tmpfs cannot be mounted: the disk fills at fsync, the last moment it can."""
    out = tmp_path / "results.json"
    out.write_text('{"old": true}\n')

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(UsageError, match=r"cannot write the results \(No space left"):
        files.write_atomic(out, {"new": True})
    assert out.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:99999/v1", "the port must be a number from 1 to 65535"),
        ("http://127.0.0.1:0/v1", "the port must be a number from 1 to 65535"),
        ("ftp://127.0.0.1/v1", "must start with http:// or https://"),
        ("http:///v1", "has no host"),
    ],
)
def test_a_bad_judge_url_is_one_line_and_exit_3(tmp_path: Path, url: str, message: str) -> None:
    runs = tree(tmp_path)
    done = score(runs, "--judge-url", url, "--judge-model", "m", cwd=tmp_path)
    assert done.returncode == EXIT_USAGE
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: --judge-url: ")
    assert message in line


def test_credentials_in_the_url_and_a_key_are_refused(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    url = server.base_url.replace("http://", "http://user:hunter2secret@")
    done = score(
        runs, "--judge-url", url, "--judge-model", "judge", cwd=tmp_path,
        AGENTJUDGE_JUDGE_API_KEY="sk-another-key-123456",
    )  # fmt: skip
    assert done.returncode == EXIT_USAGE
    (line,) = done.stderr.splitlines()
    assert "carries credentials" in line
    assert "keep one" in line
    assert "hunter2secret" not in line
    assert "sk-another" not in line
    assert server.log == []


def test_credentials_in_the_url_become_the_key(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    url = server.base_url.replace("http://", "http://user:hunter2secret@")
    done = score(runs, "--judge-url", url, "--judge-model", "judge", "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert {entry.headers.get("authorization") for entry in server.log} == {"Bearer hunter2secret"}
    written = (tmp_path / "out.json").read_text()
    assert "hunter2secret" not in written + done.stderr + done.stdout
    assert results(tmp_path / "out.json")["judge"]["endpoint"].startswith("http://127.0.0.1:")


def test_an_internal_error_is_exit_4_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tree(tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("sk-secret-in-a-bug-123456")

    monkeypatch.setattr(validate, "load_runs", broken)
    assert cli.main(["validate", str(runs)]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert re.match(r"error: internal error \(KeyError at validate\.py:\d+\): ", line), line
    assert "this is a bug in agentjudge" in line
    assert "--debug" in line
    assert "sk-secret" not in err

    assert cli.main(["--debug", "validate", str(runs)]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.splitlines()[-1].startswith("error: internal error (KeyError")
