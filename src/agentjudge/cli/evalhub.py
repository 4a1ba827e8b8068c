"""`agentjudge evalhub`: run as an eval-hub adapter."""

from __future__ import annotations

from agentjudge.errors import UsageError


def evalhub_command() -> int:
    """Run as an eval-hub adapter: the job spec is read from EVALHUB_JOB_SPEC_PATH."""
    try:
        from agentjudge.integrations.evalhub import main as adapter_main
    except ImportError:
        raise UsageError(
            "the eval-hub adapter needs eval-hub-sdk: pip install 'agentjudge[evalhub]'"
        ) from None
    return adapter_main()
