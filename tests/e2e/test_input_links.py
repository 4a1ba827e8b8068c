"""Symbolic links in the input folder, through `validate`, `score` and `grade --traces`.

Each command runs in this process (`agentjudge.cli.main`), so Python's audit hook sees
every file it opens and every folder it lists: nothing in the outside folder may be among
them, and the outside file's text may appear in no output, results file or judge request.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentjudge.cli import main
from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write
from tests.opens import reaching, recording_opens

pytestmark = pytest.mark.timeout(120)

SECRET = "SECRET-7f3a never to be read"


@dataclass(frozen=True)
class Case:
    """One kind of link, put at `in/<name>`, and the problem it is (None: it is fine)."""

    name: str
    rule: str | None
    message: str = ""


OUTSIDE_FIX = (
    "it was not opened: copy the file into the folder, or name it (or a folder holding both) "
    "instead [input.symlink_outside]"
)
CASES = {
    "inside": Case("link.json", None),
    "outside": Case(
        "link.json", "input.symlink_outside", "symbolic link to {out}/secret.json, outside "
        "the input folder {root}; " + OUTSIDE_FIX,
    ),
    "loop": Case(
        "link.json", "input.symlink_loop", "symbolic link loop; fix or remove the link "
        "[input.symlink_loop]"
    ),
    "dangling": Case(
        "link.json", "input.symlink_dangling", "symbolic link to {root}/missing.json, which "
        "does not exist; fix or remove the link [input.symlink_dangling]",
    ),
    "folder_inside": Case("linkdir", None),
    "folder_outside": Case(
        "linkdir", "input.symlink_outside", "symbolic link to {out}, outside the input folder "
        "{root}; " + OUTSIDE_FIX,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Folders:
    root: Path  # the input folder the command is given
    out: Path  # a separate folder the link leads to
    link: Path

    def message(self, case: Case) -> str:
        return case.message.format(root=self.root, out=self.out)


def make(tmp_path: Path, kind: str) -> Folders:
    """`in/a.json` (a trajectory with trajectory_id "a"), `in/sub/b.json`, and the link."""
    root, out = tmp_path / "in", tmp_path / "out"
    write(root / "a.json", doc(2, trajectory_id="a"))
    write(root / "sub" / "b.json", doc(2, trajectory_id="b"))
    # inside, but found only through the link (not a *.json name)
    write(root / "store" / "run.dat", doc(2, trajectory_id="linked"))
    secret = doc(2, trajectory_id="secret")
    secret["steps"][1]["message"] = SECRET
    write(out / "secret.json", secret)
    link = root / CASES[kind].name
    target = {
        "inside": root / "store" / "run.dat",
        "outside": out / "secret.json",
        "loop": link,
        "dangling": root / "missing.json",
        "folder_inside": root / "sub",
        "folder_outside": out,
    }[kind]
    link.symlink_to(target)
    return Folders(root, out, link)


@dataclass
class Ran:
    code: int
    out: str
    err: str
    opened: list[str]


Runner = Callable[..., Ran]


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Runner:
    """Run `agentjudge ARGS...` in this process, from `tmp_path`, recording what it opens."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AGENTJUDGE_CALLER_DIR", raising=False)
    for key in list(os.environ):
        if key.endswith("_API_KEY") or key.startswith(("MODEL_", "JUDGE_")):
            monkeypatch.delenv(key)

    def run(*args: str | Path) -> Ran:
        capsys.readouterr()
        with recording_opens() as opened:
            code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err, list(opened))

    return run


def confined(ran: Ran, folders: Folders, *files: Path) -> None:
    """Nothing outside was opened or listed, and the outside file's text is nowhere."""
    assert reaching(ran.opened, folders.out) == []
    assert ran.opened, "the audit hook must see the files that are read"
    for text in (ran.out, ran.err, *(f.read_text() for f in files if f.exists())):
        assert SECRET not in text
        assert "Traceback" not in text


