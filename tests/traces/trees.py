"""What the session-log readers' tests share: a run written as ATIF and loaded as the
scoring job loads it, and the shape of the tree it gives."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentjudge.atif import Node, load_trees, parse_trajectory
from agentjudge.traces.read import Run
from tests.conftest import FIXTURES

TRACES = FIXTURES / "traces"

# (agent name, steps, children): the tree as PROVENANCE.md describes a run
Shape = tuple[str, int, tuple[Any, ...]]


def tree(run: Run, folder: Path) -> Node:
    """`run` written to `folder` as an ATIF file, validated (models and rules) and loaded
    into the one tree it must give."""
    data = orjson.dumps(run.document)
    parse_trajectory(data, run.name)
    path = folder / (re.sub(r"[^\w.-]", "_", run.name) + ".json")
    path.write_bytes(data)
    (root,) = list(load_trees([path]))
    assert root.valid, root.all_problems()
    return root


def shape(node: Node) -> Shape:
    """A node's agent, its steps (copied context included) and its children's shapes."""
    steps = node.steps + node.context_steps
    return (node.agent_name or "", steps, tuple(shape(child) for child in node.children))


def steps(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every step of a document, its subagents' included, depth first."""
    yield from document["steps"]
    for child in document.get("subagent_trajectories") or []:
        yield from steps(child)


def tool_counts(document: dict[str, Any]) -> Counter[str]:
    """How often each tool is called in a document's own steps (not its subagents')."""
    return Counter(c["function_name"] for s in document["steps"] for c in s.get("tool_calls", []))


def results(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results of a document's own steps, in order."""
    return [r for s in document["steps"] for r in (s.get("observation") or {}).get("results", [])]
