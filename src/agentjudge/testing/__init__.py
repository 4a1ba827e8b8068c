"""Test helpers shipped with agentjudge: a scriptable judge server, OpenAI-compatible or
mimicking a judge API (`JudgeServer(mimic="anthropic")`)."""

from agentjudge.testing.judge_server import JudgeServer, LoggedRequest, Script

__all__ = ["JudgeServer", "LoggedRequest", "Script"]
