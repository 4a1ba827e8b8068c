"""agentjudge: judge recorded AI-agent runs."""

from agentjudge.errors import AgentJudgeError, InputError, Problem, UsageError

__version__ = "0.1.0"

__all__ = ["AgentJudgeError", "InputError", "Problem", "UsageError", "__version__"]
