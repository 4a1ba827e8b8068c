"""LangGraph ReAct agents on langchain-openai's ChatOpenAI, instrumented by
openinference-instrumentation-langchain (OpenInference: CHAIN, LLM and TOOL spans, the
agents' graphs as chains).

The coordinator's `ask_researcher` tool invokes the researcher's graph, so its spans nest
under the coordinator's tool span.
"""

from __future__ import annotations

import warnings

from langchain_core.tools import BaseTool, tool  # type: ignore[import-not-found]
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider

from tests.e2e.producers import world

# create_react_agent's deprecation notice (LangChain 1 moves it): the spans are what counts
warnings.filterwarnings("ignore")


def instrument(provider: TracerProvider) -> None:
    LangChainInstrumentor().instrument(tracer_provider=provider)


def run(model_url: str, prompt: str, workspace: world.Workspace) -> str:
    llm = ChatOpenAI(model=world.MODEL, base_url=model_url, api_key=world.API_KEY, temperature=0)
    tools: list[BaseTool] = [
        tool(workspace.read_file),
        tool(workspace.list_files),
        tool(workspace.add_numbers),
    ]
    researcher = create_react_agent(llm, tools, prompt=world.RESEARCHER, name="researcher")

    def ask_researcher(question: str) -> str:
        """Ask the researcher sub-agent a question and return its answer."""
        state = researcher.invoke({"messages": [("user", question)]})
        return str(state["messages"][-1].content)

    coordinator = create_react_agent(
        llm, [*tools, tool(ask_researcher)], prompt=world.COORDINATOR, name="coordinator"
    )
    state = coordinator.invoke({"messages": [("user", prompt)]})
    return str(state["messages"][-1].content)


if __name__ == "__main__":
    world.main("langgraph-live-producer", instrument, run)
