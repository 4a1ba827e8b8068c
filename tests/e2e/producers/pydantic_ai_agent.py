"""pydantic-ai agents, instrumented by pydantic-ai's own OpenTelemetry instrumentation
(GenAI conventions: invoke_agent, chat and execute_tool spans).

The coordinator's `ask_researcher` tool runs the researcher agent (agent delegation), so
the researcher's invoke_agent span nests under the coordinator's execute_tool span.
"""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent, RunContext
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests.e2e.producers import world


def instrument(provider: TracerProvider) -> None:
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))


def with_tools(agent: Agent[None, str], workspace: world.Workspace) -> Agent[None, str]:
    agent.tool_plain(workspace.read_file)
    agent.tool_plain(workspace.list_files)
    agent.tool_plain(workspace.add_numbers)
    return agent


def run(model_url: str, prompt: str, workspace: world.Workspace) -> str:
    provider = OpenAIProvider(base_url=model_url, api_key=world.API_KEY)
    model = OpenAIChatModel(world.MODEL, provider=provider)
    researcher = with_tools(
        Agent(model, name="researcher", instructions=world.RESEARCHER), workspace
    )
    coordinator = with_tools(
        Agent(model, name="coordinator", instructions=world.COORDINATOR), workspace
    )

    async def ask_researcher(ctx: RunContext[None], question: str) -> str:
        """Ask the researcher sub-agent a question and return its answer."""
        result = await researcher.run(question, usage=ctx.usage)
        return str(result.output)

    coordinator.tool(ask_researcher)
    return str(coordinator.run_sync(prompt).output)


if __name__ == "__main__":
    world.main("pydantic-ai-live-producer", instrument, run)
