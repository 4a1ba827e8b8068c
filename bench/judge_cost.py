"""Benchmark: what judging the bench collection costs, billed, for named judges and each way
of sending the calls, beside the request pattern of the eval-hub-contrib `atif` adapter.

The collection: N roots x S steps (default 200 x 25), a coding agent's runs whose tool
results have the sizes real ones have (files read, test runs, searches, listings: 0.3 to
9 KB). Each judge is a hosted API's model played by its API mimic
(`agentjudge.testing.mimic`), which reports usage as the API documents it (OpenAI reads a
repeated prompt start of 1,024 tokens or more from its cache without being asked);
`agentjudge score` runs against it and prices each call from genai-prices.

Modes (`MODES`, a table of the flags each adds):
- `online_no_cache`: every call online, every input token at the input price (a run's
  usage repriced with its cache reads and writes billed as plain input);
- `online_cache`: the same run as billed, prompt cache reads and writes at their rates
  (available when the run read anything from the provider's cache);
- `batch_cache`: `score --batch` as billed (the batches polled every 0.2 s: the mimic
  answers them at once).
A mode that cannot run yet is reported with the reason.

`contrib_pattern`: the same verdicts asked the way the contrib adapter asks them: one user
message per step holding `json.dumps({"criteria", "step", "request"})` with the whole ATIF
step (no system message, no context, no cut), and for each step scored under 0.5 a second
such message asking its category; sent to the same mimic and priced without caching or
batch (the adapter asks for neither). Its one criteria derivation per job is left out.

`floor`: the least any request pattern that shows the judge each scored step once can cost
in batch mode, beside our batch run (`floor_usd`): the text of every judged step as our
step prompts render it (`quote` of the step as `steps.render` fits it, which the prompt
wraps in its step tag: the text the judge must read at least once, and the same text our
run's input tokens hold), counted as the mimics count tokens (`CHARS_PER_TOKEN`
characters a token, summed per step), billed once at the plain input rate; every other
input token of our batch run (system message, task, context steps, the categorizations'
prompts, the step text shown again) at the cache-read rate; the batch run's output
tokens at the output rate; the whole at `BATCH_DISCOUNT`. Our rendering, not the
adapter's: the floor splits our run's input, and our rendering (compact JSON) is shorter
in total than the adapter's `json.dumps` of each whole step (also reported, in tokens, as
`step_text_tokens_as_the_adapter_sends_them`), so the floor is the lower of the two.
`step_text_and_output_share`: the same with no other input at all (a pattern with no
system message, no context, no categorization), the part of the floor that no layout of
the prompts can remove.

Prints one JSON object: per judge, each mode's calls, tokens by kind, USD, USD per 1,000
steps and share of the contrib pattern's cost; the floor; what `score --dry-run` foretold
for the online run (`dry_run_foretold`: a bound, every answer at its full budget); whether
every mode gave the same step scores (and the contrib pattern the same). Target (issue
37): batch_cache <= 25% of contrib_pattern with identical step scores (below the floor on
the bench collection: bench/RESULTS.md).

    python bench/judge_cost.py [--trajectories 200] [--steps 25]
                               [--judges openai/gpt-5-mini,anthropic/claude-sonnet-4-5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjudge.api import job_criteria
from agentjudge.judge import JudgeClient, JudgeRequest
from agentjudge.judge.price import Pricer, Rates
from agentjudge.judge.providers import JudgeSpec, build_provider
from agentjudge.judge.request import Message
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import DEFAULT_RUBRIC
from agentjudge.scoring.foretell import BATCH_DISCOUNT
from agentjudge.scoring.job import load_roots
from agentjudge.scoring.plan import plan_node, step_chars, step_system
from agentjudge.scoring.prompts import quote
from agentjudge.scoring.steps import FileCache, node_steps
from agentjudge.testing import JudgeServer
from agentjudge.testing.mimic.prompt_cache import CHARS_PER_TOKEN

KEY = "sk-bench-key-0123456789"
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
FAILURE_THRESHOLD = 0.5
# a step's score by its place: two in ten under the failure threshold
SCORES = (1.0, 0.9, 0.8, 0.7, 0.6, 1.0, 0.9, 0.3, 0.8, 0.2)
CATEGORIES = ("reasoning_failure", "tool_selection_failure", "context_loss")
CONTRIB_CATEGORIES = sorted(
    {"tool_selection_failure", "context_loss", "policy_boundary_violation"}
    | {"reasoning_failure", "none"}
)


# --- the collection


def _source(index: int, lines: int) -> str:
    """A Python file as a read tool returns it: numbered lines of plausible code."""
    body = []
    for n in range(1, lines + 1):
        kind = (index + n) % 6
        if kind == 0:
            body.append(f"{n:5d}\tdef handle_{n}(request, session=None):")
        elif kind == 1:
            body.append(f'{n:5d}\t    """Return the record for request {n}, or None."""')
        elif kind == 2:
            body.append(f"{n:5d}\t    value = session.get(request.key, default=cache[{n}])")
        elif kind == 3:
            body.append(f"{n:5d}\t    if value is None and request.retries < {n % 7}:")
        elif kind == 4:
            body.append(f"{n:5d}\t        raise LookupError(f'missing {{request.key}}')")
        else:
            body.append(f"{n:5d}\t    return transform(value, scale={n % 13})")
    return "\n".join(body)


def _test_run(index: int, step: int) -> str:
    """A test run's output: a failure's traceback and the summary."""
    lines = [
        "============================= test session starts ==============================",
        f"platform linux -- Python 3.11.7, pytest-8.3.{step % 5}, pluggy-1.5.0",
        f"collected {40 + index % 20} items",
        "",
        f"tests/test_handlers.py ....F.....s....F..{'.' * (step % 9)}",
        "",
        "=================================== FAILURES ===================================",
    ]
    for failure in range(2):
        lines += [
            f"_____________________ test_handle_{step}_{failure} ______________________",
            "    def test_handle():",
            f"        result = handle_{step}(Request(key='k{failure}'))",
            f">       assert result == {failure + step}",
            f"E       assert None == {failure + step}",
            f"tests/test_handlers.py:{20 + step}: AssertionError",
        ]
    lines.append(
        f"========== 2 failed, {38 + index % 20} passed, 1 skipped in 0.{step}4s =========="
    )
    return "\n".join(lines * 2)


def _search(step: int) -> str:
    return "\n".join(
        f"src/app/handlers_{n % 5}.py:{n * 7}:    value = session.get(request.key)  # {step}"
        for n in range(1, 18)
    )


def _listing(step: int) -> str:
    return "\n".join(f"src/app/module_{n}.py" for n in range(step % 5 + 12))


def trajectory(index: int, steps: int) -> dict[str, Any]:
    """Root `index`: the task, then agent steps that each call a tool; its tool results
    are a file read (4 to 9 KB), a test run (about 2.5 KB), a search or a listing."""
    out: list[dict[str, Any]] = [
        {
            "step_id": 1,
            "source": "user",
            "message": f"Task {index}: the handlers return None for cached keys; make the "
            "failing tests in tests/test_handlers.py pass without changing the tests. "
            "[[score=1]]",
        }
    ]
    for step_id in range(2, steps + 1):
        score = SCORES[(index * 3 + step_id) % len(SCORES)]
        category = CATEGORIES[(index + step_id) % len(CATEGORIES)]
        tool, arguments, result = {
            0: ("read_file", {"path": f"src/app/handlers_{step_id % 5}.py"}, ""),
            1: ("bash", {"cmd": "pytest -x tests/test_handlers.py"}, _test_run(index, step_id)),
            2: ("grep", {"pattern": "session.get", "path": "src"}, _search(step_id)),
            3: ("ls", {"path": "src/app"}, _listing(step_id)),
        }[step_id % 4]
        if tool == "read_file":
            result = _source(index + step_id, 90 + (index * 13 + step_id * 29) % 110)
        call = f"call_{step_id}"
        out.append(
            {
                "step_id": step_id,
                "source": "agent",
                "message": f"Step {step_id} of run {index}: checking the {tool} output "
                f"before the next change. [[score={score}]] [[category={category}]]",
                "tool_calls": [
                    {"tool_call_id": call, "function_name": tool, "arguments": arguments}
                ],
                "observation": {"results": [{"source_call_id": call, "content": result}]},
            }
        )
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": f"s-{index}",
        "agent": {"name": "bench-agent", "version": "1"},
        "steps": out,
    }


# --- the modes


@dataclass(frozen=True)
class Mode:
    """One way of sending a run's calls: the `score` flags it takes, how its cost is read
    from the run (`billed`: as the run priced it; else every input token at the input
    rate); `needs_cache_reads`: reported only when the run read from the prompt cache."""

    name: str
    flags: tuple[str, ...]
    billed: bool
    needs_cache_reads: bool = False


MODES = (
    Mode("online_no_cache", (), billed=False),
    Mode("online_cache", (), billed=True, needs_cache_reads=True),
    Mode("batch_cache", ("--batch", "--set", "batch_poll_seconds=0.2"), billed=True),
)


# --- running


def score(
    runs: Path, out: Path, provider: str, model: str, url: str, flags: tuple[str, ...]
) -> dict[str, Any]:
    """`agentjudge score` of `runs` against the mimic at `url`: its results document."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env[KEY_ENV[provider]] = KEY
    command = [
        # a new verdict store per run: nothing is read from an earlier one (batch mode
        # keeps its batch ids there, so it cannot run with --no-cache)
        sys.executable, "-m", "agentjudge", "score", str(runs), "--quiet",
        "--cache", str(out.with_suffix(".verdicts.sqlite")),
        "--judge", provider, "--judge-model", model, "--judge-url", url,
        "--concurrency", "16", "-o", str(out), *flags,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 1) or not out.exists():
        sys.exit(f"score failed ({done.returncode}): {done.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def foretold(runs: Path, provider: str, model: str, url: str) -> dict[str, Any]:
    """What `score --dry-run` foretold for the online run: its cost and expected cache use."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env[KEY_ENV[provider]] = KEY
    command = [
        sys.executable, "-m", "agentjudge", "score", str(runs), "--no-cache", "--dry-run",
        "--json", "--judge", provider, "--judge-model", model, "--judge-url", url,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"dry run failed ({done.returncode}): {done.stderr[-2000:]}")
    plan = json.loads(done.stdout)
    return {
        "usd": plan["cost"]["usd"],
        "at_most": plan["cost"]["at_most"],
        "input_tokens_to_send": plan["input_tokens_to_send"],
        "cache_read_tokens_expected": plan["cache_read_tokens_expected"],
    }


def step_scores(document: dict[str, Any]) -> list[float | None]:
    return [
        step["score"]
        for tree in document["trajectories"]
        for node in tree["nodes"]
        for step in node["steps"]
    ]


def uncached_usd(rates: Rates, input_tokens: int, output_tokens: int) -> float:
    """Every input token at the input rate: the prompt cache neither read nor written."""
    return rates.price(input_tokens, 0, 0, output_tokens)


def step_text_tokens(runs: Path, provider: str, model: str) -> list[int]:
    """The tokens (as the mimics count them) of each judged step's own text as our step
    prompts render it, one entry per step request: every node of `runs` planned as
    `score` plans it with the default settings, but for the judge's context window (the
    bench's steps fit it whole: none is cut to fit)."""
    config = ScoreConfig.model_validate(
        {"trajectory_path": [str(runs)], "judge": provider, "judge_model": model}
    )
    criteria = job_criteria(config)
    system = step_system(criteria.rubric, config.judge, criteria.answer_shape)
    tokens = []
    for root in load_roots(config):
        files = FileCache()
        for node in root.walk():
            found = node_steps(node, files, step_chars(config.judge))
            plan = plan_node(found, node.trajectory_id, criteria.rubric, criteria, config, system)
            for planned in plan.steps:
                text = quote(planned.view.data)
                if f"<step>{text}</step>" not in planned.request.messages[-1].content:
                    sys.exit(f"{node.id}: the step prompt does not show the step as rendered")
                tokens += [len(text) // CHARS_PER_TOKEN] * len(planned.samples)
    return tokens


def floor_usd(rates: Rates, input_tokens: int, step_tokens: int, output_tokens: int) -> float:
    """The floor (see the module's docstring): of a run's `input_tokens`, `step_tokens`
    (the judged steps' own text) at the input rate and every other one at the cache-read
    rate, `output_tokens` at the output rate, all at the batch discount."""
    others = max(input_tokens - step_tokens, 0)
    return rates.price(input_tokens, others, 0, output_tokens) * BATCH_DISCOUNT


def floor_figures(
    rates: Rates, used: dict[str, int], step_tokens: int, adapter_tokens: int, contrib_usd: float
) -> dict[str, Any]:
    """The floor of a run whose usage is `used` (its input and output tokens), and the
    part of it no prompt layout removes (the step text and the output alone)."""
    usd = floor_usd(rates, used["input_tokens"], step_tokens, used["output_tokens"])
    alone = floor_usd(rates, step_tokens, step_tokens, used["output_tokens"])
    return {
        "step_text_tokens": step_tokens,
        "step_text_tokens_as_the_adapter_sends_them": adapter_tokens,
        "other_input_tokens_at_cache_read": max(used["input_tokens"] - step_tokens, 0),
        "output_tokens": used["output_tokens"],
        "usd": round(usd, 4),
        "share_of_contrib": round(usd / contrib_usd, 3),
        "step_text_and_output_share": round(alone / contrib_usd, 3),
    }


def contrib_requests(document: dict[str, Any], runs: Path) -> list[JudgeRequest]:
    """The contrib adapter's requests for the same steps and verdicts: one per step, and
    one more per step scored under the failure threshold (its category)."""
    # our default rubric, written as the adapter writes a rubric it was given
    criteria = {
        "name": DEFAULT_RUBRIC.name,
        "criteria": [
            {"name": c.name, "description": c.description, "weight": c.weight}
            for c in DEFAULT_RUBRIC.criteria
        ],
        "aggregation": "weighted_mean",
    }
    requests = []
    for tree in document["trajectories"]:
        steps = json.loads(Path(tree["nodes"][0]["file"]).read_text())["steps"]
        scored = {s["step_id"]: s["score"] for s in tree["nodes"][0]["steps"]}
        for step in steps:
            payloads: list[dict[str, Any]] = [
                {
                    "criteria": criteria,
                    "step": step,
                    "request": "Return JSON with numeric 'score' between 0 and 1",
                }
            ]
            score = scored.get(step["step_id"])
            if score is not None and score < FAILURE_THRESHOLD:
                payloads.append(
                    {
                        "criteria": criteria,
                        "step": step,
                        "score": score,
                        "allowed_categories": CONTRIB_CATEGORIES,
                        "request": "Classify this low-scoring agent step. Return only JSON "
                        "with category, confidence, and rationale. category must be one of "
                        "tool_selection_failure, context_loss, policy_boundary_violation, "
                        "reasoning_failure, or none. Use none when no actionable failure is "
                        "detectable.",
                    }
                )
            requests += [
                JudgeRequest((Message("user", json.dumps(p)),), "contrib-atif") for p in payloads
            ]
    return requests


async def send_all(provider: str, model: str, url: str, requests: list[JudgeRequest]) -> Any:
    judge = build_provider(JudgeSpec(provider, model, url, KEY, None, None))
    async with JudgeClient(judge, concurrency=16) as client:
        outcomes = await asyncio.gather(*(client.judge(r) for r in requests))
    return client.stats, outcomes


def figures(
    usd: float, steps: int, contrib_usd: float | None, counters: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "available": True,
        "usd": round(usd, 4),
        "usd_per_1000_steps": round(usd * 1000 / steps, 4),
        **counters,
    }
    if contrib_usd:
        out["share_of_contrib"] = round(usd / contrib_usd, 3)
    return out


def bench_judge(judge: str, runs: Path, folder: Path, steps: int) -> dict[str, Any]:
    provider, model = judge.split("/", 1)
    pricer = Pricer(provider, model)
    rates = pricer.rates()
    if rates is None:
        sys.exit(f"{judge}: {pricer.reason}")
    modes: dict[str, dict[str, Any]] = {}
    runs_by_flags: dict[tuple[str, ...], dict[str, Any]] = {}
    scores: dict[str, list[float | None]] = {}
    for mode in MODES:
        if mode.flags not in runs_by_flags:
            out = folder / f"{provider}-{len(runs_by_flags)}.json"
            # a mimic of its own per run: its prompt cache starts cold, as a new job's would
            # (one warmed by an earlier mode's run would lower the later mode's bill)
            with JudgeServer(mimic=provider, api_key=KEY, keep_log=False) as server:
                runs_by_flags[mode.flags] = score(
                    runs, out, provider, model, server.base_url, mode.flags
                )
        document = runs_by_flags[mode.flags]
        used = document["judge"]
        if mode.needs_cache_reads and not used["cache_read_tokens"]:
            modes[mode.name] = {
                "available": False,
                "why": f"the run read nothing from {provider}'s prompt cache",
            }
            continue
        usd = (
            used["cost"]["usd"]
            if mode.billed
            else uncached_usd(rates, used["input_tokens"], used["output_tokens"])
        )
        counters = {
            key: used[key]
            for key in (
                "calls",
                "input_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "output_tokens",
            )
        }
        modes[mode.name] = {"usd": usd, "counters": counters}
        scores[mode.name] = step_scores(document)
    with JudgeServer(mimic=provider, api_key=KEY, keep_log=False) as server:
        plan = foretold(runs, provider, model, server.base_url)
        first = next(iter(runs_by_flags.values()))
        requests = contrib_requests(first, runs)
        stats, outcomes = asyncio.run(send_all(provider, model, server.base_url, requests))
    if stats.calls != len(requests):  # every request its own call, as the adapter sends
        sys.exit(f"{judge}: {len(requests)} contrib requests made {stats.calls} calls")
    contrib_usd = uncached_usd(rates, stats.input_tokens, stats.output_tokens)
    # the contrib pattern's step verdicts: its score requests, in order
    contrib_scores = [
        o.verdict.score if o.verdict is not None else None
        for r, o in zip(requests, outcomes, strict=True)
        if '"allowed_categories"' not in r.messages[0].content
    ]
    # the floor of the batch run (else of the first run, when batch mode is not available)
    batch_flags = next(m.flags for m in MODES if m.name == "batch_cache")
    floor_run = runs_by_flags.get(batch_flags) or next(iter(runs_by_flags.values()))
    step_tokens = step_text_tokens(runs, provider, model)
    if len(step_tokens) != len(measured_scores := step_scores(floor_run)):
        sys.exit(f"{judge}: {len(step_tokens)} step texts for {len(measured_scores)} steps")
    adapter_tokens = sum(
        len(json.dumps(json.loads(r.messages[0].content)["step"])) // CHARS_PER_TOKEN
        for r in requests
        if '"allowed_categories"' not in r.messages[0].content
    )
    floor = floor_figures(rates, floor_run["judge"], sum(step_tokens), adapter_tokens, contrib_usd)
    reported = {
        name: (
            figures(mode["usd"], steps, contrib_usd, mode["counters"]) if "usd" in mode else mode
        )
        for name, mode in modes.items()
    }
    measured = list(scores.values())
    best = min((m["usd"] for m in modes.values() if "usd" in m), default=None)
    batch = modes.get("batch_cache", {})
    return {
        "judge": judge,
        "priced_by": pricer.source,
        "rates_per_million": rates.__dict__,
        "modes": reported,
        # the dry run's bound (every answer at its full budget; categorizations in at_most)
        "dry_run_foretold": plan,
        "contrib_pattern": figures(
            contrib_usd,
            steps,
            None,
            {
                "calls": stats.calls,
                "input_tokens": stats.input_tokens,
                "output_tokens": stats.output_tokens,
            },
        ),
        "floor": floor,
        "step_scores_identical_across_modes": all(s == measured[0] for s in measured),
        "contrib_step_scores_identical": contrib_scores == measured[0],
        "cheapest_available_share_of_contrib": round(best / contrib_usd, 3) if best else None,
        "target_batch_cache_at_most_25pct": (
            batch["usd"] <= 0.25 * contrib_usd if "usd" in batch else "batch_cache not available"
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trajectories", type=int, default=200)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--judges", default="openai/gpt-5-mini,anthropic/claude-sonnet-4-5")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentjudge-bench-cost-") as tmp:
        folder = Path(tmp)
        runs = folder / "runs"
        runs.mkdir()
        sizes = []
        for index in range(args.trajectories):
            text = json.dumps(trajectory(index, args.steps))
            sizes.append(len(text))
            (runs / f"t{index:04d}.json").write_text(text)
        steps = args.trajectories * args.steps
        judges = [bench_judge(j, runs, folder, steps) for j in args.judges.split(",")]
    print(
        json.dumps(
            {
                "collection": {
                    "trajectories": args.trajectories,
                    "steps": steps,
                    "mean_trajectory_bytes": round(sum(sizes) / len(sizes)),
                },
                "judges": judges,
            }
        )
    )


if __name__ == "__main__":
    main()