@pytest.mark.parametrize("kind", list(CASES))
def test_validate(tmp_path: Path, cli: Runner, kind: str) -> None:
    folders, case = make(tmp_path, kind), CASES[kind]
    ran = cli("validate", folders.root)
    confined(ran, folders)
    lines = ran.out.splitlines()
    if case.rule is None:
        assert ran.code == 0, ran.out
        roots = [line.split("  ")[-1] for line in lines[:-1]]
        expected = (
            ["a.json", "link.json", "sub/b.json"] if kind == "inside" else ["a.json", "sub/b.json"]
        )
        assert roots == [str(folders.root / name) for name in expected]
        return
    assert ran.code == 1
    assert f"invalid  {folders.link}" in lines
    assert f"    {folders.link}: $: {folders.message(case)}" in lines
    assert lines[-1].startswith("3 roots: 2 valid, 1 invalid;")


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


@pytest.mark.parametrize("kind", list(CASES))
def test_score(tmp_path: Path, cli: Runner, server: JudgeServer, kind: str) -> None:
    folders, case = make(tmp_path, kind), CASES[kind]
    judge = ["--judge-url", server.base_url, "--judge-model", "judge"]
    skip = ["--set", "partial_result_policy=skip_failed_trajectory"]
    ran = cli("score", folders.root, *judge, *skip, "-o", "out.json")
    confined(ran, folders, tmp_path / "out.json")
    assert all(SECRET not in json.dumps(request.body) for request in server.log)
    data = json.loads((tmp_path / "out.json").read_text())
    roots = {t["root"]: t["nodes"][0] for t in data["trajectories"]}
    scored = [folders.root / "a.json", folders.root / "sub" / "b.json"]
    if kind == "inside":
        scored.insert(1, folders.link)
    assert all(roots[str(path)]["status"] == "scored" for path in scored)
    if case.rule is None:
        assert ran.code == 0, ran.err
        assert sorted(roots) == sorted(map(str, scored))
        return
    assert ran.code == 1  # incomplete: the link's tree failed, the others are scored
    refused = roots[str(folders.link)]
    assert (refused["status"], refused["reason"]) == ("failed", "invalid_input")
    (problem,) = refused["problems"]
    assert f"{problem['message']} [{problem['rule']}]" == folders.message(case)
    # by default one invalid input fails the job, as any invalid file does
    ran = cli("score", folders.root, *judge, "-o", "fast.json")
    confined(ran, folders, tmp_path / "fast.json")
    assert ran.code == 2
    assert json.loads((tmp_path / "fast.json").read_text())["error"]["type"] == "invalid_input"


@pytest.mark.parametrize("kind", list(CASES))
def test_grade_traces(tmp_path: Path, cli: Runner, kind: str) -> None:
    folders, case = make(tmp_path, kind), CASES[kind]
    ids = ["a", "linked"] if kind == "inside" else ["a"]  # "linked" is only behind the link
    cases = [
        {"id": i, "messages": [{"role": "user", "content": "t"}], "expect": {"contains": ["ok"]}}
        for i in ids
    ]
    (tmp_path / "dataset.json").write_text(json.dumps({"cases": cases}))
    ran = cli("grade", "--traces", folders.root, "--dataset", "dataset.json", "-o", "o.json")
    confined(ran, folders, tmp_path / "o.json")
    if case.rule is None or kind == "folder_outside":
        # --traces reads the folder's own *.json files: a folder link is never searched
        assert ran.code == 0, ran.err
        statuses = {
            c["id"]: c["status"] for c in json.loads((tmp_path / "o.json").read_text())["cases"]
        }
        assert statuses == dict.fromkeys(ids, "passed")
        return
    assert ran.code == 3
    assert ran.err.strip() == f"error: traces file {folders.link}: $: {folders.message(case)}"
    assert not (tmp_path / "o.json").exists()


def test_a_named_link_is_the_users_choice(tmp_path: Path, cli: Runner) -> None:
    folders = make(tmp_path, "outside")
    ran = cli("validate", folders.link)
    assert ran.code == 0
    assert ran.out.splitlines()[0].endswith(f"depth 0  {folders.link}")
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    ran = cli("validate", tmp_path / "loop.json")
    assert ran.code == 3
    assert ran.err.strip() == (
        f"error: {tmp_path}/loop.json: symbolic link loop; fix the link or name another path"
    )
