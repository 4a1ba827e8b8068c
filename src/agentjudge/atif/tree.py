"""Build the tree of nodes (SPEC-trajectories §2) from the indexed files (`atif/collection.py`).

A node is one trajectory: a root file, an embedded `subagent_trajectories` entry, a file a
`trajectory_path` ref points to, a file a `session_id`-only ref matches, or a claude-code
sidechain group. A `continued_trajectory_ref` extends its node with more segments. Refs
that resolve nowhere become omitted children; refs that escape the input root, cycles and
exceeded limits become problems on the node that holds them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentjudge.atif.collection import Collection, ref_target
from agentjudge.atif.discover import InputFile, discover
from agentjudge.atif.index import FileInfo, RefInfo, SidechainInfo, TrajInfo
from agentjudge.atif.limits import Limits
from agentjudge.atif.node import Node, NodeKind, OmitReason, OmittedChild, Segment
from agentjudge.errors import Problem, clip


def load_trees(paths: Sequence[str | Path], limits: Limits | None = None) -> Iterator[Node]:
    """Discover, validate and link the trajectories under `paths`; yield one tree per root.

    Files are read once each into small summaries, then the trees are built from those, so
    memory grows with the number of files, not with their size. Raises `UsageError` for
    paths that do not exist and `InputError` when there are too many files.
    """
    limits = limits or Limits()
    yield from load_inputs(discover(paths, limits.max_trajectory_files), limits)


def load_inputs(inputs: list[InputFile], limits: Limits) -> Iterator[Node]:
    """`load_trees` over files already found (trace readers hand in converted runs)."""
    builder = _Builder(limits, Collection(inputs, limits.max_file_bytes))
    yield from builder.trees()


@dataclass
class _Builder:
    """The trees of a collection; `reached` holds every file some tree has taken in."""

    limits: Limits
    collection: Collection
    reached: set[Path] = field(default_factory=set)

    def trees(self) -> Iterator[Node]:
        inputs, files = self.collection.inputs, self.collection.files
        referenced = self.collection.index()
        roots = [i for i in inputs if i.path not in referenced]
        for item in roots:
            yield self._root(files[item.path])
        # Files only reachable from each other (a pure cycle) have no root: build them as
        # roots so the cycle is reported instead of the files silently vanishing.
        for item in inputs:
            if item.path not in self.reached:
                yield self._root(files[item.path])

    def _root(self, info: FileInfo) -> Node:
        node = self._file_node(info, "root", 0, None, None, ())
        total = node.subtree_steps
        if total > self.limits.max_total_steps:
            problem = Problem(
                info.display,
                "$",
                "limit.max_total_steps",
                f"the tree has {total} steps, more than max_total_steps="
                f"{self.limits.max_total_steps}; raise the limit (--max-total-steps)",
            )
            node = _with_problems(node, (problem,))
        return node

    def _file_node(
        self,
        info: FileInfo,
        kind: NodeKind,
        depth: int,
        parent_id: str | None,
        parent_step_id: int | None,
        stack: tuple[tuple[Path, str, str | None], ...],
    ) -> Node:
        self.reached.add(info.path)
        extra = tuple(self.collection.problems.get(info.path, ()))
        if info.traj is None:
            return Node(
                id=info.display,
                kind=kind,
                file=info.display,
                pointer="$",
                depth=depth,
                parent_id=parent_id,
                parent_step_id=parent_step_id,
                sha256=info.sha256,
                # never read for steps (the node has problems), but named as a file this
                # run reads: an output onto it is refused (`check_reached_files`)
                segments=(Segment(info.path, "$"),),
                problems=info.problems + extra,
            )
        return self._traj_node(
            info, info.traj, kind, depth, parent_id, parent_step_id, stack, extra
        )

    def _traj_node(
        self,
        info: FileInfo,
        traj: TrajInfo,
        kind: NodeKind,
        depth: int,
        parent_id: str | None,
        parent_step_id: int | None,
        stack: tuple[tuple[Path, str, str | None], ...],
        extra: tuple[Problem, ...] = (),
    ) -> Node:
        node_id = info.display if traj.pointer == "$" else f"{info.display}#{traj.pointer}"
        stack = (*stack, (info.path, traj.pointer, None))
        problems: list[Problem] = list(extra)
        omitted: list[OmittedChild] = []
        segments, parts = self._continuations(info, traj, stack, problems, omitted)
        children: list[Node] = []
        seen: set[tuple[Path, str, str | None]] = set()
        for part_info, part in parts:
            ctx = _Ctx(part_info, part, node_id, depth + 1, stack, problems, omitted, seen)
            self._link_refs(ctx, [r for r in part.refs if r.agent_id is None], children)
            for entry in part.embedded:
                key = (part_info.path, entry.pointer, None)
                if key not in seen:
                    seen.add(key)
                    children.append(
                        self._traj_node(
                            part_info, entry, "embedded", depth + 1, node_id, None, stack
                        )
                    )
            for group in part.sidechains:
                children.append(self._sidechain_node(ctx, group))
        steps = sum(p.steps for _, p in parts)
        context = sum(p.context_steps for _, p in parts)
        if steps > self.limits.max_steps_per_trajectory:
            problems.append(_steps_problem(info.display, traj.pointer, steps, self.limits))
        return Node(
            id=node_id,
            kind=kind,
            file=info.display,
            pointer=traj.pointer,
            depth=depth,
            parent_id=parent_id,
            parent_step_id=parent_step_id,
            schema_version=traj.schema_version,
            session_id=traj.session_id,
            trajectory_id=traj.trajectory_id,
            agent_name=traj.agent_name,
            agent_version=traj.agent_version,
            model_name=traj.model_name,
            sha256=info.sha256,
            steps=steps,
            context_steps=context,
            segments=segments,
            children=tuple(children),
            omitted=tuple(omitted),
            problems=tuple(problems),
        )

    def _continuations(
        self,
        info: FileInfo,
        traj: TrajInfo,
        stack: tuple[tuple[Path, str, str | None], ...],
        problems: list[Problem],
        omitted: list[OmittedChild],
    ) -> tuple[tuple[Segment, ...], list[tuple[FileInfo, TrajInfo]]]:
        """The node's segments: the trajectory itself, then each continuation file in turn."""
        parts = [(info, traj)]
        visited = {info.path}
        current_info, current = info, traj
        while current.continuation:
            ref_path = f"{current.pointer}.continued_trajectory_ref"
            target = ref_target(current.continuation, current_info.path.parent, current_info.root)
            if target is None:
                problems.append(
                    _escape_problem(current_info.display, ref_path, current.continuation)
                )
                break
            if target in visited or any(target == s[0] for s in stack):
                problems.append(
                    Problem(
                        current_info.display,
                        ref_path,
                        "tree.cycle",
                        f"continuation {clip(repr(current.continuation))} leads back to a file "
                        "already in this node",
                    )
                )
                break
            if not target.is_file():
                omitted.append(
                    OmittedChild(
                        current_info.display,
                        ref_path,
                        None,
                        current.continuation,
                        "continuation_not_found",
                    )
                )
                break
            visited.add(target)
            nxt = self.collection.load(
                target, current_info.root, _display_of(current_info, current.continuation)
            )
            self.reached.add(target)
            if nxt.traj is None:
                problems.extend(nxt.problems)
                break
            parts.append((nxt, nxt.traj))
            current_info, current = nxt, nxt.traj
        segments = tuple(Segment(i.path, t.pointer) for i, t in parts)
        return segments, parts

    def _sidechain_node(self, ctx: _Ctx, group: SidechainInfo) -> Node:
        node_id = f"{ctx.parent_id}#sidechain:{group.agent_id}"
        children: list[Node] = []
        problems: list[Problem] = []
        omitted: list[OmittedChild] = []
        stack = (*ctx.stack, (ctx.info.path, ctx.traj.pointer, group.agent_id))
        sub = _Ctx(ctx.info, ctx.traj, node_id, ctx.depth + 1, stack, problems, omitted, set())
        self._link_refs(sub, [r for r in ctx.traj.refs if r.agent_id == group.agent_id], children)
        if group.steps > self.limits.max_steps_per_trajectory:
            problems.append(_steps_problem(ctx.info.display, node_id, group.steps, self.limits))
        return Node(
            id=node_id,
            kind="sidechain",
            file=ctx.info.display,
            pointer=ctx.traj.pointer,
            depth=ctx.depth,
            parent_id=ctx.parent_id,
            parent_step_id=group.parent_step_id,
            schema_version=ctx.traj.schema_version,
            session_id=ctx.traj.session_id,
            agent_name=f"{ctx.traj.agent_name}:{group.agent_id}",
            agent_version=ctx.traj.agent_version,
            model_name=ctx.traj.model_name,
            sha256=ctx.info.sha256,
            steps=group.steps,
            context_steps=group.context_steps,
            segments=(Segment(ctx.info.path, ctx.traj.pointer, group.agent_id),),
            children=tuple(children),
            omitted=tuple(omitted),
            problems=tuple(problems),
        )

    def _link_refs(self, ctx: _Ctx, refs: list[RefInfo], children: list[Node]) -> None:
        """Resolve each ref to a child node, an omitted child, or a problem."""
        for ref in refs:
            if ref.trajectory_path:
                target = ref_target(ref.trajectory_path, ctx.info.path.parent, ctx.info.root)
                if target is None:
                    ctx.problems.append(
                        _escape_problem(
                            ctx.info.display,
                            f"{ref.json_path}.trajectory_path",
                            ref.trajectory_path,
                        )
                    )
                    continue
                if target.is_file():
                    display = _display_of(ctx.info, ref.trajectory_path)
                    info = self.collection.load(target, ctx.info.root, display)
                    self._add_file_child(ctx, ref, info, "file", children)
                    continue
                if ref.trajectory_id and self._add_embedded(ctx, ref, children):
                    continue
                ctx.omit(ref, ref.trajectory_path, "file_not_found")
            elif ref.trajectory_id:
                if not self._add_embedded(ctx, ref, children):
                    ctx.omit(ref, ref.trajectory_id, "unresolved_trajectory_id")
            elif ref.session_id is not None:
                matches = self.collection.session_files(ref.session_id, ctx.info.path)
                if len(matches) == 1:
                    info = self.collection.files[matches[0]]
                    self._add_file_child(ctx, ref, info, "session", children)
                else:
                    reason: OmitReason = (
                        "ambiguous_session_id" if matches else "unresolved_session_id"
                    )
                    ctx.omit(ref, ref.session_id, reason)

    def _add_file_child(
        self, ctx: _Ctx, ref: RefInfo, info: FileInfo, kind: NodeKind, children: list[Node]
    ) -> None:
        key = (info.path, "$", None)
        if key in ctx.seen:
            return
        ctx.seen.add(key)
        if any(entry[:2] == key[:2] for entry in ctx.stack):
            ctx.problems.append(
                Problem(
                    ctx.info.display,
                    ref.json_path,
                    "tree.cycle",
                    f"this reference leads back to {info.display}, an ancestor of this node",
                )
            )
            return
        children.append(
            self._file_node(info, kind, ctx.depth, ctx.parent_id, ref.step_id, ctx.stack)
        )

    def _add_embedded(self, ctx: _Ctx, ref: RefInfo, children: list[Node]) -> bool:
        entry = next((e for e in ctx.traj.embedded if e.trajectory_id == ref.trajectory_id), None)
        if entry is None:
            return False
        key = (ctx.info.path, entry.pointer, None)
        if key not in ctx.seen:
            ctx.seen.add(key)
            children.append(
                self._traj_node(
                    ctx.info, entry, "embedded", ctx.depth, ctx.parent_id, ref.step_id, ctx.stack
                )
            )
        return True


