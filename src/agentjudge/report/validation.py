"""What `agentjudge validate` prints: a line (or JSON record) per root and a summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentjudge.atif import Node


def _clip(text: str | None, width: int = 40) -> str:
    """One short line: producers put newlines and whole banners in agent names and versions."""
    flat = " ".join((text or "-").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def root_line(root: Node) -> str:
    """`valid    ATIF-v1.7  terminus-2 2.0.0  steps 16  subagents 3 (omitted 0)  depth 1  path`."""
    if not root.valid and root.schema_version is None:
        return f"invalid  {root.file}"
    subagents = sum(1 for _ in root.walk()) - 1
    status = "valid  " if root.valid else "invalid"
    return (
        f"{status}  {root.schema_version}  {_clip(root.agent_name)} {_clip(root.agent_version)}  "
        f"steps {root.subtree_steps}  subagents {subagents} (omitted {len(root.all_omitted())})  "
        f"depth {root.max_depth}  {root.file}"
    )


def root_record(root: Node) -> dict[str, Any]:
    """The JSON form of a root: the same facts as `root_line`, plus its nodes and problems."""
    return {
        "file": root.file,
        "valid": root.valid,
        "schema_version": root.schema_version,
        "agent": {"name": root.agent_name, "version": root.agent_version},
        "steps": root.subtree_steps,
        "subagents": sum(1 for _ in root.walk()) - 1,
        "omitted": [
            {
                "file": o.file,
                "ref_path": o.ref_path,
                "parent_step_id": o.parent_step_id,
                "target": o.target,
                "reason": o.reason,
            }
            for o in root.all_omitted()
        ],
        "depth": root.max_depth,
        "nodes": [
            {
                "id": n.id,
                "kind": n.kind,
                "depth": n.depth,
                "parent_id": n.parent_id,
                "parent_step_id": n.parent_step_id,
                "agent": n.agent_name,
                "steps": n.steps,
                "context_steps": n.context_steps,
            }
            for n in root.walk()
        ],
        "problems": [p.as_dict() for p in root.all_problems()],
    }


@dataclass
class ValidationSummary:
    """Running totals over the roots of one validation."""

    roots: int = 0
    invalid: int = 0
    nodes: int = 0
    steps: int = 0
    omitted: int = 0

    def add(self, root: Node) -> None:
        self.roots += 1
        self.invalid += not root.valid
        self.nodes += sum(1 for _ in root.walk())
        self.steps += root.subtree_steps
        self.omitted += len(root.all_omitted())

    def line(self) -> str:
        return (
            f"{self.roots} roots: {self.roots - self.invalid} valid, {self.invalid} invalid; "
            f"{self.nodes} nodes, {self.steps} steps, {self.omitted} omitted subagents"
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "roots": self.roots,
            "valid": self.roots - self.invalid,
            "invalid": self.invalid,
            "nodes": self.nodes,
            "steps": self.steps,
            "omitted": self.omitted,
        }
