"""`agentjudge calibrate`: score a labelled set and say how well the judge agrees with the
labels (docs/calibration.md)."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agentjudge.cli.aliases import accepting, flag_of
from agentjudge.cli.options import (
    CALIBRATE_ALIASES,
    Batch,
    CachePath,
    CalibrateJson,
    CalibrateOutput,
    CalibrateScoreOutput,
    ConfigFile,
    HelpConfig,
    Judge,
    JudgeTemperature,
    JudgeUrl,
    LabelsFile,
    MaxCost,
    MinKappa,
    NoCache,
    PriceCacheRead,
    PriceCacheWrite,
    PriceIn,
    PriceOut,
    ReviewLabelsFiles,
    Rubric,
    Samples,
    ScoreConcurrency,
    ScoreJudgeCallTimeout,
    ScoreJudgeModel,
    ScoreJudgeTimeout,
    ScoreQuiet,
    ScoringMode,
    Settings,
    one_store_choice,
)
from agentjudge.cli.score import judge_flags, price_flags
from agentjudge.cli.settings import command_line_config
from agentjudge.collisions import Named
from agentjudge.errors import EXIT_INVALID, EXIT_JOB_FAILED, EXIT_OK, UsageError
from agentjudge.files import check_writable, write_atomic
from agentjudge.printable import printable
from agentjudge.scoring.config import ScoreConfig

if TYPE_CHECKING:
    from agentjudge.atif import Node
    from agentjudge.calibration.labels import LabelSet
    from agentjudge.judge.client import JudgeClient


@accepting(CALIBRATE_ALIASES)
def calibrate_command(
    labels: LabelsFile,
    review_labels: ReviewLabelsFiles = None,
    config_file: ConfigFile = None,
    settings: Settings = None,
    help_config: HelpConfig = False,
    as_json: CalibrateJson = False,
    output: CalibrateOutput = None,
    score_output: CalibrateScoreOutput = None,
    min_kappa: MinKappa = None,
    judge: Judge = None,
    judge_model: ScoreJudgeModel = None,
    judge_url: JudgeUrl = None,
    concurrency: ScoreConcurrency = None,
    judge_call_timeout: ScoreJudgeCallTimeout = None,
    judge_timeout: ScoreJudgeTimeout = None,
    cache_path: CachePath = None,
    no_cache: NoCache = False,
    batch: Batch = False,
    scoring_mode: ScoringMode = None,
    rubric: Rubric = None,
    samples: Samples = None,
    temperature: JudgeTemperature = None,
    price_in: PriceIn = None,
    price_cache_read: PriceCacheRead = None,
    price_cache_write: PriceCacheWrite = None,
    price_out: PriceOut = None,
    max_cost: MaxCost = None,
    quiet: ScoreQuiet = False,
    aliased: dict[str, str] | None = None,  # the old flags given (see cli/aliases.py)
) -> int:
    """Score the trajectories of a labels file (as `score` would, with its judge flags,
    --config and --set) and report the judge's agreement with the labels: step pass/fail
    accuracy and Cohen's kappa, category precision/recall/F1, decisive-step and agent
    accuracy, each with a 95% bootstrap interval over trajectories.

    With --labels FILE (labels `agentjudge review` wrote), the argument is the results
    file they were made on: the same figures from its verdicts, with no judge call, each
    part of the review's order weighted by its size; two files give the reviewers'
    agreement too.

    Exit 0: done; 1: kappa below --min-kappa (or undefined); 2: the scoring job failed;
    3: usage or configuration error (a bad labels file, say).
    """
    one_store_choice(cache_path, no_cache)
    flags: dict[str, tuple[str, Any]] = {
        **judge_flags(
            judge,
            judge_model,
            judge_url,
            concurrency,
            judge_call_timeout,
            judge_timeout,
            cache_path,
            no_cache,
        ),
        "batch": ("--batch", True if batch else None),
        "scoring_mode": ("--scoring-mode", scoring_mode),
        "rubric": ("--rubric", rubric),
        "samples": ("--samples", samples),
        "judge_temperature": ("--temperature", temperature),
        **price_flags(price_in, price_cache_read, price_cache_write, price_out, max_cost),
    }
    old = {key: (flag_of(CALIBRATE_ALIASES, key), value) for key, value in (aliased or {}).items()}
    if review_labels:
        scoring = [flag for flag, value in [*flags.values(), *old.values()] if value]
        scoring += [f for f, v in _scoring_only(config_file, settings, score_output) if v]
        if scoring:
            raise UsageError(
                f"{scoring[0]}: calibrate --labels makes no judge call (the figures come from "
                "the results' verdicts); drop it"
            )
        inputs = [labels.resolve(), *(path.resolve() for path in review_labels)]
        if output is not None and output.resolve() in inputs:
            raise UsageError(f"--output: {output} is a file calibrate reads; name another")
        return _report(_from_review(labels, review_labels), as_json, output, min_kappa, quiet)
    from agentjudge.calibration.labels import load_labels, trajectory_file

    label_set = load_labels(labels)
    if output is not None:
        check_writable(output, "--output", "the calibration report")
    paths = [str(trajectory_file(labels, name)) for name in label_set.trajectories]
    with tempfile.TemporaryDirectory(prefix="agentjudge-calibrate-") as scratch:
        results = score_output or Path(scratch) / "score-results.json"
        flags["trajectory_path"] = ("the labels file", paths)
        flags["output"] = ("--score-output", str(results))
        # every labelled run gets a decisive step, also one the judge passed: the labels,
        # not the judge, say which runs failed
        flags["decisive_roots"] = ("calibrate", "all")
        config = command_line_config(config_file, flags, settings or [], old)
        reads = [Named("the labels file", labels)]
        if config_file is not None:
            reads.append(Named("the config file", config_file))
        writes = [Named("--output", output)] if output is not None else []
        document = run_calibration(config, label_set, labels, quiet, (reads, writes))
    if document is None:
        return EXIT_JOB_FAILED
    document["score_results"] = str(score_output) if score_output else None
    if output is not None:
        write_atomic(output, document, indent=2, what="the calibration report")
    if as_json:
        typer.echo(json.dumps(document))
    else:
        from agentjudge.report.calibration import calibration_table

        calibration_table(document, Console(soft_wrap=True))
    return _exit_code(document, min_kappa, quiet)


def _scoring_only(
    config_file: Path | None, settings: list[str] | None, score_output: Path | None
) -> list[tuple[str, object]]:
    return [
        ("--config", config_file),
        ("--set", settings),
        ("--score-output", score_output),
    ]


def _from_review(results: Path, files: list[Path]) -> dict[str, Any]:
    """The review report of `results` and the review labels `files` (each made on it)."""
    from agentjudge.review.agreement import Review, review_calibration
    from agentjudge.review.items import load_items
    from agentjudge.review.labels import LabelBook

    if len(set(files)) != len(files):
        raise UsageError("--labels: the same file twice; give each reviewer's file once")
    items, digest = load_items(results)
    reviews = []
    for path in files:
        book = LabelBook.read(path, results_path=results, results_sha256=digest)
        reviews.append(Review(str(path), book.reviewer, book.labels()))
    return review_calibration(str(results), digest, items, reviews)


def _report(
    document: dict[str, Any],
    as_json: bool,
    output: Path | None,
    min_kappa: float | None,
    quiet: bool,
) -> int:
    """Write, print and judge a review report as the scoring form does its own."""
    if output is not None:
        check_writable(output, "--output", "the calibration report")
        write_atomic(output, document, indent=2, what="the calibration report")
    if as_json:
        typer.echo(json.dumps(document))
    else:
        from agentjudge.report.calibration import review_table

        review_table(document, Console(soft_wrap=True))
    kappas = [r["figures"]["kappa"]["value"] for r in document["reviewers"]]
    if min_kappa is None or all(k is not None and k >= min_kappa for k in kappas):
        return EXIT_OK
    if not quiet:
        shown = ", ".join("undefined" if k is None else f"{k:.4f}" for k in kappas)
        typer.echo(f"kappa {shown} is below --min-kappa {min_kappa:g}", err=True)
    return EXIT_INVALID


def run_calibration(
    config: ScoreConfig,
    labels: LabelSet,
    labels_path: Path,
    quiet: bool,
    paths: tuple[Sequence[Named], Sequence[Named]] = ((), ()),
) -> dict[str, Any] | None:
    """Score the labelled trajectories and measure the judge against the labels; None (the
    error said on stderr) when the scoring job failed. `paths`: the files calibrate itself
    reads and writes, which must not collide with the job's (see `check_score_paths`)."""
    from agentjudge.api import score_trajectories
    from agentjudge.calibration.figures import calibration_document
    from agentjudge.calibration.matching import agreements

    console = Console(stderr=True, soft_wrap=True)
    bar = Progress(
        TextColumn("scoring the labelled set"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("steps"),
        TimeRemainingColumn(),
        console=console,
        disable=quiet or not sys.stderr.isatty(),
        transient=True,
    )

    def progress(roots: list[Node], total: int, client: JudgeClient) -> Callable[[int], None]:
        task = bar.add_task("steps", total=total)
        return lambda steps: bar.update(task, advance=steps)

    def note(text: str) -> None:
        if not quiet:
            console.print(f"[yellow]note:[/yellow] {escape(printable(text))}", highlight=False)

    with bar:
        reads, writes = paths
        run = score_trajectories(
            config, progress=progress, on_note=note, reads=reads, writes=writes
        )
    scored = run.document
    if (error := scored["error"]) is not None:  # the job failed
        console.print(
            printable(f"error: the scoring job failed: {error['type']}: {error['message']}"),
            markup=False,
            highlight=False,
        )
        return None
    items = agreements(labels, labels_path, scored, config.failure_threshold)
    judge = scored["judge"]
    return {
        **calibration_document(items),
        "labels": str(labels_path),
        "judge": scored["run_parameters"]["atif_judge"],
        "judge_notice": scored["run_metadata"]["judge_notice"],
        "prompt_version": scored["run_parameters"]["atif_prompt_version"],
        "failure_threshold": config.failure_threshold,
        "judge_usage": {
            "calls": judge["calls"],
            "cache_hits": judge["cache_hits"],
            "input_tokens": judge["input_tokens"],
            "output_tokens": judge["output_tokens"],
            "cache_read_tokens": judge.get("cache_read_tokens", 0),
            "cache_write_tokens": judge.get("cache_write_tokens", 0),
            "reasoning_tokens": judge.get("reasoning_tokens", 0),
        },
        "judge_cost": judge.get("cost"),
    }


def _exit_code(document: dict[str, Any], min_kappa: float | None, quiet: bool) -> int:
    """1 when --min-kappa is given and kappa is below it or undefined; else 0."""
    if min_kappa is None:
        return EXIT_OK
    kappa = document["figures"]["kappa"]["value"]
    if kappa is not None and kappa >= min_kappa:
        return EXIT_OK
    if not quiet:
        shown = "undefined" if kappa is None else f"{kappa:.4f}"
        typer.echo(f"kappa {shown} is below --min-kappa {min_kappa:g}", err=True)
    return EXIT_INVALID
