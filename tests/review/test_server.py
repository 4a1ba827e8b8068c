"""The review server over real sockets: who it answers, what it answers with, and how a label
reaches the labels file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjudge.errors import UsageError
from agentjudge.judge.taxonomy import CATEGORIES
from agentjudge.review.items import ContextStep, ReviewItem
from agentjudge.review.labels import LabelBook
from agentjudge.review.server import CSP, Review, bind, cookie_name, serve

TOKEN = "t0ken-for-tests"
Check = Callable[[httpx.AsyncClient, int], Awaitable[None]]


def item(key: str, score: float = 0.5, scale: tuple[float, float] = (0.0, 1.0)) -> ReviewItem:
    step = ContextStep(step_id=2, source="agent", text="<b>hi</b>", tool_calls=(), observations=())
    return ReviewItem(
        key=key, kind="step", root="run.json", node=None, step_id=2, metric=None, task="task",
        context=(step,), score=score, threshold=0.5, scale=scale, samples=(score,),
        rationale="why", category=None, sample_categories=(), decisive=False,
    )  # fmt: skip


def review(tmp_path: Path, keys: tuple[str, ...] = ("a", "b", "c")) -> Review:
    book = LabelBook.open(
        tmp_path / "labels.json",
        results_path=tmp_path / "results.json",
        results_sha256="0" * 64,
        reviewer="ana",
    )
    return Review(
        order=[(item(key), "random") for key in keys],
        book=book,
        categories=CATEGORIES,
        reviewer="ana",
        results_name="results.json",
        labels_name="labels.json",
        stale=(),
    )


def served(tmp_path: Path, check: Check, keys: tuple[str, ...] = ("a", "b", "c")) -> None:
    """Run `check` against a real server of a three-item review on a free port."""

    async def run() -> None:
        sock = bind(0)
        port = int(sock.getsockname()[1])
        urls: list[str] = []
        task = asyncio.create_task(
            serve(review(tmp_path, keys), sock, token=TOKEN, on_ready=urls.append)
        )
        try:
            while not urls:
                await asyncio.sleep(0.01)
            assert urls == [f"http://127.0.0.1:{port}/?token={TOKEN}"]
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                await check(client, port)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            sock.close()

    asyncio.run(run())


AUTH = {"X-Review-Token": TOKEN}


def on_disk(tmp_path: Path) -> dict[str, Any]:
    return dict(json.loads((tmp_path / "labels.json").read_text())["review"]["labels"])


def test_only_requests_with_the_token_and_this_host_are_answered(tmp_path: Path) -> None:
    async def check(client: httpx.AsyncClient, port: int) -> None:
        cookie = {"Cookie": f"{cookie_name(port)}={TOKEN}"}
        for path in ("/", "/review.js", "/review.css", "/api/state", "/api/items/0"):
            client.cookies.clear()  # the client keeps the cookie a token in the URL sets
            assert (await client.get(path)).status_code == 403
            assert (await client.get(path, headers={"X-Review-Token": "other"})).status_code == 403
            assert (await client.get(path, headers=AUTH)).status_code == 200
            assert (await client.get(path, headers=cookie)).status_code == 200
            assert (await client.get(f"{path}?token={TOKEN}")).status_code == 200
            client.cookies.clear()
            for host in ("evil.example", f"evil.example:{port}", "127.0.0.1", "localhost:1"):
                refused = await client.get(path, headers={**AUTH, "Host": host})
                assert refused.status_code == 403, host
                assert refused.headers["Content-Security-Policy"] == CSP
            local = await client.get(path, headers={**AUTH, "Host": f"LOCALHOST:{port}"})
            assert local.status_code == 200
        # a cookie with the token is set only from the URL's, HttpOnly and SameSite=Strict
        client.cookies.clear()
        first = await client.get(f"/?token={TOKEN}")
        assert first.headers["Set-Cookie"].startswith(f"{cookie_name(port)}={TOKEN};")
        assert "HttpOnly" in first.headers["Set-Cookie"]
        assert "SameSite=Strict" in first.headers["Set-Cookie"]
        client.cookies.clear()
        assert "Set-Cookie" not in (await client.get("/", headers=AUTH)).headers
        for path in ("/favicon.ico", "/page/review.js", "/../labels.json", "/api/items/3"):
            assert (await client.get(path, headers=AUTH)).status_code == 404, path
        # writes take JSON only: a form post from another page is refused before any write
        form = await client.post("/api/labels", headers=AUTH, data={"key": "a"})
        assert form.status_code == 403
        no_token = await client.post("/api/labels", json={"key": "a", "passed": True})
        assert no_token.status_code == 403

    served(tmp_path, check)
    assert on_disk(tmp_path) == {}


def test_every_answer_forbids_inline_script_and_outside_sources(tmp_path: Path) -> None:
    async def check(client: httpx.AsyncClient, port: int) -> None:
        page = await client.get("/", headers=AUTH)
        assert page.headers["Content-Security-Policy"] == CSP
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        assert page.headers["Referrer-Policy"] == "no-referrer"
        assert "<script>" not in page.text  # the script is a file of its own
        assert '<script src="review.js"></script>' in page.text
        script = await client.get("/review.js", headers=AUTH)
        assert script.headers["Content-Type"].startswith("text/javascript")
        assert "innerHTML" not in script.text
        assert "outerHTML" not in script.text

    served(tmp_path, check)
    assert "script-src 'self';" in CSP
    assert "unsafe" not in CSP


def test_a_label_is_written_field_by_field_and_undone(tmp_path: Path) -> None:
    async def check(client: httpx.AsyncClient, port: int) -> None:
        async def put(**body: Any) -> httpx.Response:
            return await client.post("/api/labels", headers=AUTH, json=body)

        assert (await put(key="b", passed=False)).status_code == 200
        assert (await put(key="b", score=0.25, category="context_loss")).status_code == 200
        answer = await put(key="b", note="  the call was fine  ")
        label = answer.json()["label"]
        assert label["passed"] is False
        assert label["score"] == 0.25
        assert label["category"] == "context_loss"
        assert label["note"] == "the call was fine"
        assert label["part"] == "random"
        assert label["reviewer"] == "ana"
        assert on_disk(tmp_path)["b"]["note"] == "the call was fine"
        state = (await client.get("/api/state", headers=AUTH)).json()
        assert state["start"] == 0  # the first item not labelled
        assert set(state["labels"]) == {"b"}
        undone = (await client.post("/api/undo", headers=AUTH, json={})).json()
        assert undone["undone"] == "b"
        assert undone["labels"]["b"]["note"] is None
        assert on_disk(tmp_path)["b"]["note"] is None
        assert on_disk(tmp_path)["b"]["category"] == "context_loss"

    served(tmp_path, check)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"key": "zz", "passed": True}, "key: not an item"),
        ({"key": "a", "passed": "yes"}, "passed: true, false or null"),
        ({"key": "a", "score": 1.5}, "score: a number from 0.0 to 1.0"),
        ({"key": "a", "score": True}, "score: a number"),
        ({"key": "a", "category": "bad_luck"}, "category: one of tool_selection_failure"),
        ({"key": "a", "note": "x" * 4001}, "note: text of at most 4000"),
        ({"key": "a", "note": 3}, "note: text"),
        (["a"], "not a JSON object"),
    ],
)
def test_a_bad_label_is_refused_and_nothing_is_written(
    tmp_path: Path, body: Any, says: str
) -> None:
    async def check(client: httpx.AsyncClient, port: int) -> None:
        answer = await client.post("/api/labels", headers=AUTH, json=body)
        assert answer.status_code == 400
        assert says in answer.text

    served(tmp_path, check)
    assert on_disk(tmp_path) == {}


def test_an_item_is_served_whole(tmp_path: Path) -> None:
    async def check(client: httpx.AsyncClient, port: int) -> None:
        got = (await client.get("/api/items/1", headers=AUTH)).json()
        assert got["index"] == 1
        assert got["key"] == "b"
        assert got["part"] == "random"
        assert got["context"][0]["text"] == "<b>hi</b>"  # as the results hold it
        assert got["scale"] == [0.0, 1.0]

    served(tmp_path, check)


def test_a_port_in_use_is_a_usage_error_naming_the_flag() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UsageError, match=rf"^--port {port}: 127.0.0.1:{port} is in use; pick"):
            bind(port)


def test_a_labels_file_that_cannot_be_written_is_said_and_the_next_try_works(
    tmp_path: Path,
) -> None:
    async def check(client: httpx.AsyncClient, port: int) -> None:
        assert (
            await client.post("/api/labels", headers=AUTH, json={"key": "a", "passed": True})
        ).status_code == 200
        (tmp_path / "labels.json").unlink()
        (tmp_path / "labels.json").mkdir()  # the file's place taken by a folder
        failed = await client.post("/api/labels", headers=AUTH, json={"key": "b", "passed": True})
        assert failed.status_code == 500
        assert failed.text == (
            f"not written: {tmp_path / 'labels.json'}: is a folder; --labels must name a "
            "regular file or a new one\n"
        )
        assert (await client.post("/api/undo", headers=AUTH, json={})).status_code == 500
        state = (await client.get("/api/state", headers=AUTH)).json()
        assert set(state["labels"]) == {"a"}  # as on disk before
        (tmp_path / "labels.json").rmdir()
        again = await client.post("/api/labels", headers=AUTH, json={"key": "b", "passed": True})
        assert again.status_code == 200

    served(tmp_path, check)
    assert set(on_disk(tmp_path)) == {"a", "b"}
