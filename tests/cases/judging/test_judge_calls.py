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


def test_a_failed_item_is_worded_as_graph_agents_cli_words_it_then_ours() -> None:
    from agentjudge.cases.judging.judge_calls import failure_reason
    from agentjudge.judge.client import JudgeOutcome

    raised = JudgeOutcome(None, "http_502", message="RuntimeError: rate limited")
    assert failure_reason(raised, own_model=True) == (
        "RuntimeError: rate limited (judge call failed: http_502)"
    )
    lost = JudgeOutcome(None, "transport_error", message="APIConnectionError: Connection error.")
    assert failure_reason(lost, own_model=True) == (
        "APIConnectionError: Connection error. (judge call failed: transport_error)"
    )
    # a server of ours refusing: graph-agents-cli never calls it, so ours alone
    assert failure_reason(raised, own_model=False) == (
        "judge call failed: http_502: RuntimeError: rate limited"
    )
    # our own deadline: graph-agents-cli has none
    assert failure_reason(JudgeOutcome(None, "timeout"), own_model=True) == (
        "judge call failed: timeout"
    )
    words = "ValueError: could not parse a score from judge reply: 'no verdict here'"
    unusable = JudgeOutcome(None, "score_missing", protocol=True, reply_error=words)
    for own_model in (True, False):
        assert (
            failure_reason(unusable, own_model) == f"{words} (unusable judge answer: score_missing)"
        )
    # a detail of ours (the number refused) stays in our part
    huge = JudgeOutcome(
        None,
        "score_out_of_range",
        protocol=True,
        message="a number too large to show is outside 1..5",
        reply_error="OverflowError: int too large to convert to float",
    )
    assert failure_reason(huge, own_model=False) == (
        "OverflowError: int too large to convert to float (unusable judge answer: "
        "score_out_of_range: a number too large to show is outside 1..5)"
    )
    # a score graph-agents-cli would take, out of our scale: ours alone
    out = JudgeOutcome(None, "score_out_of_range", protocol=True, message="7 is outside 1..5")
    assert failure_reason(out, own_model=True) == (
        "unusable judge answer: score_out_of_range: 7 is outside 1..5"
    )
