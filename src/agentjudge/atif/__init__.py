"""ATIF: models, validation, discovery, and the tree of nodes that scoring walks."""

from agentjudge.atif.document import parse_trajectory
from agentjudge.atif.limits import Limits
from agentjudge.atif.models import SCHEMA_VERSIONS, Trajectory
from agentjudge.atif.node import Node, OmittedChild, Segment
from agentjudge.atif.tree import load_trees

__all__ = [
    "SCHEMA_VERSIONS",
    "Limits",
    "Node",
    "OmittedChild",
    "Segment",
    "Trajectory",
    "load_trees",
    "parse_trajectory",
]