@dataclass
class _Ctx:
    """What resolving the refs of one trajectory part needs to know and to record."""

    info: FileInfo
    traj: TrajInfo
    parent_id: str
    depth: int
    stack: tuple[tuple[Path, str, str | None], ...]
    problems: list[Problem]
    omitted: list[OmittedChild]
    seen: set[tuple[Path, str, str | None]]

    def omit(self, ref: RefInfo, target: str, reason: OmitReason) -> None:
        self.omitted.append(
            OmittedChild(self.info.display, ref.json_path, ref.step_id, target, reason)
        )


def _display_of(info: FileInfo, ref: str) -> str:
    return os.path.normpath(os.path.join(os.path.dirname(info.display), ref))


def _escape_problem(file: str, path: str, ref: str) -> Problem:
    """The problem of a ref `ref_target` refused: one leaving the folder, or a NUL byte."""
    if "\x00" in ref:
        return Problem(
            file,
            path,
            "ref.path_nul",
            f"reference {ref[:200]!r} holds a NUL byte, which no file name can; fix the path",
        )
    return Problem(
        file,
        path,
        "ref.path_escape",
        f"reference {ref[:200]!r} leaves the input folder; refs must stay inside the folder "
        "you named (name a parent folder to include it)",
    )


def _steps_problem(file: str, where: str, steps: int, limits: Limits) -> Problem:
    return Problem(
        file,
        where,
        "limit.max_steps_per_trajectory",
        f"{steps} steps, more than max_steps_per_trajectory={limits.max_steps_per_trajectory}; "
        "raise the limit (--max-steps-per-trajectory)",
    )


def _with_problems(node: Node, problems: tuple[Problem, ...]) -> Node:
    return replace(node, problems=node.problems + problems)
