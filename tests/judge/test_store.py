"""The verdict store: free re-runs, shared in-flight calls, and a SIGKILLed run that resumes."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentjudge.errors import UsageError
from agentjudge.judge import JudgeClient, JudgeOutcome
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.store import StoredVerdict, VerdictStore
from agentjudge.judge.store_commits import LocalVerdicts
from agentjudge.judge.verdict import Verdict
from agentjudge.testing import JudgeServer, Script
from tests.conftest import REPO
from tests.judge.resume_worker import item_request

pytestmark = pytest.mark.timeout(60)


def run_items(
    url: str, store: VerdictStore | None, count: int
) -> tuple[list[JudgeOutcome], JudgeClient]:
    async def go() -> tuple[list[JudgeOutcome], JudgeClient]:
        kept = LocalVerdicts(store) if store is not None else None
        client = JudgeClient(OpenAICompatible(url, "judge"), store=kept)
        async with client:
            outcomes = await asyncio.gather(*(client.judge(item_request(i)) for i in range(count)))
        return list(outcomes), client

    return asyncio.run(go())


def test_rerun_with_the_same_inputs_makes_no_judge_call(tmp_path: Path) -> None:
    with JudgeServer() as server:
        store = VerdictStore(tmp_path / "v.sqlite")
        first, client = run_items(server.base_url, store, 20)
        assert client.stats.calls == 20
        second, client = run_items(server.base_url, store, 20)
        assert client.stats.calls == 0
        assert client.stats.store_hits == 20
        assert len(server.log) == 20
    assert [o.verdict for o in first] == [o.verdict for o in second]
    assert all(o.from_store for o in second)


def test_errors_are_not_stored(tmp_path: Path) -> None:
    with JudgeServer(Script(malformed="no_score")) as server:
        store = VerdictStore(tmp_path / "v.sqlite")
        (outcome,), _ = run_items(server.base_url, store, 1)
        assert outcome.error == "score_missing"
        assert len(store) == 0


def test_stored_records_are_versioned(tmp_path: Path) -> None:
    with JudgeServer() as server:
        store = VerdictStore(tmp_path / "v.sqlite")
        run_items(server.base_url, store, 1)
    (record,) = store._db.execute("SELECT record FROM verdicts").fetchall()
    parsed = StoredVerdict.model_validate_json(record[0])
    assert (parsed.version, parsed.kind) == (1, "verdict")
    with pytest.raises(ValueError, match="version"):
        StoredVerdict.model_validate({**parsed.model_dump(), "version": 2})


def test_identical_requests_in_flight_share_one_call() -> None:
    with JudgeServer(Script(latency=0.1)) as server:

        async def go() -> list[JudgeOutcome]:
            async with JudgeClient(OpenAICompatible(server.base_url, "judge")) as client:
                return list(
                    await asyncio.gather(*(client.judge(item_request(1)) for _ in range(5)))
                )

        outcomes = asyncio.run(go())
        assert len(server.log) == 1
    assert all(o == outcomes[0] for o in outcomes)


def worker(url: str, store: Path, out: Path, count: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "tests.judge.resume_worker",
        url,
        str(store),
        str(out),
        str(count),
    ]
    return subprocess.Popen(command, cwd=REPO)


def test_killed_run_resumes_without_repeating_completed_calls(tmp_path: Path) -> None:
    count = 60
    with JudgeServer(Script(latency=0.05)) as server:
        store_path, out = tmp_path / "resume.sqlite", tmp_path / "resumed.json"
        proc = worker(server.base_url, store_path, out, count)
        deadline = time.monotonic() + 30
        while server.outcomes()["ok"] < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert not out.exists(), "killed before it finished"
        first_run = len(server.log)

        store = VerdictStore(store_path)
        probe = JudgeClient(OpenAICompatible(server.base_url, "judge"))
        completed = {i for i in range(count) if store.get(probe.key(item_request(i)))}
        store.close()
        assert 0 < len(completed) < count

        resumed = worker(server.base_url, store_path, out, count)
        assert resumed.wait(30) == 0
        rerun_items = {
            int(entry.body["messages"][-1]["content"].split()[0].removeprefix("item-"))
            for entry in server.log[first_run:]
        }
        assert not rerun_items & completed, "a completed call was repeated"
        assert rerun_items | completed == set(range(count))

        baseline = worker(
            server.base_url, tmp_path / "fresh.sqlite", tmp_path / "baseline.json", count
        )
        assert baseline.wait(30) == 0
    assert json.loads(out.read_text()) == json.loads((tmp_path / "baseline.json").read_text())


def damaged_store(path: Path) -> Path:
    """A store with one verdict, then damaged past its header (a power loss's pages)."""
    first = VerdictStore(path)
    first.put("k", Verdict(0.5, "fine"), 1, 1)
    first.close()
    data = bytearray(path.read_bytes())
    data[16:120] = b"\xff" * 104
    path.write_bytes(bytes(data))
    return path


def test_a_damaged_store_is_set_aside_and_says_so(tmp_path: Path) -> None:
    path = damaged_store(tmp_path / "v.sqlite")
    store = VerdictStore(path)
    assert len(store) == 0
    damaged = [p for p in tmp_path.iterdir() if "damaged" in p.name]
    assert [p.name.split("-")[0] for p in damaged] == ["v.sqlite.damaged"]
    line = store.damage_line()
    assert line is not None
    assert line.startswith(f"verdict store {path} was damaged")


def test_a_store_found_damaged_after_opening_is_set_aside_once(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    first = VerdictStore(path)
    first.put("k", Verdict(0.5, "fine"), 1, 1)
    first.close()
    with sqlite3.connect(path) as db:
        (size,) = db.execute("PRAGMA page_size").fetchone()
        (root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'verdicts'"
        ).fetchone()
    db.close()
    data = bytearray(path.read_bytes())  # the table's page only: the store still opens
    data[(root - 1) * size : (root - 1) * size + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))
    notes: list[str] = []
    store = VerdictStore(path, on_note=notes.append)
    assert (store.set_aside, notes) == (None, [])
    assert store.get("k") is None  # the damage is met here, not at opening
    assert store.set_aside is not None
    assert store.set_aside.exists()
    assert notes == [store.damage_line()]
    store.put("k", Verdict(0.25, "again"), 1, 1)
    assert len(store) == 1
    assert store.has("k")
    store.close()
    assert notes == [store.damage_line()]  # said once
    reopened = VerdictStore(path)
    assert reopened.get("k") == (Verdict(0.25, "again"), 1, 1)
    reopened.close()


@pytest.mark.parametrize("forged", ['"0.8"', '"1"', "true", "1.5", "null"])
def test_a_stored_score_is_never_converted(tmp_path: Path, forged: str) -> None:
    store = VerdictStore(tmp_path / "v.sqlite")
    fields = {"version": 1, "kind": "verdict", "reasoning": "", "fields": {}}
    record = json.dumps({**fields, "input_tokens": 1, "output_tokens": 1})
    record = record[:-1] + f', "score": {forged}}}'
    store._db.execute("INSERT INTO verdicts VALUES ('k', ?)", (record,))
    request = item_request(0)
    stored = store.get("k")
    assert stored is None or not request.accepts(stored[0])
    store.close()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"this is not a database" * 100, r"not a verdict store \(not an SQLite database\)"),
        (None, "a folder, not a verdict store"),
        ("other-db", "an SQLite database, but not a verdict store"),
    ],
)
def test_a_path_that_is_not_a_verdict_store_is_refused_untouched(
    tmp_path: Path, content: bytes | str | None, said: str
) -> None:
    path = tmp_path / "v.sqlite"
    if content is None:
        path.mkdir()
    elif content == "other-db":
        with sqlite3.connect(path) as other:
            other.execute("CREATE TABLE invoices (id INTEGER)")
    else:
        assert isinstance(content, bytes)
        path.write_bytes(content)
    before = sorted(p.name for p in tmp_path.iterdir())
    snapshot = path.read_bytes() if path.is_file() else None
    with pytest.raises(UsageError, match=said) as caught:
        VerdictStore(path)
    assert caught.value.exit_code == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (path.read_bytes() if path.is_file() else None) == snapshot


