"""Benchmark: does a judge find where labelled fixture runs went wrong, and which failed?

Over the runs of `tests/fixtures/traces/labels.json` (real frameworks' runs, each labelled
pass/fail in its PROVENANCE, a failed one with the agent step that made it fail; see
tests/fixtures/PROVENANCE.md), scores them in one `agentjudge score` with the given judge
(`--judge local`, the embedded one, by default; `--judge-url`/`--judge-model` for any other)
and `decisive_roots=all`, so every run names a decisive step whatever its verdict, as
`calibrate` does: the labels, not the judge, say which runs failed. `--formats`,
`--producers` and `--runs` (comma-separated) keep some runs only; `--cache PATH` keeps the
verdicts between invocations, so a set measured in parts (one format after another) is
judged once and its figures come from one last invocation over all of it.

Prints one JSON document (also to `--out`): per group (`all`, `format:<f>`,
`producer:<format>/<producer>`), four fractions, each `{hits, of, value, interval}` (a 95%
bootstrap interval, `trust.intervals.rate_interval`, null with no run): `decisive_step` (failed runs
with a labelled step whose decisive step is that step of that agent), `decisive_agent` (the
same, the agent only), `pass_kept` (passed runs that pass), `fail_caught` (failed runs that
do not pass); and per run what the judge said, with the score of each step an agent took.
A run the judge could not score counts as a miss in every fraction it belongs to. With the
embedded judge each step is a call of 5 s to minutes on 2 shared cores (the longer the
step's prompt, the longer): the 3 ATIF 1.8 runs (`--formats atif`) take minutes, all 48
runs (360 steps) hours.

    python bench/decisive_labelled.py [--formats atif] [--runs RUN,...] [--cache verdicts.sqlite]
        [--judge local | --judge-url URL]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentjudge.trust.intervals import Bootstrap, rate_interval
from common import measure

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "fixtures" / "traces" / "labels.json"


def chosen(
    labels: list[dict[str, Any]], formats: str, producers: str, runs: str = ""
) -> list[dict[str, Any]]:
    """The labelled runs of the named formats, producers and runs (all when none is named)."""
    keep_formats = {f for f in formats.split(",") if f}
    keep_producers = {p for p in producers.split(",") if p}
    keep_runs = {r for r in runs.split(",") if r}
    return [
        label
        for label in labels
        if (not keep_formats or label["format"] in keep_formats)
        and (not keep_producers or label["producer"] in keep_producers)
        and (not keep_runs or label["run"] in keep_runs)
    ]


def tree_of(run: str, trees: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The results' tree of a labelled run (a file, or a folder of one run's files)."""
    found = [
        tree
        for tree in trees
        if any(tree["nodes"][0]["file"].startswith(run + end) for end in ("", "/", ":"))
    ]
    return found[0] if len(found) == 1 else None


def outcome(label: dict[str, Any], tree: dict[str, Any] | None) -> dict[str, Any]:
    """What the judge said of one labelled run, beside its label."""
    root = tree["nodes"][0] if tree else None
    scored = root is not None and root["status"] == "scored"
    failure = tree["decisive_failure"] if tree else None
    wanted = label["failing_step"]
    named = None if failure is None else {"agent": failure["agent"], "step_id": failure["step_id"]}
    said: dict[str, Any] = {
        "run": label["run"],
        "format": label["format"],
        "producer": label["producer"],
        "label": label["outcome"],
        "scored": scored,
        "passed": bool(scored and root and root["passed"]),
        "score": root["aggregate"] if root else None,
        "labelled_step": None if wanted is None else {k: wanted[k] for k in ("agent", "step_id")},
        "decisive": named,
        "decisive_absent": tree.get("decisive_absent") if tree else None,
        "agent_steps": agent_steps(tree) if tree else [],
    }
    said["agent_hit"] = bool(wanted and named and named["agent"] == wanted["agent"])
    said["step_hit"] = bool(said["agent_hit"] and named and named["step_id"] == wanted["step_id"])
    return said


