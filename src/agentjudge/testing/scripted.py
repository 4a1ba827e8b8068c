"""The scripted judge: the verdict the test judge server gives, decided by the request.

A marker `[[score=0.25]]` or `[[category=context_loss]]` in the last message decides the
verdict (the last marker counts: a step comes after its context), otherwise a hash of the
message does, so tests know the right answer. `[[fault=503]]` (or 429, 500, 529, drop,
hang, garbage) fails every request carrying it; `[[category_fault=...]]` only categorization
requests. Asked for several criteria, it answers `{"scores": ...}` (`[[score.NAME=X]]` sets
one); asked to derive criteria, it answers two (`[[rubric=bad]]` in the task gets an
unusable one). `[[samples=0.2,0.9,0.5]]` scripts repeated identical requests (a judge's
samples): the n-th arrival of the same request body gets the n-th value, cycling (the
last of it and `[[score=X]]` counts; arrivals are counted under the server's lock, so
concurrent samples get each value once a cycle, in whatever order). Asked for a run's
decisive step, it names the one a `[[decisive=N]]` marker says (`[[decisive=bad]]`: an
unusable answer), else the lowest-scoring step listed (the first of equals). Asked for JSON
under a schema, the verdict keeps only the schema's top-level properties, as a model held
to that schema would.

Told to answer as the eval-hub-contrib `atif` provider asks (`contrib=True`: a judge
endpoint that serves that provider's jobs), it scores a step in the shape that provider
asks of the job, whatever the request asks: `{"scores": ...}` for a custom rubric's
criteria, `{"score": x}` for every other job's (a reference, a built-in benchmark's
criteria, the default or derived ones). A request of another shape gets an answer it
cannot use.

Every API dialect reads its requests into a `Prompt`, so the verdict is the same whichever
API the server mimics.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentjudge.scoring.benchmarks import BENCHMARK_RUBRICS
from agentjudge.scoring.criteria import DEFAULT_RUBRIC

# 5xx and 429 answers; a dropped connection; an accepted request never answered; an answer
# whose headers come and whose body then dribbles; a redirect to another server; a 200 whose
# body is no answer of the API (cut-off JSON, or JSON of another shape: a broken proxy's)
Fault = Literal[
    "429", "500", "502", "503", "504", "529", "drop", "hang", "dribble", "redirect", "garbage"
]
# a 10 MB answer ("huge"), and a 200 of HTML (a proxy's error page) besides the rest
Malformed = Literal["non_json", "no_score", "out_of_range", "bool_score", "empty", "huge", "html"]

SCORE_MARKER = re.compile(r"\[\[score=([0-9.]+)\]\]")
CATEGORY_MARKER = re.compile(r"\[\[category=([a-z_]+)\]\]")
FAULT_MARKER = re.compile(
    r"\[\[(category_)?fault=(429|500|502|503|504|529|drop|hang|dribble|redirect|garbage)\]\]"
)
SAMPLES_MARKER = re.compile(r"\[\[samples=([0-9.]+(?:,[0-9.]+)*)\]\]")
DECISIVE_MARKER = re.compile(r"\[\[decisive=(\d+|bad)\]\]")
CRITERION_MARKER = re.compile(r"\[\[score\.([a-z_0-9]+)=([0-9.]+)\]\]")
ASKED_CRITERIA = re.compile(r'"([a-z_0-9]+)": <0\.0 to 1\.0>')
# a criterion as a step prompt's system message lists it, under its "Criteria" heading
LISTED_CRITERION = re.compile(r"^- ([a-z_0-9]+)(?: \(weight [^)]*\))?: ", re.MULTILINE)
# a case judge's prompt asks for a score "from 1 to N" (graph-agents-cli's wording)
ASKED_SCALE = re.compile(r"\bfrom 1 to (\d+(?:\.\d+)?)\b")
DERIVED = [
    {"name": "correctness", "description": "The step is right for the task.", "weight": 3},
    {"name": "efficiency", "description": "The step wastes no effort.", "weight": 1},
]
# The criteria of rubrics that are not custom ones: a built-in benchmark's (the contrib
# provider's names), the default rubric's and the ones this judge derives.
NOT_CUSTOM = frozenset(
    {
        *(frozenset(c.name for c in r.criteria) for r in BENCHMARK_RUBRICS.values()),
        frozenset(c.name for c in DEFAULT_RUBRIC.criteria),
        frozenset(str(c["name"]) for c in DERIVED),
    }
)


@dataclass(frozen=True)
class Prompt:
    """A chat request as the scripted judge reads it, whatever API it came in by."""

    # `{"role", "content"}` with text content, the system message first when there is one
    messages: list[dict[str, str]]
    model: str
    # the JSON schema the answer is held to, if any
    schema: dict[str, Any] | None = None

    @property
    def system(self) -> str:
        """The first message's text: the judge's instructions, when there are any."""
        return self.messages[0]["content"] if self.messages else ""

    @property
    def last(self) -> str:
        """The last message's text: the step being judged, with its markers."""
        return self.messages[-1]["content"] if self.messages else ""

    def tokens(self) -> int:
        """The prompt's size in tokens, estimated as four characters a token."""
        return max(1, sum(len(m["content"]) for m in self.messages) // 4)


@dataclass(frozen=True)
class Answer:
    """What the scripted judge says: the reply's text and, when it is one, its JSON object."""

    text: str
    verdict: dict[str, Any] | None
    outcome: str  # "ok", or the malformed answer given


def marked_fault(prompt: Prompt) -> Fault | None:
    """The fault a marker in the last message asks for: `[[fault=503]]` fails every such
    request, `[[category_fault=503]]` only categorization requests (their system message
    asks for a category)."""
    marker = FAULT_MARKER.search(prompt.last)
    if marker is None:
        return None
    if marker.group(1) and '"category"' not in prompt.system:
        return None
    return marker.group(2)  # type: ignore[return-value]


def expected_score(text: str, scale: float | None = None, arrival: int = 1) -> float:
    """The score the server gives the `arrival`-th request whose last message is `text`:
    its last marker (the step comes after its context), `[[score=X]]` or the arrival's
    value of `[[samples=...]]`, else a hash: in [0, 1], or a whole number in 1..`scale`
    for a judge that scores on such a scale."""
    marker = last_score_marker(text)
    if marker is not None and marker.re is SAMPLES_MARKER:
        values = marker.group(1).split(",")
        return float(values[(max(arrival, 1) - 1) % len(values)])
    if marker is not None:
        return float(marker.group(1))
    draw = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    if scale is not None:
        return float(1 + draw % max(1, int(scale)))
    return draw % 1001 / 1000


def last_score_marker(text: str) -> re.Match[str] | None:
    """The last `[[score=X]]` or `[[samples=...]]` marker in `text`, if any."""
    found = [m for pattern in (SCORE_MARKER, SAMPLES_MARKER) for m in pattern.finditer(text)]
    return max(found, key=lambda m: m.start(), default=None)


def asked_scale(prompt: Prompt) -> float | None:
    """The 1..N scale a case judge asks for: its schema's score enum, else its prompt's
    "from 1 to N"; None for a step judge (0 to 1)."""
    properties = (prompt.schema or {}).get("properties")
    score = properties.get("score") if isinstance(properties, dict) else None
    enum = score.get("enum") if isinstance(score, dict) else None
    if isinstance(enum, list) and enum and all(isinstance(v, int) for v in enum) and max(enum) > 1:
        return float(max(enum))
    asked = ASKED_SCALE.search(prompt.last)
    return float(asked.group(1)) if asked else None


def answer(
    prompt: Prompt,
    malformed: Malformed | None,
    scores: Mapping[str, float] | None = None,
    arrival: int = 1,
    contrib: bool = False,
) -> Answer:
    """The scripted reply to `prompt`, or the malformed one the script asks for; `scores`
    gives the score of a prompt holding one of its texts (when no marker says one);
    `arrival` counts the arrivals of this request body (for `[[samples=...]]`); `contrib`
    answers a step in the shape the contrib provider asks of its job (see
    `contrib_criteria`), not the one asked."""
    text = prompt.last
    system = prompt.system
    if '{"criteria": [' in system and malformed is None:
        # a request to derive criteria (auto scoring mode); `[[rubric=bad]]` gets a bad one
        criteria: Any = "not a list" if "[[rubric=bad]]" in text else DERIVED
        return _json(prompt, {"criteria": criteria}, "ok")
    if '"order": <' in system and malformed is None:
        return _json(prompt, decisive_pick(text), "ok")
    if malformed == "non_json":
        return Answer("I think this step is fine, maybe 0.7.", None, "non_json")
    if malformed == "empty":
        return Answer("", None, "empty")
    if malformed == "no_score":
        return _json(prompt, {"reasoning": "looks fine"}, "no_score")
    if malformed == "out_of_range":
        return _json(prompt, {"reasoning": "great", "score": 7}, "out_of_range")
    if malformed == "bool_score":
        return _json(prompt, {"reasoning": "yes", "score": True}, "bool_score")
    if malformed == "huge":
        return _json(prompt, {"reasoning": "x" * 10_000_000, "score": 0.5}, "huge")
    if malformed == "html":
        return Answer("<html><body><h1>502 Bad Gateway</h1></body></html>", None, "html")
    keyed = next((v for k, v in (scores or {}).items() if k in text), None)
    score = expected_score(text, asked_scale(prompt), arrival)
    if keyed is not None and last_score_marker(text) is None:
        score = keyed
    verdict: dict[str, Any] = {"reasoning": "scripted verdict", "score": score}
    if contrib:
        asked = contrib_criteria(prompt)
    else:
        asked = ASKED_CRITERIA.findall(system) if '"scores": {' in system else []
    if asked:
        # per-criterion scores: `[[score.NAME=X]]` markers, else the step's score
        marked = dict(CRITERION_MARKER.findall(text))
        scores = {n: float(marked[n]) if n in marked else verdict["score"] for n in asked}
        verdict = {"reasoning": "scripted verdict", "scores": scores}
    categories = CATEGORY_MARKER.findall(text)
    if categories:
        verdict.update(category=categories[-1], confidence=0.9, rationale="scripted category")
    return _json(prompt, verdict, "ok")


def contrib_criteria(prompt: Prompt) -> list[str]:
    """The criteria the eval-hub-contrib provider asks one score each of, for the job of a
    step request: a custom rubric's, that is every rubric but a reference job's (the step
    comes with a reference answer), a built-in benchmark's, the default one and those this
    judge derives. It asks one `score` of the others ([]); a request that is no step's
    (no criteria listed) gets [] too."""
    heading = next((h for h in ("\nCriteria (", "\nCriteria:") if h in prompt.system), None)
    if heading is None:
        return []
    section = prompt.system.partition(heading)[2].partition("\n\n")[0]
    listed = LISTED_CRITERION.findall(section)
    referenced = "<reference>" in prompt.last or "\nReference answer: " in prompt.last
    if not listed or referenced or frozenset(listed) in NOT_CUSTOM:
        return []
    return listed


def decisive_pick(text: str) -> dict[str, Any]:
    """The answer to a request naming a run's decisive step: its last `[[decisive=N]]`
    marker's N (`bad`: an order that is not a number), else the lowest-scoring listed step."""
    marked = DECISIVE_MARKER.findall(text)
    if marked:
        order: Any = "the worst one" if marked[-1] == "bad" else int(marked[-1])
        return {"reason": "scripted pick", "order": order}
    listed = []
    for line in text.partition("<steps>\n")[2].partition("\n</steps>")[0].splitlines():
        step = json.loads(line)
        listed.append((step["score"], step["order"]))
    lowest = min(listed, key=lambda pair: pair[0]) if listed else (None, 0)
    return {"reason": "scripted pick: the lowest score", "order": lowest[1]}


def held_to(schema: dict[str, Any] | None, verdict: dict[str, Any]) -> dict[str, Any]:
    """`verdict` as a model held to `schema` writes it: only the schema's top-level
    properties, in the schema's order (no schema, or one without properties: unchanged)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return verdict
    return {name: verdict[name] for name in properties if name in verdict}


def _json(prompt: Prompt, verdict: dict[str, Any], outcome: str) -> Answer:
    held = held_to(prompt.schema, verdict)
    return Answer(json.dumps(held), held, outcome)
