"""The console view of a calibration report (`agentjudge calibrate`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from agentjudge.printable import printable
from agentjudge.report.cost import cost_text

# the figures in the order the table lists them, and the counts each is shown with
_ROWS = {
    "step_accuracy": ("agree", "steps"),
    "kappa": (None, "steps"),
    "category_macro_f1": (None, "steps"),
    "decisive_step_accuracy": ("correct", "labelled"),
    "agent_accuracy": ("correct", "labelled"),
    "outcome_accuracy": ("correct", "labelled"),
}


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def figure_row(name: str, figure: dict[str, Any]) -> tuple[str, str, str, str]:
    """One figure as the table shows it: name, value, 95% interval, the counts behind it."""
    hits, total = _ROWS[name]
    interval = figure["interval"]
    shown = "-" if interval is None else f"{_number(interval[0])} to {_number(interval[1])}"
    counts = f"{figure[hits]} / {figure[total]}" if hits else f"n={figure[total]}"
    if figure.get("no_prediction"):
        counts += f" ({figure['no_prediction']} without a prediction)"
    return name, _number(figure["value"]), shown, counts


def calibration_table(document: dict[str, Any], console: Console) -> None:
    """The figures, the per-category scores that were labelled or judged, and the judge."""
    table = Table(title="agentjudge calibrate")
    for column in ("figure", "value", "95% interval", "counts"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for name in _ROWS:
        table.add_row(*figure_row(name, document["figures"][name]))
    for name, scores in document["categories"].items():
        if scores["true_positives"] + scores["false_positives"] + scores["false_negatives"]:
            table.add_row(
                f"  {name} P / R / F1",
                " / ".join(_number(scores[k]) for k in ("precision", "recall", "f1")),
                "",
                f"tp {scores['true_positives']} fp {scores['false_positives']} "
                f"fn {scores['false_negatives']}",
            )
    console.print(table)
    usage = document["judge_usage"]
    console.print(
        f"{document['trajectories']} labelled trajectories, {document['unscored_steps']} "
        f"labelled steps without a score; judge {document['judge']}: {usage['calls']} calls "
        f"({usage['cache_hits']} from the verdict store)",
        markup=False,
        highlight=False,
    )
    if (cost := document.get("judge_cost")) is not None:
        console.print(printable(f"judge cost: {cost_text(cost)}"), markup=False, highlight=False)
    if document["judge_notice"]:
        console.print(f"note: {document['judge_notice']}", markup=False, highlight=False)


def review_table(document: dict[str, Any], console: Console) -> None:
    """A review's calibration (`calibrate --labels`): per reviewer, the judge's figures
    weighted over the parts of the review order and the labels per part; then each pair of
    reviewers' agreement."""
    for review in document["reviewers"]:
        table = Table(title=f"agentjudge calibrate: {review['reviewer']}'s labels")
        for column in ("figure", "value", "95% interval", "counts"):
            table.add_column(column, justify="left" if column == "figure" else "right")
        for name in _ROWS:
            if name in review["figures"]:
                table.add_row(*figure_row(name, review["figures"][name]))
        console.print(table)
        parts = ", ".join(
            f"{part} {counts['labelled']} of {counts['items']}"
            for part, counts in review["parts"].items()
        )
        covered = review["covered"]
        console.print(
            f"labels by part of the order: {parts}; the figures stand for "
            f"{'-' if covered is None else f'{covered:.0%}'} of the scored items",
            markup=False,
            highlight=False,
        )
        if review["stale"]:
            console.print(
                f"{len(review['stale'])} labels name items the results no longer have "
                f"(left out): {', '.join(review['stale'][:5])}",
                markup=False,
                highlight=False,
            )
    for pair in document["agreement"]:
        kappa = pair["kappa"]
        interval = kappa["interval"]
        shown = "-" if interval is None else f"{_number(interval[0])} to {_number(interval[1])}"
        console.print(
            f"{' and '.join(pair['reviewers'])}: kappa {_number(kappa['value'])} ({shown}) on "
            f"{pair['both_labelled']} items both labelled",
            markup=False,
            highlight=False,
        )