def agent_steps(tree: dict[str, Any]) -> list[dict[str, Any]]:
    """The score of each step an agent took, by node (its agent's name) and step id: what
    the decisive step was chosen from, to see why the labelled one was or was not."""
    return [
        {"node": node["agent"]["name"], "step_id": step["step_id"], "score": step["score"]}
        for node in tree["nodes"]
        for step in node["steps"]
        if step["source"] == "agent"
    ]


def fraction(hits: int, of: int) -> dict[str, Any]:
    bounds = rate_interval(hits, of, Bootstrap()) if of else None
    return {
        "hits": hits,
        "of": of,
        "value": round(hits / of, 4) if of else None,
        "interval": None if bounds is None else [round(bounds[0], 4), round(bounds[1], 4)],
    }


def figures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The four fractions over `runs` (see the module's docstring)."""
    located = [r for r in runs if r["labelled_step"] is not None]
    passed = [r for r in runs if r["label"] == "pass"]
    failed = [r for r in runs if r["label"] == "fail"]
    return {
        "runs": len(runs),
        "decisive_step": fraction(sum(r["step_hit"] for r in located), len(located)),
        "decisive_agent": fraction(sum(r["agent_hit"] for r in located), len(located)),
        "pass_kept": fraction(sum(r["scored"] and r["passed"] for r in passed), len(passed)),
        "fail_caught": fraction(sum(r["scored"] and not r["passed"] for r in failed), len(failed)),
    }


def grouped(runs: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {"all": runs}
    for run in runs:
        groups.setdefault(f"format:{run['format']}", []).append(run)
        # one producer's runs in two formats (openai-agents: OpenInference and OTLP GenAI) are
        # two instrumentations, measured apart
        groups.setdefault(f"producer:{run['format']}/{run['producer']}", []).append(run)
    return {name: figures(members) for name, members in groups.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--formats", default="", help="e.g. atif,claude-code (default: all)")
    parser.add_argument("--producers", default="", help="e.g. terminus-2 (default: all)")
    parser.add_argument("--runs", default="", help="labels.json run names (default: all)")
    parser.add_argument(
        "--cache",
        type=Path,
        help="verdict store kept between invocations, so runs measured in parts are not "
        "judged again (default: a fresh one)",
    )
    parser.add_argument("--judge", default="local")
    parser.add_argument("--judge-url")
    parser.add_argument("--judge-model")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    labels = chosen(
        json.loads(args.labels.read_text())["runs"], args.formats, args.producers, args.runs
    )
    if not labels:
        sys.exit(f"{args.labels}: no labelled run matches --formats, --producers and --runs")
    folder = args.labels.parent
    with tempfile.TemporaryDirectory(prefix="decisive-labelled-") as scratch:
        out = Path(scratch) / "out.json"
        command = [
            sys.executable, "-m", "agentjudge", "score", *(str(folder / x["run"]) for x in labels),
            "-o", str(out), "--quiet", "--judge", args.judge,
            "--set", "decisive_roots=all", "--set", "partial_result_policy=skip_failed_trajectory",
            "--cache", str(args.cache or Path(scratch) / "verdicts.sqlite"),
        ]  # fmt: skip
        for flag, value in (("--judge-url", args.judge_url), ("--judge-model", args.judge_model)):
            if value:
                command += [flag, value]
        done = measure(command)
        if not out.is_file():
            sys.exit(f"score wrote no results ({done.returncode}): {done.tail()}")
        results = json.loads(out.read_text())
    trees = results["trajectories"]
    runs = [outcome(label, tree_of(str(folder / label["run"]), trees)) for label in labels]
    document = {
        "labels": os.path.relpath(args.labels, ROOT),
        "judge": results["run_parameters"]["atif_judge"],
        "decisive_rule": results["run_parameters"]["decisive_rule"],
        "failure_threshold": results["run_parameters"]["failure_threshold"],
        "completion_threshold": results["run_parameters"]["completion_threshold"],
        "score_exit_code": done.returncode,
        "seconds": round(done.seconds, 1),
        "calls": results["judge"]["calls"],
        "figures": grouped(runs),
        "runs": runs,
    }
    text = json.dumps(document, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
