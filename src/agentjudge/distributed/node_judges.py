"""The embedded judge on a cluster: one llama.cpp server per node, run by an actor pinned
to that node, and the units of that node sent to it.

A server takes every CPU of its machine and answers one request at a time, so a node gets
one unit at a time (`Lane.capacity`): its server stays busy, and consecutive calls come
from the same trees, which keeps its evaluated prompt prefix useful. Each node joins the
model from its own installed `agentjudge[local]`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from agentjudge.errors import AgentJudgeError, UsageError
from agentjudge.judge.model_cache import ensure_model
from agentjudge.judge.providers.local import (
    READY_TIMEOUT,
    LlamaServer,
    machine_threads,
    require_extra,
)


@dataclass(frozen=True, slots=True)
class Lane:
    """Where units go: a node (None: wherever Ray places them), the embedded judge's
    server on it (None: the configured judge) and how many units it holds at once."""

    node: str | None
    judge: tuple[str, str] | None  # the node's server URL and model file
    capacity: int


class NodeJudge:
    """The actor: the embedded judge's server on the node it is placed on, started (and
    answering) before the actor is ready, stopped with it."""

    def __init__(self, ready_timeout: float) -> None:
        require_extra()
        self._model = ensure_model()
        self._server = LlamaServer(self._model, machine_threads())
        try:
            asyncio.run(self._server.wait_ready(ready_timeout))
        except BaseException:
            self._server.stop()
            raise

    def address(self) -> tuple[str, str]:
        """The server's base URL (loopback: reached by tasks on the same node) and model."""
        return self._server.base_url, str(self._model)

    def stop(self) -> None:
        self._server.stop()


def start_node_judges(ray: Any) -> tuple[list[Lane], list[Any]]:
    """One `NodeJudge` on each live node with a CPU, started in parallel: a lane per
    node, and the actors (for `stop_node_judges`). A server that cannot start on some
    node is the job's `UsageError`, with that node's reason."""
    strategy = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy
    nodes = [
        node["NodeID"]
        for node in ray.nodes()
        if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) >= 1
    ]
    actor = ray.remote(NodeJudge)
    actors = [
        actor.options(num_cpus=0, max_restarts=0, scheduling_strategy=strategy(node, False)).remote(
            READY_TIMEOUT
        )
        for node in nodes
    ]
    try:
        addresses = ray.get([each.address.remote() for each in actors])
    except ray.exceptions.RayError as exc:
        stop_node_judges(ray, actors)
        raise _reason(exc) from None
    lanes = [Lane(node, tuple(found), 1) for node, found in zip(nodes, addresses, strict=True)]
    return lanes, actors


def stop_node_judges(ray: Any, actors: list[Any]) -> None:
    """Stop each node's server (its actor killed after, whatever happened)."""
    for each in actors:
        try:
            ray.get(each.stop.remote(), timeout=30)
        except Exception:  # a node already gone takes its server with it
            logging.getLogger(__name__).debug("stopping a node's judge", exc_info=True)
        ray.kill(each)


def _reason(exc: BaseException) -> AgentJudgeError:
    """The error an actor's start raised (a missing extra, a model that won't load), as
    the job's own; anything else as a usage error naming the cluster."""
    seen: BaseException | None = exc
    for _ in range(5):  # RayActorError -> its creation task's error -> the cause
        if isinstance(seen, AgentJudgeError):
            return seen
        if seen is None:
            break
        seen = getattr(seen, "cause", None) or getattr(seen, "creation_task_error", None)
    return UsageError(
        f"the embedded judge could not start on a node of the Ray cluster "
        f"({type(exc).__name__}: {str(exc).strip().splitlines()[-1][:300]}); install "
        "'agentjudge[local]' on every node, or give a judge server (--judge-url)"
    )
