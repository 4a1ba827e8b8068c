"""The judge measured against a review's labels, and two reviewers against each other, with
no judge call: the results' verdicts beside the labels (pure: items and labels in, a
document out; docs/calibration.md, "Labels from a review").

A review labels the parts of its order (review/order.py) unevenly: the hard parts first,
then a uniform random sample of the rest. A figure over all labels would describe the hard
cases, not the results. So each label counts for the items of its part it stands for: a
part of N scored items of which n are labelled weighs each label N / n (inside a part the
order is a seeded shuffle, so its labels are a uniform sample of it). Parts with no label
are left out, and `covered` says what share of the scored items the figures stand for."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentjudge.calibration.figures import CALIBRATION_SCHEMA, LEVEL, RESAMPLES, SEED
from agentjudge.calibration.labels import PARTS, Part
from agentjudge.judge.taxonomy import FAILURES, NO_FAILURE
from agentjudge.review.items import ReviewItem
from agentjudge.review.labels import ReviewLabel
from agentjudge.review.order import part_of
from agentjudge.trust.agreement import accuracy, cohen_kappa
from agentjudge.trust.bootstrap import bootstrap_interval

# the judge's answer on an item: (part, labelled, judged)
Pass = tuple[Part, bool, bool]
Category = tuple[Part, str, str]


@dataclass
class Unit:
    """One root (a trajectory, or a case): what is resampled for an interval, since the
    steps of one run are not independent."""

    root: str
    passes: list[Pass] = field(default_factory=list)
    categories: list[Category] = field(default_factory=list)
    decisive_step: bool | None = None  # None: nothing to compare on this root
    decisive_agent: bool | None = None
    predicted: bool = False  # the results name a decisive step for this root


def judge_agreement(
    items: Sequence[ReviewItem], labels: Mapping[str, ReviewLabel]
) -> dict[str, Any]:
    """The judge against one reviewer's `labels` on `items` (the results' items): the
    weighted figures with bootstrap intervals over roots, the unweighted ones beside them,
    the counts per part, and the labels the results no longer have."""
    scored = [item for item in items if item.score is not None]
    population = Counter(part_of(item) for item in scored)
    units = _units(items, labels)
    by_key = {item.key: item for item in items}
    labelled = [labels[key] for key in labels if key in by_key]
    weighted: dict[str, Callable[[Sequence[Unit]], float | None]] = {
        "step_accuracy": lambda u: _weighted_accuracy(u, population),
        "kappa": lambda u: _weighted_kappa(u, population),
        "category_macro_f1": lambda u: _weighted_f1(u, population),
    }
    passes = [p for unit in units for p in unit.passes]
    categories = [c for unit in units for c in unit.categories]
    figures: dict[str, dict[str, Any]] = {}
    for name, statistic in weighted.items():
        figures[name] = {"value": statistic(units), "interval": _interval(units, statistic)}
    figures["step_accuracy"] |= {
        "unweighted": accuracy([(label, judged) for _, label, judged in passes]),
        "steps": len(passes),
        "agree": sum(1 for _, label, judged in passes if label == judged),
    }
    figures["kappa"] |= {
        "unweighted": cohen_kappa([(label, judged) for _, label, judged in passes]),
        "steps": len(passes),
        **_confusion(passes),
    }
    figures["category_macro_f1"] |= {
        "unweighted": _weighted_f1(units, None),
        "steps": len(categories),
    }
    for name in ("decisive_step", "decisive_agent"):
        marks = [getattr(unit, name) for unit in units if getattr(unit, name) is not None]
        figures[f"{name.replace('decisive_agent', 'agent')}_accuracy"] = {
            "value": sum(marks) / len(marks) if marks else None,
            "interval": _interval(units, _hits(name)),
            "labelled": len(marks),
            "correct": sum(marks),
            "no_prediction": sum(
                1 for unit in units if getattr(unit, name) is not None and not unit.predicted
            ),
        }
    return {
        "items": len(items),
        "labels": len(labels),
        "unscored": sum(1 for label in labelled if by_key[label.key].score is None),
        "stale": [key for key in labels if key not in by_key],
        "covered": _covered(passes, population),
        "parts": {
            part: {
                "items": population[part],
                "labelled": sum(1 for label in labelled if label.part == part),
                "compared": sum(1 for p in passes if p[0] == part),
                "weight": _weight(part, passes, population),
            }
            for part in PARTS
        },
        "figures": figures,
        "categories": _category_scores(units, population),
    }


def step_accuracy(
    items: Sequence[ReviewItem], labels: Mapping[str, ReviewLabel]
) -> tuple[float | None, list[float] | None, float | None]:
    """The weighted step accuracy alone (as `judge_agreement` gives it): value, interval,
    and the share of scored items it stands for (`covered`). For benchmarks that ask it
    after every label."""
    population = Counter(part_of(item) for item in items if item.score is not None)
    units = _units(items, labels)
    passes = [p for unit in units for p in unit.passes]

    def statistic(sample: Sequence[Unit]) -> float | None:
        return _weighted_accuracy(sample, population)

    return statistic(units), _interval(units, statistic), _covered(passes, population)


def reviewer_agreement(
    items: Sequence[ReviewItem],
    first: Mapping[str, ReviewLabel],
    second: Mapping[str, ReviewLabel],
) -> dict[str, Any]:
    """Two reviewers on the same results: Cohen's kappa of their pass/fail on the items both
    labelled (interval: bootstrap over roots), and how often they agree, on pass/fail and on
    the category."""
    roots: dict[str, list[tuple[bool, bool]]] = {}
    categories = []
    for item in items:
        a, b = first.get(item.key), second.get(item.key)
        if a is None or b is None:
            continue
        said_a, said_b = human_pass(item, a), human_pass(item, b)
        if said_a is not None and said_b is not None:
            roots.setdefault(item.root, []).append((said_a, said_b))
        if a.category is not None and b.category is not None:
            categories.append(a.category == b.category)
    groups = list(roots.values())

    def kappa(sample: Sequence[list[tuple[bool, bool]]]) -> float | None:
        return cohen_kappa([pair for group in sample for pair in group])

    pairs = [pair for group in groups for pair in group]
    return {
        "both_labelled": len(pairs),
        "kappa": {
            "value": kappa(groups),
            "interval": _rounded(
                bootstrap_interval(groups, kappa, seed=SEED, resamples=RESAMPLES, level=LEVEL)
            ),
        },
        "pass_agreement": accuracy(pairs),
        "category_agreement": sum(categories) / len(categories) if categories else None,
        "both_categorized": len(categories),
    }


@dataclass(frozen=True, slots=True)
class Review:
    """One reviewer's labels file, read."""

    path: str
    reviewer: str
    labels: Mapping[str, ReviewLabel]


