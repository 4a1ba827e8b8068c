"""`agentjudge review` as the command line sees it, in this process: the paths it refuses,
the URL it prints and opens, and what Ctrl-C says (the page itself: tests/review/ and
tests/e2e/test_review_page.py)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentjudge.cli import main
from agentjudge.errors import EXIT_INTERRUPTED, EXIT_USAGE
from tests.atif.docs import doc, write


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("review-cli")
    write(folder / "runs" / "a.json", doc(4))
    out = folder / "results.json"
    assert main(["score", str(folder / "runs"), "--judge", "fake", "-q", "-o", str(out)]) == 0
    return out


def interrupted_once_served(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace the server by one that says it is ready, then gets Ctrl-C: the URLs it gave."""
    urls: list[str] = []

    async def serve(review: Any, sock: socket.socket, *, token: str,
                    on_ready: Callable[[str], None]) -> None:  # fmt: skip
        on_ready(f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}")
        urls.append(f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}")
        raise KeyboardInterrupt

    monkeypatch.setattr("agentjudge.review.server.serve", serve)
    return urls


def test_it_prints_and_opens_the_url_and_ctrl_c_says_the_labels_are_kept(
    results: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    urls = interrupted_once_served(monkeypatch)
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    assert main(["review", str(results), "--reviewer", "ana"]) == EXIT_INTERRUPTED
    out, err = capsys.readouterr()
    assert urls[0] in out
    assert len(urls[0].rsplit("token=", 1)[1]) >= 40  # 256 random bits
    labels = results.with_name("results.labels.json")  # the default: beside the results
    assert f"labels are written to {labels} as you go" in out
    assert err == (
        f"stopped: every label given is in {labels}; run the same command again to go on\n"
    )
    assert "nothing was written" not in err
    assert json.loads(labels.read_text())["review"]["reviewer"] == "ana"
    for _ in range(100):  # the browser is opened from a thread of its own
        if opened:
            break
        time.sleep(0.01)
    assert opened == urls


def test_no_open_opens_no_browser(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupted_once_served(monkeypatch)
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    labels = tmp_path / "mine.json"
    argv = ["review", str(results), "--labels", str(labels), "--reviewer", "bo", "--no-open"]
    assert main(argv) == EXIT_INTERRUPTED
    assert opened == []
    assert labels.exists()


def test_the_labels_file_may_not_be_the_results(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = results.read_bytes()
    assert main(["review", str(results), "--labels", str(results), "--no-open"]) == EXIT_USAGE
    assert capsys.readouterr().err == (
        f"error: {results}: --labels would overwrite the results file {results}, which this "
        "run reads; choose another --labels\n"
    )
    assert results.read_bytes() == before


def test_a_port_in_use_is_one_line_naming_the_flag(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["review", str(results), "--labels", str(tmp_path / "l.json"), "--reviewer",
                "ana", "--port", str(port), "--no-open"]  # fmt: skip
        assert main(argv) == EXIT_USAGE
    assert capsys.readouterr().err == (
        f"error: --port {port}: 127.0.0.1:{port} is in use; pick another port, or 0 for a "
        "free one\n"
    )


def test_help_names_the_keys_and_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "--help"]) == 0
    out = capsys.readouterr().out
    for word in ("--labels", "--reviewer", "--port", "--no-open", "--seed", "j/k", "undo"):
        assert word in out
    assert main(["--help"]) == 0
    assert "review" in capsys.readouterr().out