def test_a_store_that_cannot_be_opened_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(UsageError, match="cannot open or write the verdict store") as caught:
        VerdictStore(tmp_path / "a-file" / "v.sqlite")
    assert caught.value.exit_code == 3


def test_a_verdict_is_held_until_flushed_and_visible_to_get_at_once(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    store, other = VerdictStore(path), VerdictStore(path)
    verdict = Verdict(0.5, "fine", {"reasoning": "fine", "score": 0.5})
    store.put("k", verdict, 10, 2)
    assert store.get("k") == (verdict, 10, 2)
    assert other.get("k") is None  # not committed yet
    store.flush()
    assert other.get("k") == (verdict, 10, 2)
    store.put("k2", verdict, 1, 1)
    store.close()  # closing commits what is held
    assert other.get("k2") == (verdict, 1, 1)
    other.close()


def test_the_client_commits_each_verdict_before_returning_it(tmp_path: Path) -> None:
    """Verdicts that return close together share a commit, made before any of them is
    handed back: a job killed right after a verdict arrived still has it stored."""
    path = tmp_path / "v.sqlite"
    reader = VerdictStore(path)
    committed: list[bool] = []
    commits: list[int] = []

    class Counting(VerdictStore):
        def flush(self) -> None:
            commits.append(len(self._held))
            super().flush()

    async def go(url: str) -> None:
        client = JudgeClient(OpenAICompatible(url, "judge"), store=LocalVerdicts(Counting(path)))

        async def one(i: int) -> None:
            request = item_request(i)
            await client.judge(request)
            committed.append(reader.get(client.key(request)) is not None)

        async with client:
            await asyncio.gather(*(one(i) for i in range(30)))

    with JudgeServer() as server:
        asyncio.run(go(server.base_url))
    assert committed == [True] * 30
    assert sum(commits) == 30
    assert len([c for c in commits if c]) < 30  # answers arriving together share a commit
    reader.close()


def test_a_failed_commit_raises_and_leaves_no_transaction_open(tmp_path: Path) -> None:
    store = VerdictStore(tmp_path / "v.sqlite")
    store.put("k", Verdict(0.5, "fine"), 1, 1)
    store._db.execute("DROP TABLE verdicts")  # what a damaged or foreign file could do
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        store.flush()
    assert not store._db.in_transaction
    store._db.close()