def review_calibration(
    results: str, results_sha256: str, items: Sequence[ReviewItem], reviews: Sequence[Review]
) -> dict[str, Any]:
    """The report of `calibrate --labels`: per reviewer, the judge against their labels;
    per pair of reviewers, their agreement."""
    return {
        "schema": CALIBRATION_SCHEMA,
        "from": "review",
        "results": results,
        "results_sha256": results_sha256,
        "interval": {"level": LEVEL, "resamples": RESAMPLES, "seed": SEED, "over": "roots"},
        "reviewers": [
            {"labels": r.path, "reviewer": r.reviewer, **judge_agreement(items, r.labels)}
            for r in reviews
        ],
        "agreement": [
            {
                "reviewers": [a.reviewer, b.reviewer],
                "labels": [a.path, b.path],
                **reviewer_agreement(items, a.labels, b.labels),
            }
            for index, a in enumerate(reviews)
            for b in reviews[index + 1 :]
        ],
    }


def human_pass(item: ReviewItem, label: ReviewLabel) -> bool | None:
    """What the reviewer said of pass/fail: their y/n, else their score held to the item's
    threshold as the judge's is (a score on the judge's scale says pass or fail too)."""
    if label.passed is not None:
        return label.passed
    return None if label.score is None else label.score >= item.threshold


def _units(items: Sequence[ReviewItem], labels: Mapping[str, ReviewLabel]) -> list[Unit]:
    """Per root with a label on a scored item: the (part, label, judge) pairs, and whether
    the judge's decisive step is the earliest step the reviewer failed (and its agent)."""
    units: dict[str, Unit] = {}
    earliest: dict[str, ReviewItem] = {}
    decisive: dict[str, ReviewItem] = {}
    for item in items:
        if item.decisive:
            decisive[item.root] = item
        label = labels.get(item.key)
        if label is None or item.score is None:
            continue
        unit = units.setdefault(item.root, Unit(item.root))
        passed = human_pass(item, label)
        if passed is not None:
            unit.passes.append((label.part, passed, item.score >= item.threshold))
            if not passed and item.kind == "step":
                earliest.setdefault(item.root, item)
        if label.category is not None:
            verdict = item.category if item.category in FAILURES else NO_FAILURE
            unit.categories.append((label.part, label.category, verdict))
    for name, unit in units.items():
        failed, judged = earliest.get(name), decisive.get(name)
        unit.predicted = judged is not None
        if failed is not None:  # no decisive step in the results is a miss, as in calibrate
            unit.decisive_step = judged is not None and judged.key == failed.key
            unit.decisive_agent = bool(
                judged is not None
                and judged.agent
                and failed.agent
                and judged.agent.casefold() == failed.agent.casefold()
            )
    return list(units.values())


