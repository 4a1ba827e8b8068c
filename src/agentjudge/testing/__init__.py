"""Test helpers shipped with agentjudge: a scriptable OpenAI-compatible judge server."""

from agentjudge.testing.judge_server import JudgeServer, Script

__all__ = ["JudgeServer", "Script"]
