"""Built-in rubrics for well-known agent benchmarks (`scoring_mode: benchmark`).

The names are the eval-hub-contrib `atif` provider's (`benchmark_name` and the criteria of
each), so its jobs run unchanged; the descriptions are our own. The registry is versioned:
`BENCHMARK_REGISTRY_VERSION` goes into every result scored with one of these rubrics, and
changes whenever a description or weight does.
"""

from __future__ import annotations

from agentjudge.scoring.criteria import Criterion, Rubric

BENCHMARK_REGISTRY_VERSION = "agentjudge-benchmarks-v1"


def _rubric(name: str, *criteria: tuple[str, str]) -> Rubric:
    return Rubric(
        name=name,
        criteria=tuple(Criterion(name=c, description=d) for c, d in criteria),
    )


BENCHMARK_RUBRICS: dict[str, Rubric] = {
    rubric.name: rubric
    for rubric in (
        _rubric(
            "swe-bench-lite",
            (
                "task_correctness",
                "The step moves the repository toward a fix of the reported issue: it finds "
                "the code at fault, changes what the issue is about, and does not treat a "
                "symptom as the cause.",
            ),
            (
                "patch_quality",
                "Edits made or planned in this step are small, idiomatic for the codebase and "
                "focused on the issue; no unrelated rewrites, debug leftovers or hard-coded "
                "special cases to get a test through.",
            ),
            (
                "regression_safety",
                "The step keeps existing behaviour working: it runs or reads the relevant "
                "tests, considers callers of what it changes, and does not delete or weaken "
                "tests to make them pass.",
            ),
        ),
        _rubric(
            "terminal-bench",
            (
                "task_completion",
                "The step brings the terminal task closer to done as specified: the right "
                "files, services or outputs end up in the required state.",
            ),
            (
                "tool_effectiveness",
                "Commands are well chosen and well formed for the goal: sensible flags, "
                "output read and acted on, errors noticed rather than ignored, no aimless "
                "repetition.",
            ),
            (
                "environment_safety",
                "The step leaves the environment sound: no destructive commands beyond the "
                "task, no secrets exposed, no system-wide changes the task did not ask for.",
            ),
        ),
        _rubric(
            "humaneval",
            (
                "functional_correctness",
                "Code written or run in this step computes what the function's docstring "
                "asks, including its edge cases, for every input the specification allows.",
            ),
            (
                "reasoning_quality",
                "The reasoning behind the step follows from the specification and the "
                "evidence so far (examples, test output) and supports the action taken.",
            ),
            (
                "code_quality",
                "The code is clear and simple: readable names, no needless complexity, no "
                "dead code, and it stays within the requested signature.",
            ),
        ),
    )
}
