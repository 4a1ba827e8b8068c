"""`agentjudge review` as a person gets it: the real CLI serves the page for results the real
`score` wrote, headless Chromium labels ten steps with the keyboard only, and the server
refuses what is not the page's own."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page

from agentjudge.judge.taxonomy import CATEGORIES
from tests.atif.docs import doc, step, write
from tests.conftest import ATIF_FIXTURES, REPO
from tests.e2e.browser import chromium
from tests.e2e.conftest import start, stop

pytestmark = pytest.mark.timeout(180)

ATTACK = "<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>"
PROJECT = REPO / "tests" / "cases" / "data" / "project"
REAL_RUNS = ["harbor-golden__t2-hello-world.v1.3.json", "matraix__browser-use-books-interest.json"]
# what each of the first ten items gets, key by key (1-5: a score on the scale [0, 1])
ACTIONS: list[list[str]] = [
    ["y"], ["n"], ["y", "5"], ["n", "1"], ["y", "c", "5"], ["n", "c", "2"], ["3"], ["y"],
    ["n", "e"], ["y", "c", "1"],
]  # fmt: skip
NOTE = "the call <b>looks</b> fine"


def agentjudge(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENTJUDGE_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", *map(str, args)],
        capture_output=True, text=True, timeout=120, env=env, cwd=cwd,
    )  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Score results of two real runs and one whose step plants markup, by the fake judge
    with three samples."""
    folder = tmp_path_factory.mktemp("review")
    (folder / "runs").mkdir()
    for name in REAL_RUNS:
        shutil.copy(ATIF_FIXTURES / name, folder / "runs")
    planted = doc(4)
    planted["steps"][0] = step(1, "user", f"plant {ATTACK}")
    planted["steps"][2] = step(3, message=f"answer {ATTACK}")
    write(folder / "runs" / "planted.json", planted)
    run = agentjudge("score", "runs", "--judge", "fake", "--samples", "3", "-o", "results.json",
                     cwd=folder)  # fmt: skip
    assert run.returncode == 0, run.stderr
    return folder / "results.json"


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    with chromium() as context:
        yield context


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    url: str
    port: int
    log: Path

    @property
    def token(self) -> str:
        return self.url.rsplit("token=", 1)[1]


@contextmanager
def reviewing(results: Path, folder: Path) -> Iterator[Served]:
    """`agentjudge review RESULTS` running, its labels in `folder`/labels.json."""
    log = folder / "review.log"
    command = [sys.executable, "-m", "agentjudge", "review", str(results), "--labels",
               str(folder / "labels.json"), "--reviewer", "ana", "--no-open"]  # fmt: skip
    proc = start(command, log, folder)
    try:
        url = _printed_url(proc, log)
        yield Served(proc, url, int(url.split(":")[2].split("/")[0]), log)
    finally:
        if proc.poll() is None:
            stop(proc)


@pytest.fixture
def served(results: Path, tmp_path: Path) -> Iterator[Served]:
    with reviewing(results, tmp_path) as review:
        yield review


def _printed_url(proc: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", log.read_text())
        if found:
            return found.group(0)
        assert proc.poll() is None, log.read_text()
        time.sleep(0.1)
    raise AssertionError(f"no URL printed: {log.read_text()}")


def open_page(browser: BrowserContext, url: str, errors: list[str]) -> Page:
    page = browser.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "console",
        lambda msg: errors.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    page.goto(url)
    page.wait_for_selector("body[data-ready]", timeout=15_000)
    return page


def api_state(served: Served) -> dict[str, Any]:
    response = httpx.get(f"http://127.0.0.1:{served.port}/api/state?token={served.token}")
    response.raise_for_status()
    return dict(response.json())


def api_item(served: Served, index: int) -> dict[str, Any]:
    response = httpx.get(f"http://127.0.0.1:{served.port}/api/items/{index}?token={served.token}")
    response.raise_for_status()
    return dict(response.json())


def labels_on_disk(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text())["review"]["labels"])


