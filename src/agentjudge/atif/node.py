"""The tree's values (SPEC-trajectories §2): a node per trajectory, where its steps are, and
the subagents its refs name that resolve to nothing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentjudge.errors import Problem

NodeKind = Literal["root", "embedded", "file", "session", "sidechain"]
OmitReason = Literal[
    "file_not_found",
    "unresolved_trajectory_id",
    "unresolved_session_id",
    "ambiguous_session_id",
    "continuation_not_found",
]


@dataclass(frozen=True, slots=True)
class Segment:
    """Where a node's steps are: a trajectory object in a file, and which of its steps.

    `agent_id` None selects the main chain (every step not in a claude-code sidechain);
    otherwise the sidechain steps whose `extra.agent_id` equals it.
    """

    file: Path
    pointer: str
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class OmittedChild:
    """A referenced subagent that resolves to nothing: it makes its ancestors incomplete."""

    file: str
    ref_path: str
    parent_step_id: int | None
    target: str
    reason: OmitReason


@dataclass(frozen=True, slots=True)
class Node:
    """One trajectory in the tree; `problems` non-empty means it is not valid input."""

    id: str
    kind: NodeKind
    file: str
    pointer: str
    depth: int
    parent_id: str | None
    parent_step_id: int | None
    schema_version: str | None = None
    session_id: str | None = None
    trajectory_id: str | None = None
    agent_name: str | None = None
    agent_version: str | None = None
    model_name: str | None = None
    sha256: str = ""
    steps: int = 0
    context_steps: int = 0
    segments: tuple[Segment, ...] = ()
    children: tuple[Node, ...] = ()
    omitted: tuple[OmittedChild, ...] = ()
    problems: tuple[Problem, ...] = ()

    def walk(self) -> Iterator[Node]:
        """This node and every descendant, depth first, in child order."""
        yield self
        for child in self.children:
            yield from child.walk()

    @property
    def subtree_steps(self) -> int:
        return sum(node.steps for node in self.walk())

    @property
    def max_depth(self) -> int:
        return max(node.depth for node in self.walk())

    @property
    def valid(self) -> bool:
        return not any(node.problems for node in self.walk())

    def all_problems(self) -> list[Problem]:
        return [p for node in self.walk() for p in node.problems]

    def all_omitted(self) -> list[OmittedChild]:
        return [o for node in self.walk() for o in node.omitted]
