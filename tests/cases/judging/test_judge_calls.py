"""Building the judge a run names: whose key and which server each provider gets."""

from __future__ import annotations


def test_a_hosted_providers_key_never_goes_to_the_agents_server() -> None:
    from agentjudge.cases.judging import JudgeIdentity, build_judge
    from agentjudge.judge.request import JudgeRequest, Message

    env = {
        "MODEL_BASE_URL": "http://agent-model.internal:8000/v1",
        "ANTHROPIC_API_KEY": "sk-ant-real",
        "OPENAI_API_KEY": "sk-openai-real",
        "MODEL_API_KEY": "agent-key",
    }
    anthropic = build_judge(JudgeIdentity("anthropic", "claude"), env)
    assert anthropic.endpoint == "https://api.anthropic.com/v1/messages"
    openai = build_judge(JudgeIdentity("openai", "gpt-4o"), env)
    assert openai.endpoint == "https://api.openai.com/v1/chat/completions"
    # the agent's own OpenAI-compatible server, with the agent's key
    own = build_judge(JudgeIdentity("openai-compatible", "m"), env)
    built = own.build(JudgeRequest((Message("user", "x"),), "v1"))
    assert str(built.url) == "http://agent-model.internal:8000/v1/chat/completions"
    assert built.headers["authorization"] == "Bearer agent-key"


def test_an_azure_judge_never_gets_the_agents_key() -> None:
    from agentjudge.cases.judging import JudgeIdentity, build_judge
    from agentjudge.judge.request import JudgeRequest, Message

    env = {
        "MODEL_PROVIDER": "openai-compatible",
        "MODEL_API_KEY": "agent-vllm-key",
        "AZURE_OPENAI_API_KEY": "azure-key",
        "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com",
    }
    azure = build_judge(JudgeIdentity("azure", "dep"), env)
    built = azure.build(JudgeRequest((Message("user", "x"),), "v1"))
    assert built.headers["api-key"] == "azure-key"
