"""The tree: refs, omitted children, continuations, sidechains, cycles, limits, confinement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentjudge.atif import Limits, Node, load_trees
from agentjudge.errors import InputError, UsageError
from tests.atif.docs import doc, step, with_refs, write
from tests.opens import reaching, recording_opens


def trees(*paths: Path, limits: Limits | None = None) -> list[Node]:
    return list(load_trees(list(paths), limits))


def test_file_ref_child_is_not_a_root(tmp_path: Path) -> None:
    write(tmp_path / "a.json", with_refs(doc(3), 1, [{"trajectory_path": "sub/b.json"}]))
    write(tmp_path / "sub" / "b.json", doc(4, trajectory_id="b"))
    (root,) = trees(tmp_path)
    (child,) = root.children
    assert (child.kind, child.depth, child.parent_id, child.parent_step_id) == (
        "file",
        1,
        root.id,
        2,
    )
    assert child.file == str(tmp_path / "sub" / "b.json")
    assert root.subtree_steps == 7


def test_named_file_loads_its_referenced_files_from_its_folder(tmp_path: Path) -> None:
    write(tmp_path / "a.json", with_refs(doc(3), 1, [{"trajectory_path": "b.json"}]))
    write(tmp_path / "b.json", doc(2))
    (root,) = trees(tmp_path / "a.json")
    assert [c.steps for c in root.children] == [2]


def test_depth_counts_from_zero(tmp_path: Path) -> None:
    write(tmp_path / "a.json", with_refs(doc(2), 1, [{"trajectory_path": "b.json"}]))
    write(tmp_path / "b.json", with_refs(doc(2), 1, [{"trajectory_path": "c.json"}]))
    write(tmp_path / "c.json", doc(2))
    (root,) = trees(tmp_path)
    assert [n.depth for n in root.walk()] == [0, 1, 2]
    assert root.max_depth == 2


def test_missing_file_and_unresolved_ids_are_omitted(tmp_path: Path) -> None:
    document = with_refs(
        doc(3),
        1,
        [{"trajectory_path": "gone.json"}, {"trajectory_id": "nowhere"}],
    )
    write(tmp_path / "a.json", document)
    (root,) = trees(tmp_path)
    assert root.valid
    assert root.children == ()
    assert [(o.target, o.reason, o.parent_step_id) for o in root.omitted] == [
        ("gone.json", "file_not_found", 2),
        ("nowhere", "unresolved_trajectory_id", 2),
    ]


def test_session_id_only_refs(tmp_path: Path) -> None:
    refs = [{"session_id": "child-1"}, {"session_id": "missing"}, {"session_id": "twin"}]
    write(tmp_path / "a.json", with_refs(doc(2, "ATIF-v1.5", session_id="root"), 1, refs))
    write(tmp_path / "b.json", doc(3, "ATIF-v1.5", session_id="child-1"))
    write(tmp_path / "c.json", doc(1, "ATIF-v1.5", session_id="twin"))
    write(tmp_path / "d.json", doc(1, "ATIF-v1.5", session_id="twin"))
    roots = trees(tmp_path)
    assert [Path(r.file).name for r in roots] == ["a.json", "c.json", "d.json"]
    root = roots[0]
    assert [(c.kind, c.steps) for c in root.children] == [("session", 3)]
    assert [o.reason for o in root.omitted] == ["unresolved_session_id", "ambiguous_session_id"]


def test_embedded_children_with_and_without_refs(tmp_path: Path) -> None:
    grandchild = doc(1, trajectory_id="g")
    child = with_refs(
        doc(2, trajectory_id="c1", subagent_trajectories=[grandchild]), 1, [{"trajectory_id": "g"}]
    )
    unreferenced = doc(3, trajectory_id="c2")
    document = with_refs(
        doc(2, subagent_trajectories=[child, unreferenced]), 1, [{"trajectory_id": "c1"}]
    )
    write(tmp_path / "a.json", document)
    (root,) = trees(tmp_path)
    assert [(n.trajectory_id, n.depth, n.parent_step_id) for n in root.walk()] == [
        (None, 0, None),
        ("c1", 1, 2),
        ("g", 2, 2),
        ("c2", 1, None),
    ]
    assert root.subtree_steps == 2 + 2 + 1 + 3


def test_repeated_agent_names_are_not_cycles(tmp_path: Path) -> None:
    write(tmp_path / "a.json", with_refs(doc(2), 1, [{"trajectory_path": "b.json"}]))
    write(tmp_path / "b.json", doc(2))  # same agent name "agent", different node
    (root,) = trees(tmp_path)
    assert root.valid
    assert len(root.children) == 1


def test_cycle_between_files_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "a.json", with_refs(doc(2), 1, [{"trajectory_path": "b.json"}]))
    write(tmp_path / "b.json", with_refs(doc(2), 1, [{"trajectory_path": "a.json"}]))
    (root,) = trees(tmp_path)  # no root outside the cycle: reported, not dropped
    assert not root.valid
    (problem,) = root.all_problems()
    assert problem.rule == "tree.cycle"
    assert problem.file.endswith("b.json")


def test_self_reference_is_a_cycle(tmp_path: Path) -> None:
    write(tmp_path / "a.json", with_refs(doc(2), 1, [{"trajectory_path": "./a.json"}]))
    (root,) = trees(tmp_path)
    assert [p.rule for p in root.all_problems()] == ["tree.cycle"]


def test_continuation_chain_and_missing_continuation(tmp_path: Path) -> None:
    copied = [step(1, "user", "task", is_copied_context=True), step(2, is_copied_context=True)]
    write(tmp_path / "t.json", doc(3, continued_trajectory_ref="t.cont-1.json"))
    write(
        tmp_path / "t.cont-1.json",
        doc(2, steps=[*copied, step(3)], continued_trajectory_ref="t.cont-2.json"),
    )
    (root,) = trees(tmp_path)
    assert (root.steps, root.context_steps) == (4, 2)
    assert [o.reason for o in root.omitted] == ["continuation_not_found"]
    assert root.valid


def test_continuation_loop_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "t.json", doc(2, continued_trajectory_ref="u.json"))
    write(tmp_path / "u.json", doc(2, continued_trajectory_ref="t.json"))
    roots = trees(tmp_path)
    assert [p.rule for r in roots for p in r.all_problems()] == ["tree.cycle"]


def test_invalid_child_makes_the_tree_invalid(tmp_path: Path) -> None:
    write(tmp_path / "a.json", with_refs(doc(2), 1, [{"trajectory_path": "b.json"}]))
    (tmp_path / "b.json").write_text("{not json")
    (root,) = trees(tmp_path)
    assert not root.valid
    (child,) = root.children
    assert child.problems[0].rule == "schema.json_invalid"


def test_duplicate_trajectory_ids_across_files(tmp_path: Path) -> None:
    write(tmp_path / "a.json", doc(2, trajectory_id="same"))
    write(tmp_path / "b.json", doc(2, trajectory_id="same"))
    a, b = trees(tmp_path)
    assert a.valid
    (problem,) = b.problems
    assert problem.rule == "collection.duplicate_trajectory_id"
    assert problem.message.startswith(f"trajectory_id 'same' is also used by {a.file}")


def test_sidechains_become_children(tmp_path: Path) -> None:
    spawn = step(2, tool_calls=[{"tool_call_id": "t1", "function_name": "Task", "arguments": {}}])
    side = {"is_sidechain": True, "agent_id": "ag1"}
    steps = [
        step(1, "user", "task"),
        spawn,
        step(3, "user", "explore", extra=side),
        step(4, extra=side),
        step(5, extra={"is_sidechain": True, "agent_id": "orphan"}),
        step(6, extra={"is_sidechain": False}),
    ]
    write(tmp_path / "a.json", doc(1, steps=steps))
    (root,) = trees(tmp_path)
    assert root.steps == 3
    assert [(c.kind, c.agent_name, c.steps, c.parent_step_id) for c in root.children] == [
        ("sidechain", "agent:ag1", 2, 2),
        ("sidechain", "agent:orphan", 1, 2),
    ]


def test_sidechain_without_a_spawning_step(tmp_path: Path) -> None:
    steps = [step(1, "user", "task"), step(2, extra={"is_sidechain": True, "agent_id": "x"})]
    write(tmp_path / "a.json", doc(1, steps=steps))
    (root,) = trees(tmp_path)
    (child,) = root.children
    assert (child.kind, child.parent_step_id, child.steps) == ("sidechain", None, 1)


def test_max_file_bytes(tmp_path: Path) -> None:
    write(tmp_path / "a.json", doc(30))
    (root,) = trees(tmp_path, limits=Limits(max_file_bytes=100))
    (problem,) = root.problems
    assert problem.rule == "limit.max_file_bytes"
    assert "--max-file-bytes" in problem.message


def test_max_steps_per_trajectory_and_total(tmp_path: Path) -> None:
    write(tmp_path / "a.json", with_refs(doc(4), 1, [{"trajectory_path": "b.json"}]))
    write(tmp_path / "b.json", doc(5))
    (root,) = trees(tmp_path, limits=Limits(max_steps_per_trajectory=4, max_total_steps=100))
    assert [p.rule for p in root.all_problems()] == ["limit.max_steps_per_trajectory"]
    (root,) = trees(tmp_path, limits=Limits(max_steps_per_trajectory=5, max_total_steps=8))
    assert [p.rule for p in root.all_problems()] == ["limit.max_total_steps"]
    (root,) = trees(tmp_path, limits=Limits(max_steps_per_trajectory=5, max_total_steps=9))
    assert root.valid


def test_max_trajectory_files(tmp_path: Path) -> None:
    for name in "abc":
        write(tmp_path / f"{name}.json", doc(1))
    with pytest.raises(InputError) as caught:
        trees(tmp_path, limits=Limits(max_trajectory_files=2))
    assert caught.value.problems[0].rule == "limit.max_trajectory_files"


def test_discovery_is_recursive_and_sorted(tmp_path: Path) -> None:
    for name in ["b/z.json", "a.json", "b/a.json", "c.json", "b/x/y.json", "notes.txt"]:
        write(tmp_path / name, doc(1, trajectory_id=name))
    names = [str(Path(r.file).relative_to(tmp_path)) for r in trees(tmp_path)]
    assert names == ["a.json", "b/a.json", "b/x/y.json", "b/z.json", "c.json"]


def test_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or folder"):
        trees(tmp_path / "nope")
    with pytest.raises(UsageError, match=r"no \*\.json files"):
        trees(tmp_path)


# -- confinement: nothing outside the named folder is ever opened -----------------------


@pytest.mark.parametrize(
    "ref",
    ["../outside.json", "/etc/passwd", "sub/../../outside.json", "link/outside.json"],
)
def test_refs_cannot_escape_the_root(tmp_path: Path, ref: str) -> None:
    root_dir = tmp_path / "in"
    outside = write(tmp_path / "outside.json", doc(2))
    (root_dir / "link").parent.mkdir(parents=True, exist_ok=True)
    (root_dir / "link").symlink_to(tmp_path)
    write(root_dir / "a.json", with_refs(doc(2), 1, [{"trajectory_path": ref}]))
    write(root_dir / "b.json", doc(2, continued_trajectory_ref=ref))
    with recording_opens() as opened:
        roots = trees(root_dir / "a.json", root_dir / "b.json")
    rules = [p.rule for r in roots for p in r.all_problems()]
    assert rules == ["ref.path_escape", "ref.path_escape"]
    assert all(r.children == () for r in roots)
    assert str(outside) not in opened
    assert "/etc/passwd" not in opened
    assert opened, "the audit hook must see the files that are read"
    assert all(path.startswith(str(root_dir)) for path in opened), opened


def linked_folder(tmp_path: Path) -> tuple[Path, Path]:
    """`in/` holding one of each kind of link, and `out/` (a separate folder) they leak to."""
    root_dir, out = tmp_path / "in", tmp_path / "out"
    write(root_dir / "a.json", doc(2, trajectory_id="a"))
    write(root_dir / "sub" / "b.json", doc(1, trajectory_id="b"))
    write(out / "secret.json", doc(1, trajectory_id="secret"))
    write(out / "folder" / "c.json", doc(1, trajectory_id="c"))
    links = {
        "inside.json": root_dir / "sub" / "b.json",  # a file found by its own path too
        "data.json": root_dir / "sub" / "notes.txt",  # a file found only through the link
        "outside.json": out / "secret.json",
        "passwd.json": Path("/etc/passwd"),
        "loop1.json": root_dir / "loop2.json",
        "loop2.json": root_dir / "loop1.json",
        "dangling.json": root_dir / "missing.json",
        "subdir": root_dir / "sub",
        "up": root_dir,  # a folder link back to an ancestor: nothing found twice
        "outdir": out / "folder",
        "notes.md": out / "secret.json",  # not a *.json name: not an input, not opened
    }
    write(root_dir / "sub" / "notes.txt", doc(1, trajectory_id="data"))
    for name, target in links.items():
        (root_dir / name).symlink_to(target)
    return root_dir, out


def test_links_in_a_named_folder_are_confined_to_it(tmp_path: Path) -> None:
    root_dir, out = linked_folder(tmp_path)
    with recording_opens() as opened:
        roots = trees(root_dir)
    problems = {
        os.path.relpath(r.file, root_dir): [p.rule for p in r.all_problems()] for r in roots
    }
    assert problems == {
        "a.json": [],
        "data.json": [],
        "dangling.json": ["input.symlink_dangling"],
        "loop1.json": ["input.symlink_loop"],
        "loop2.json": ["input.symlink_loop"],
        "outdir": ["input.symlink_outside"],
        "outside.json": ["input.symlink_outside"],
        "passwd.json": ["input.symlink_outside"],
        "sub/b.json": [],
    }
    (outside,) = [r for r in roots if r.file.endswith("outside.json")]
    assert outside.all_problems()[0].message == (
        f"symbolic link to {out / 'secret.json'}, outside the input folder {root_dir}; it was "
        "not opened: copy the file into the folder, or name it (or a folder holding both) "
        "instead"
    )
    assert reaching(opened, out) == []
    assert "/etc/passwd" not in opened
    assert str(root_dir / "sub" / "notes.txt") in opened  # the inside link was followed


def test_a_link_out_of_the_root_is_outside_whatever_lies_beyond(tmp_path: Path) -> None:
    """A link that leaves the folder is refused as such, also when what it reaches is a
    loop: a file found in the folder and a ref get the same answer."""
    root_dir, out = tmp_path / "in", tmp_path / "out"
    out.mkdir()
    (out / "spin.json").symlink_to(out / "spin.json")
    write(root_dir / "a.json", with_refs(doc(2), 1, [{"trajectory_path": "spin.json"}]))
    (root_dir / "spin.json").symlink_to(out / "spin.json")
    roots = trees(root_dir)
    problems = {os.path.relpath(r.file, root_dir): [p.rule for p in r.problems] for r in roots}
    assert problems == {"a.json": ["ref.path_escape"], "spin.json": ["input.symlink_outside"]}


def test_a_pipe_named_json_is_refused_not_read(tmp_path: Path) -> None:
    write(tmp_path / "a.json", doc(1))
    os.mkfifo(tmp_path / "pipe.json")
    roots = trees(tmp_path)
    assert [[p.rule for p in r.all_problems()] for r in roots] == [[], ["file.not_regular"]]
    with pytest.raises(UsageError, match="not a regular file or folder"):
        trees(tmp_path / "pipe.json")


def test_a_named_link_is_followed_and_its_target_folder_is_the_root(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    write(real / "a.json", with_refs(doc(2), 1, [{"trajectory_path": "b.json"}]))
    write(real / "b.json", doc(1))
    (tmp_path / "file.json").symlink_to(real / "a.json")
    (tmp_path / "folder").symlink_to(real)
    (root,) = trees(tmp_path / "file.json")
    assert (root.file, root.valid, len(root.children)) == (str(tmp_path / "file.json"), True, 1)
    (root,) = trees(tmp_path / "folder")
    assert (root.file, root.valid) == (str(tmp_path / "folder" / "a.json"), True)


def test_a_named_link_to_nothing_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "missing.json")
    with pytest.raises(UsageError) as loop:
        trees(tmp_path / "loop.json")
    assert str(loop.value) == (
        f"{tmp_path}/loop.json: symbolic link loop; fix the link or name another path"
    )
    with pytest.raises(UsageError) as dangling:
        trees(tmp_path / "dangling.json")
    assert str(dangling.value) == (
        f"{tmp_path}/dangling.json: symbolic link to {tmp_path}/missing.json, which does not "
        "exist; fix the link or name another path"
    )


def test_refs_to_broken_links_are_not_found(tmp_path: Path) -> None:
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "missing.json")
    refs = [{"trajectory_path": "loop.json"}, {"trajectory_path": "dangling.json"}]
    write(tmp_path / "a.json", with_refs(doc(2), 1, refs))
    write(tmp_path / "b.json", doc(1, continued_trajectory_ref="loop.json"))
    a, b = trees(tmp_path / "a.json", tmp_path / "b.json")
    assert [o.reason for o in a.all_omitted()] == ["file_not_found", "file_not_found"]
    assert [o.reason for o in b.all_omitted()] == ["continuation_not_found"]
    assert a.valid
    assert b.valid
