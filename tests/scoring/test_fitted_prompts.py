"""Step prompts fitted to the judge's context window (issue 37, item 4): earlier steps are
windowed first, then the step is cut further; a step that cannot fit is left out of the
plan (`context_overflow`). Pure: plans, no judge."""

from __future__ import annotations

from pathlib import Path

from agentjudge.judge.providers import OpenAI, OpenAICompatible
from agentjudge.judge.providers.anthropic import Anthropic
from agentjudge.scoring.criteria import resolve_criteria
from agentjudge.scoring.estimate import estimate_plan, judge_budget, prompt_budget
from agentjudge.scoring.job import load_roots
from agentjudge.scoring.plan import NodePlan, plan_node, step_system
from agentjudge.scoring.steps import FileCache, node_steps
from tests.atif.docs import doc, step, write
from tests.scoring.test_plan import config, planned_tree

CRITERIA = resolve_criteria("default")


def long_trace(folder: Path) -> None:
    steps = [step(1, "user", "fix it")] + [
        step(i, message=f"step {i}: " + "read 12 lines of 3 files. " * (400 if i % 10 == 0 else 8))
        for i in range(2, 61)
    ]
    steps[30]["tool_calls"] = [
        {"tool_call_id": f"c{k}", "function_name": "probe", "arguments": {"k": k}}
        for k in range(2000)
    ]
    write(folder / "t.json", doc(1, steps=steps))


def plan(folder: Path, context_tokens: int) -> tuple[NodePlan, int]:
    budget = prompt_budget(context_tokens, 512)
    settings = config(trajectory_path=[str(folder)])
    (root,) = load_roots(settings)
    found = node_steps(root, FileCache())
    system = step_system(CRITERIA.rubric, "fake", "score")
    planned = plan_node(found, None, CRITERIA.rubric, CRITERIA, settings, system, "", budget)
    worst = max(
        budget.count(p.request.messages[0].content) + budget.count(p.request.messages[1].content)
        for p in planned.steps
    )
    return planned, worst - budget.tokens


def test_every_prompt_fits_and_what_cannot_is_left_out(tmp_path: Path) -> None:
    long_trace(tmp_path)
    (unfitted,) = planned_tree(tmp_path, CRITERIA)
    fitted, over = plan(tmp_path, 3072)
    assert over <= 0  # no prompt over the budget
    # the step of 2,000 tool calls cannot fit; every other step is planned
    assert [view.step_id for _, view in fitted.overflow] == [31]
    assert len(fitted.steps) == len(unfitted.steps) - 1
    by_id = {p.view.step_id: p for p in fitted.steps}
    # long steps are cut further than the usual 8,000 characters, with their marker
    long_step = by_id[40]
    assert long_step.view.cut is not None
    assert long_step.view.cut.shown < 8000
    assert "cut for length" in long_step.request.messages[1].content
    # steps after a long one had earlier steps left out, and the judge is told
    windowed = [p for p in fitted.steps if p.left_out]
    assert windowed
    for planned in windowed:
        note = f"{planned.left_out:,} earlier steps of the run are not shown"
        assert note in planned.request.messages[1].content
    # a roomy window changes nothing
    roomy, _ = plan(tmp_path, 1_000_000)
    assert roomy.overflow == ()
    assert [p.request for p in roomy.steps] == [p.request for p in unfitted.steps]


def test_the_window_is_the_settings_else_the_price_databases() -> None:
    settings = config()
    sonnet = Anthropic("http://a", "claude-sonnet-4-5")
    assert judge_budget(settings, sonnet, None) is None  # nothing known: not fitted
    from_db = judge_budget(settings, sonnet, 200_000)
    assert from_db is not None
    assert from_db.tokens == int((200_000 - 512) * 0.9)
    chosen = judge_budget(config(judge_context_tokens=8192), sonnet, 200_000)
    assert chosen is not None
    assert chosen.tokens == int((8192 - 512) * 0.9)
    # a reasoning model keeps room for its thinking
    thinking = judge_budget(config(judge_context_tokens=32_000), OpenAI("http://o", "gpt-5"), None)
    plain = judge_budget(
        config(judge_context_tokens=32_000), OpenAICompatible("http://v", "m"), None
    )
    assert thinking is not None
    assert plain is not None
    assert abs(plain.tokens - thinking.tokens - 8192 * 0.9) <= 1


def test_the_dry_run_counts_the_fitted_prompts(tmp_path: Path) -> None:
    long_trace(tmp_path)
    settings = config(trajectory_path=[str(tmp_path)])
    roots = load_roots(settings)
    whole = estimate_plan(roots, settings, CRITERIA, lambda _: False)
    fitted = estimate_plan(
        roots, settings, CRITERIA, lambda _: False, budget=prompt_budget(3072, 512)
    )
    assert fitted.step_calls == whole.step_calls - 1  # the overflowing step is not sent
    assert fitted.step_input_tokens < whole.step_input_tokens