def wait_labelled(page: Page, count: int) -> None:
    page.wait_for_selector(f'#progress[data-labelled="{count}"]', timeout=15_000)


def expected(actions: list[str]) -> dict[str, Any]:
    """The label a list of keys leaves: the last y/n, the last digit, the last category."""
    label: dict[str, Any] = {"pass": None, "score": None, "category": None, "note": None}
    keys = iter(actions)
    for key in keys:
        if key in "yn":
            label["pass"] = key == "y"
        elif key == "c":
            label["category"] = CATEGORIES[int(next(keys)) - 1]
        elif key == "e":
            label["note"] = NOTE.strip()
        else:
            label["score"] = (int(key) - 1) / 4
    return label


def test_label_ten_steps_with_the_keyboard_reload_and_undo(
    served: Served, browser: BrowserContext, results: Path, tmp_path: Path
) -> None:
    state = api_state(served)
    assert tuple(state["categories"]) == CATEGORIES
    assert len(state["items"]) >= 12
    assert state["start"] == 0
    errors: list[str] = []
    page = open_page(browser, served.url, errors)
    assert page.get_attribute("#progress", "data-index") == "0"

    # typed in one go, without waiting: each key acts once the one before has
    for actions in ACTIONS:
        if "e" in actions:
            page.keyboard.type("".join(actions))
            page.keyboard.type(NOTE)
            page.keyboard.press("Enter")
            page.keyboard.type("j")
        else:
            page.keyboard.type("".join(actions) + "j")
    wait_labelled(page, 10)
    page.wait_for_selector('#progress[data-index="10"]')
    keys = [item["key"] for item in state["items"]]
    on_disk = labels_on_disk(tmp_path / "labels.json")
    assert sorted(on_disk) == sorted(keys[:10])
    for key, actions in zip(keys, ACTIONS, strict=False):
        got = on_disk[key]
        assert {field: got[field] for field in ("pass", "score", "category", "note")} == expected(
            actions
        ), (key, actions)
        assert got["reviewer"] == "ana"
        assert got["part"] == state["items"][keys.index(key)]["part"]

    # a reload keeps the place and shows the labels
    page.reload()
    page.wait_for_selector('body[data-ready="10"]')
    wait_labelled(page, 10)
    page.keyboard.press("k")
    page.wait_for_selector('body[data-ready="9"]')
    assert page.text_content('#answer [data-field="passed"]') == "yes"
    assert page.text_content('#answer [data-field="category"]') == CATEGORIES[0]
    if target := os.environ.get("AGENTJUDGE_REVIEW_SCREENSHOT"):  # docs/review.png
        page.screenshot(path=REPO / target)
    # the printed URL opened again starts at the first item not labelled
    fresh = open_page(browser, served.url, errors)
    assert fresh.get_attribute("#progress", "data-index") == "10"
    fresh.close()

    # undo: the last action (item 9's category), then the one before (its y), from any item
    page.keyboard.press("j")
    page.wait_for_selector('body[data-ready="10"]')
    page.keyboard.press("u")
    page.wait_for_selector('body[data-ready="9"]')  # undo shows the item it changed
    page.wait_for_selector('#answer [data-field="category"]:text-is("\u2013")')  # none
    assert labels_on_disk(tmp_path / "labels.json")[keys[9]]["category"] is None
    assert labels_on_disk(tmp_path / "labels.json")[keys[9]]["pass"] is True
    page.keyboard.press("u")
    wait_labelled(page, 9)
    assert keys[9] not in labels_on_disk(tmp_path / "labels.json")
    assert page.get_attribute("#label", "data-labelled") == "no"
    assert errors == []

    # Ctrl-C: exit 130, the labels already on disk
    served.proc.send_signal(signal.SIGINT)
    stopping = time.monotonic()
    assert served.proc.wait(30) == 130
    assert time.monotonic() - stopping < 10  # with the page still open in the browser
    assert "stopped: every label given is in" in served.log.read_text()
    assert len(labels_on_disk(tmp_path / "labels.json")) == 9
    page.close()

    # calibrate measures the judge on these labels, with no judge call
    done = agentjudge("calibrate", "--labels", tmp_path / "labels.json", results, "--json",
                      cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    [ana] = json.loads(done.stdout)["reviewers"]
    assert sum(part["labelled"] for part in ana["parts"].values()) == 9
    # every label counts, item 6's too: a score only passes or fails at the threshold
    assert ana["figures"]["step_accuracy"]["steps"] == 9


def test_requests_without_the_token_or_for_another_host_are_refused(served: Served) -> None:
    base = f"http://127.0.0.1:{served.port}"
    token = served.token
    for path in ("/", "/review.js", "/api/state", "/api/items/0"):
        assert httpx.get(base + path).status_code == 403, path
        assert httpx.get(f"{base}{path}?token=not-{token}").status_code == 403, path
        foreign = httpx.get(f"{base}{path}?token={token}", headers={"Host": "evil.example"})
        assert foreign.status_code == 403, path
        rebound = httpx.get(
            f"{base}{path}?token={token}", headers={"Host": f"evil.example:{served.port}"}
        )
        assert rebound.status_code == 403, path
        assert httpx.get(f"{base}{path}?token={token}").status_code == 200, path
    post = httpx.post(f"{base}/api/undo", json={})
    assert post.status_code == 403
    form = httpx.post(f"{base}/api/undo?token={token}", data={"a": "b"})  # a form, not JSON
    assert form.status_code == 403
    page = httpx.get(f"{base}/?token={token}", headers={"Host": f"localhost:{served.port}"})
    assert page.status_code == 200
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in page.headers["Content-Security-Policy"]
    assert httpx.get(f"{base}/etc/passwd?token={token}").status_code == 404
    assert httpx.get(f"{base}/../pyproject.toml?token={token}").status_code == 404


def test_planted_markup_is_shown_as_text_and_never_runs(
    served: Served, browser: BrowserContext
) -> None:
    keys = [item["key"] for item in api_state(served)["items"]]
    index = keys.index("runs/planted.json##3")  # its third step, the agent's answer
    errors: list[str] = []
    page = open_page(browser, f"{served.url}#{index}", errors)
    assert page.get_attribute("body", "data-key") == keys[index]
    assert page.text_content("#task") == f"plant {ATTACK}"
    current = page.locator("#context li.current .message")
    assert current.text_content() == f"answer {ATTACK}"
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#app script, #app img").count() == 0
    assert page.locator("script").count() == 1  # the page's own
    assert errors == []
    page.close()


def test_a_grade_runs_judge_metrics_are_reviewed_on_their_own_scale(
    tmp_path: Path, browser: BrowserContext
) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    run = agentjudge("grade", "--judge-provider", "fake", "-o", "g.json", cwd=project)
    assert run.returncode == 1, run.stdout + run.stderr  # the project's gate is not met
    graded = json.loads((project / "g.json").read_text())
    judged = {(case["id"], name) for case in graded["cases"] for name in case["judge_scores"]}
    with reviewing(project / "g.json", tmp_path) as served:
        state = api_state(served)
        assert {tuple(item["key"].split("#")) for item in state["items"]} == judged
        errors: list[str] = []
        page = open_page(browser, served.url, errors)
        first = state["items"][0]["key"]
        case, metric = first.split("#")
        assert page.get_attribute("body", "data-key") == first
        assert f"{case} · {metric}" in (page.text_content("#where") or "")
        page.keyboard.type("4nj")
        page.wait_for_selector('body[data-ready="1"]')  # after the keys before it
        wait_labelled(page, 1)
        label = labels_on_disk(tmp_path / "labels.json")[first]
        low, high = api_item(served, 0)["scale"]
        assert label["score"] == low + 3 * (high - low) / 4  # 4 of 1-5 on the judge's scale
        assert label["pass"] is False
        assert errors == []
        page.close()
