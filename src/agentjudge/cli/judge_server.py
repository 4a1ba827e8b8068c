"""`agentjudge judge-server`: the scriptable test judge, for plumbing checks."""

from __future__ import annotations

import asyncio

import typer

from agentjudge.cli.options import ApiKey, Capacity, Latency, Mimic, Port
from agentjudge.errors import EXIT_OK, UsageError, clip


def judge_server_command(
    port: Port = 8000,
    latency: Latency = 0.0,
    capacity: Capacity = None,
    mimic: Mimic = None,
    api_key: ApiKey = None,
) -> int:
    """Run the scriptable test judge (OpenAI-compatible, or mimicking an API) for plumbing checks.

    Not a judge of quality: its scores come from score markers in the request, or from a
    hash of it."""
    from agentjudge.testing import JudgeServer, Script
    from agentjudge.testing.mimic import DIALECTS

    if mimic is not None and mimic not in DIALECTS:
        raise UsageError(f"--mimic must be one of {', '.join(DIALECTS)}, not {clip(repr(mimic))}")

    async def serve() -> None:
        script = Script(latency=latency, capacity=capacity)
        server = JudgeServer(script, port=port, keep_log=False, mimic=mimic, api_key=api_key)
        await server.start()
        title = server.dialect.title
        speaks = f"mimicking the {title} API" if mimic else f"({title})"
        typer.echo(f"test judge {speaks} listening on {server.base_url} (Ctrl-C stops it)")
        await asyncio.Event().wait()

    asyncio.run(serve())
    return EXIT_OK
