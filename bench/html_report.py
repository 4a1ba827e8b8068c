"""Benchmark: the HTML report of a 2,000-trajectory scoring run, opened in headless Chromium.

Scores N synthetic trajectories (every fifth with two subagents) with the real
`agentjudge score --judge fake --html`, then opens the page in Debian's chromium and times
from navigation to the marker the page sets once it has rendered (`body[data-rendered]`),
then the opening of a subagent tree and the showing of every row (500 at a time). Prints
one JSON line {trajectories, nodes, steps, html_bytes, score_seconds, render_seconds_first,
render_seconds (the slowest load), expand_seconds, show_all_rows_seconds}. Target:
render_seconds < 3 (issue: the HTML report).

    python bench/html_report.py [--trajectories 2000] [--steps 8] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


def trajectory(index: int, steps: int, refs: list[str]) -> dict[str, Any]:
    out: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": f"Task {index}"}]
    for step_id in range(2, steps + 1):
        call = f"c{step_id}"
        step: dict[str, Any] = {
            "step_id": step_id,
            "source": "agent",
            "message": f"Step {step_id} of task {index}: running the suite",
            "tool_calls": [{"tool_call_id": call, "function_name": "bash", "arguments": {}}],
            "observation": {"results": [{"source_call_id": call, "content": "3 failed"}]},
        }
        if step_id == 2 and refs:
            step["observation"]["results"][0]["subagent_trajectory_ref"] = [
                {"trajectory_path": ref} for ref in refs
            ]
        out.append(step)
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": f"s-{index}",
        "agent": {"name": "bench-agent", "version": "1", "model_name": "bench-model"},
        "steps": out,
    }


def write_inputs(folder: Path, count: int, steps: int) -> None:
    for index in range(count):
        run = folder / f"run-{index:05d}"
        run.mkdir(parents=True)
        refs = ["helper-a.json", "helper-b.json"] if index % 5 == 0 else []
        for ref in refs:
            (run / ref).write_text(json.dumps(trajectory(index, 3, [])))
        (run / "trajectory.json").write_text(json.dumps(trajectory(index, steps, refs)))


def render_seconds(page_url: str, runs: int) -> dict[str, float]:
    """Over `runs` fresh page loads: seconds to the rendered marker (the first load and the
    slowest), to open the first tree with subagents, and to show every row."""
    times: dict[str, list[float]] = {"render": [], "expand": [], "all_rows": []}
    executable = shutil.which("chromium")
    if executable is None:
        sys.exit("chromium is not installed: apt-get install chromium (make test does it)")
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=executable, headless=True, args=CHROMIUM_FLAGS
        )
        try:
            for _ in range(runs):
                page = context.new_page()
                start = time.perf_counter()
                page.goto(page_url)
                page.wait_for_selector("body[data-rendered]", timeout=30_000)
                times["render"].append(time.perf_counter() - start)
                start = time.perf_counter()
                page.click('tr[data-root="0"]')
                page.wait_for_selector('tr[data-detail-for="0"] .node[data-depth="1"]')
                times["expand"].append(time.perf_counter() - start)
                start = time.perf_counter()
                while page.locator("#roots .more button").count():  # 500 rows at a time
                    page.click("#roots .more button")
                times["all_rows"].append(time.perf_counter() - start)
                page.close()
        finally:
            context.close()
    return {
        "render_seconds_first": round(times["render"][0], 3),
        "render_seconds": round(max(times["render"]), 3),
        "expand_seconds": round(max(times["expand"]), 3),
        "show_all_rows_seconds": round(max(times["all_rows"]), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trajectories", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder / "runs", args.trajectories, args.steps)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "agentjudge", "score", str(folder / "runs"), "--judge",
             "fake", "--no-cache", "--quiet", "-o", str(folder / "results.json"),
             "--html", str(folder / "report.html")],
            capture_output=True, text=True,
        )  # fmt: skip
        score_seconds = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"agentjudge score exited {done.returncode}: {done.stderr[-2000:]}")
        results = json.loads((folder / "results.json").read_text())
        nodes = [n for tree in results["trajectories"] for n in tree["nodes"]]
        page = folder / "report.html"
        summary = {
            "trajectories": len(results["trajectories"]),
            "nodes": len(nodes),
            "steps": sum(len(n["steps"]) for n in nodes),
            "html_bytes": page.stat().st_size,
            "score_seconds": round(score_seconds, 2),
        }
        print(json.dumps(summary | render_seconds(page.as_uri(), args.runs)))


if __name__ == "__main__":
    main()