def _weights(parts: Sequence[Part], population: Counter[Part] | None) -> dict[Part, float]:
    """Each part's weight per label: the scored items it stands for over its labels (1 for
    every part when `population` is None: unweighted)."""
    counts = Counter(parts)
    if population is None:
        return dict.fromkeys(counts, 1.0)
    return {part: population[part] / n for part, n in counts.items()}


def _weight(part: Part, passes: Sequence[Pass], population: Counter[Part]) -> float | None:
    n = sum(1 for p in passes if p[0] == part)
    return round(population[part] / n, 6) if n else None


def _covered(passes: Sequence[Pass], population: Counter[Part]) -> float | None:
    total = sum(population.values())
    parts = {p[0] for p in passes}
    return round(sum(population[p] for p in parts) / total, 6) if total else None


def _weighted_accuracy(units: Sequence[Unit], population: Counter[Part]) -> float | None:
    passes = [p for unit in units for p in unit.passes]
    weights = _weights([p[0] for p in passes], population)
    total = sum(weights[p[0]] for p in passes)
    agree = sum(weights[p[0]] for p in passes if p[1] == p[2])
    return agree / total if total else None


def _weighted_kappa(units: Sequence[Unit], population: Counter[Part]) -> float | None:
    """Cohen's kappa over the weighted confusion matrix: (p_o - p_e) / (1 - p_e); None
    when both raters gave one answer only (p_e = 1)."""
    passes = [p for unit in units for p in unit.passes]
    weights = _weights([p[0] for p in passes], population)
    total = sum(weights[p[0]] for p in passes)
    if not total:
        return None
    cell: dict[tuple[bool, bool], float] = dict.fromkeys(
        [(True, True), (True, False), (False, True), (False, False)], 0.0
    )
    for part, label, judged in passes:
        cell[(label, judged)] += weights[part]
    observed = (cell[(True, True)] + cell[(False, False)]) / total
    label_pass = (cell[(True, True)] + cell[(True, False)]) / total
    judge_pass = (cell[(True, True)] + cell[(False, True)]) / total
    expected = label_pass * judge_pass + (1 - label_pass) * (1 - judge_pass)
    if expected >= 1 - 1e-12:
        return None
    return (observed - expected) / (1 - expected)


def _class_counts(
    units: Sequence[Unit], population: Counter[Part] | None
) -> dict[str, tuple[float, float, float]]:
    """Per failure category: weighted true positives, false positives, false negatives."""
    pairs = [c for unit in units for c in unit.categories]
    weights = _weights([c[0] for c in pairs], population)
    out = {}
    for name in FAILURES:
        tp = sum(weights[p] for p, label, judged in pairs if label == name == judged)
        fp = sum(weights[p] for p, label, judged in pairs if judged == name != label)
        fn = sum(weights[p] for p, label, judged in pairs if label == name != judged)
        out[name] = (tp, fp, fn)
    return out


def _f1(tp: float, fp: float, fn: float) -> float | None:
    return None if not tp + fp + fn else 2 * tp / (2 * tp + fp + fn)


def _weighted_f1(units: Sequence[Unit], population: Counter[Part] | None) -> float | None:
    """Macro F1 over the failure categories labelled or judged (as calibrate's)."""
    scores = [_f1(*counts) for counts in _class_counts(units, population).values()]
    defined = [s for s in scores if s is not None]
    return sum(defined) / len(defined) if defined else None


def _category_scores(units: Sequence[Unit], population: Counter[Part]) -> dict[str, Any]:
    out = {}
    for name, (tp, fp, fn) in _class_counts(units, population).items():
        out[name] = {
            "true_positives": round(tp, 6),
            "false_positives": round(fp, 6),
            "false_negatives": round(fn, 6),
            "precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None,
            "f1": _f1(tp, fp, fn),
        }
    return out


def _confusion(passes: Sequence[Pass]) -> dict[str, int]:
    def count(label: bool, judged: bool) -> int:
        return sum(1 for _, a, b in passes if (a, b) == (label, judged))

    return {
        "labelled_pass_judged_pass": count(True, True),
        "labelled_pass_judged_fail": count(True, False),
        "labelled_fail_judged_pass": count(False, True),
        "labelled_fail_judged_fail": count(False, False),
    }


def _hits(attribute: str) -> Callable[[Sequence[Unit]], float | None]:
    def rate(units: Sequence[Unit]) -> float | None:
        marks = [getattr(u, attribute) for u in units if getattr(u, attribute) is not None]
        return sum(marks) / len(marks) if marks else None

    return rate


def _interval(
    units: list[Unit], statistic: Callable[[Sequence[Unit]], float | None]
) -> list[float] | None:
    return _rounded(
        bootstrap_interval(units, statistic, seed=SEED, resamples=RESAMPLES, level=LEVEL)
    )


def _rounded(bounds: tuple[float, float] | None) -> list[float] | None:
    return None if bounds is None else [round(bounds[0], 6), round(bounds[1], 6)]
