"""The judging phase of a grading run: the judge and the custom metrics, side by side.

The judge is ours (`judge_calls`), or the project's own `get_judge_model()` when the
provider is not one we speak; custom metrics and the project's judge run in the project's
environment when it has one. The whole phase is bounded by `--judge-timeout`, as
graph-agents-cli bounds its judge runner. The judge client (aiohttp, OpenTelemetry) loads
only when a run calls a judge.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentjudge.cases.judging.custom_metrics import run_custom
from agentjudge.cases.judging.identity import Judged, JudgeIdentity, JudgingOptions
from agentjudge.cases.judging.judge_calls import (
    build_judge,
    is_fake,
    run_judges,
    speaks,
)
from agentjudge.cases.judging.metric_result import MetricResult
from agentjudge.cases.loading import agent_package
from agentjudge.errors import JudgeError, UsageError
from agentjudge.judge.defaults import GRADE_CALLS
from agentjudge.judge.request import JudgeRequest

if TYPE_CHECKING:
    from agentjudge.judge.client import JudgeClient
    from agentjudge.judge.providers.base import Provider
    from agentjudge.judge.session import JudgeSession, JudgeSettings


def run_metrics(
    judge: JudgeIdentity,
    env: dict[str, str],
    judge_items: list[tuple[str, JudgeRequest]],
    custom_items: list[dict[str, Any]],
    root: Path,
    options: JudgingOptions,
    advance: Callable[[], None] | None,
    note: Callable[[str], None],
) -> Judged:
    """Run every `(item id, request)` and custom metric item; an unusable judge, or a
    project judge with no environment to run in, is a usage error before the first call."""
    # the judge client (aiohttp, OpenTelemetry) loads only for runs that call a judge
    from agentjudge.judge.session import JudgeSession
    from agentjudge.projectenv.process import project_command

    # a provider agentjudge does not speak is the project's own get_judge_model()
    own_judge = bool(judge_items) and not speaks(judge.provider)
    provider = build_judge(judge, env) if judge_items and not own_judge else None
    command = project_command(root)
    if own_judge and command is None:
        raise UsageError(
            f"judge provider {judge.provider!r} is not one agentjudge calls itself, and the "
            f"project in {root} has no environment to run its get_judge_model() in (no "
            "uv.lock with uv installed, no .venv): run graph-agents-cli install, or choose "
            "a provider agentjudge calls (openai-compatible, openai, anthropic, gemini, azure)"
        )
    job = _Job(judge, judge_items, custom_items, root, command, own_judge, provider, _env(judge))
    settings = judge_settings(options)
    use_store = bool(judge_items) and options.use_store and not is_fake(judge.provider)
    waits = None if options.quiet else note
    session = JudgeSession(settings, use_store, options.store_path, note, waits)
    with session:  # the verdict store is open this long
        results, client, used = session.run(job.run_within(options, session, advance))
    stats = client.stats if client is not None else None
    cost = client.pricer.cost(client.stats.cost_usd) if client is not None else None
    if used is None:
        return Judged(results, judge, stats, cost=cost)
    # the fake judge has its own run warning (and `fake_model`); others may carry a note
    judge_note = None if is_fake(used.name) else used.note
    return Judged(results, JudgeIdentity(used.name, used.model), stats, judge_note, cost)


def judge_settings(options: JudgingOptions) -> JudgeSettings:
    """What a grading run asks of its judge's client: `grade`'s call limits, with the call
    timeout its flag sets."""
    from agentjudge.judge.batching import BatchSettings
    from agentjudge.judge.session import JudgeSettings

    calls = replace(GRADE_CALLS, timeout=options.call_timeout)
    batch = None
    if options.batch:
        online = options.batch_fallback == "online"
        batch = BatchSettings(options.batch_poll_seconds, "online" if online else "batch")
    return JudgeSettings(
        options.concurrency, calls, ca_bundle=options.ca_bundle, batch=batch, rates=options.rates
    )


def _env(judge: JudgeIdentity) -> dict[str, str]:
    """What graph-agents-cli's runner gives custom metrics and the project's judge."""
    return {
        name: value
        for name, value in (
            ("JUDGE_MODEL_PROVIDER", judge.provider),
            ("JUDGE_MODEL_NAME", judge.model),
        )
        if value
    }


@dataclass(frozen=True, slots=True)
class _Job:
    """The items of one phase and who answers them: our judge (`provider`), or the
    project's own judge in its environment (`own_judge`)."""

    judge: JudgeIdentity
    judge_items: list[tuple[str, JudgeRequest]]
    custom_items: list[dict[str, Any]]
    root: Path
    command: list[str] | None  # how the project's own Python runs; None without one
    own_judge: bool
    provider: Provider | None  # None when the project judges, or nothing is judged
    judge_env: dict[str, str]

    async def run_within(
        self, options: JudgingOptions, session: JudgeSession, advance: Callable[[], None] | None
    ) -> tuple[dict[str, MetricResult], JudgeClient | None, Provider | None]:
        """`run`, bounded as graph-agents-cli's --judge-timeout bounds its judge runner."""
        try:
            async with asyncio.timeout(options.timeout):
                return await self.run(options.concurrency, session, advance)
        except TimeoutError:
            raise UsageError(
                f"judging did not finish within --judge-timeout {options.timeout:g} s: "
                "the judge may be unreachable or slow; raise --judge-timeout, or check the "
                "judge (--judge-call-timeout bounds each call)"
            ) from None

    async def run(
        self, concurrency: int, session: JudgeSession, advance: Callable[[], None] | None
    ) -> tuple[dict[str, MetricResult], JudgeClient | None, Provider | None]:
        """The results, the judge's client (its counters and prices) and the provider that
        judged (both None when no judge was called), with the project's process running
        while they need it."""
        from agentjudge.judge.providers.project import ProjectJudge
        from agentjudge.judge.secrets import env_secrets
        from agentjudge.projectenv.process import ProjectProcess, project_environ

        root, env = self.root, self.judge_env
        async with contextlib.AsyncExitStack() as stack:
            process = None
            if self.command is not None and (self.own_judge or self.custom_items):
                process = await stack.enter_async_context(
                    ProjectProcess.running(self.command, root, project_environ(env), concurrency)
                )
            provider = self.provider
            if self.own_judge:
                assert process is not None
                provider = ProjectJudge(
                    process,
                    str(self.judge.provider),
                    self.judge.model,
                    root,
                    agent_package(root),
                    env_secrets(env),
                )
            if provider is None:
                return await run_custom(self.custom_items, root, process, env), None, None
            client = session.client(provider)
            # an embedded judge's server, or the project's judge model, lives this long
            async with session.serving(client):
                stored = all(session.stored(provider, r) for _, r in self.judge_items)
                if provider.preflight and not stored:
                    await _preflight(client)
                custom = asyncio.ensure_future(run_custom(self.custom_items, root, process, env))
                judged = await run_judges(client, self.judge_items, advance, self.own_judge)
                return {**judged, **await custom}, client, provider


async def _preflight(client: JudgeClient) -> None:
    """The judge answers before any case is judged, or the run stops (exit 3, nothing
    written) with the judge server's own explanation."""
    try:
        await client.preflight()
    except JudgeError as exc:
        provider = client.provider
        said = f"{exc.kind}: {exc.detail}" if exc.detail else exc.kind
        raise UsageError(
            f"the judge {provider.name}/{provider.model} at {provider.safe_endpoint} cannot be "
            f"used ({said}); check its URL, key and model"
        ) from None
