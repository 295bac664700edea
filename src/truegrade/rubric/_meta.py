"""``meta_evaluate``: how far a criterion evaluator is from the experts, by category and tag.

The data is HealthBench's meta-evaluation format: one row per (response, criterion) with the
experts' verdicts::

    {"prompt": [...messages], "completion": "...", "rubric": "criterion text",
     "binary_labels": [true, false, true], "category": "...", "prompt_id": "...",
     "anonymized_physician_ids": [...]}

(``criterion`` may be given instead of ``rubric``, as text or as a ``{criterion, points,
tags}`` item; ``labels`` instead of ``binary_labels``.) The evaluator's verdict on a row is
compared with *each* expert's label, as HealthBench does: macro-F1 is the mean of the F1 of
"met" and of "not met" over all (evaluator, expert) pairs, so an evaluator that says "met" to
everything scores badly. Cohen's kappa is computed on the same pairs; intervals are cluster
bootstraps over prompts (rows of one prompt are not independent). The experts' agreement with
each other (each expert against the others) is the ceiling to read the evaluator against; the
categories where the evaluator falls furthest below it are listed first.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from truegrade.core import DataError, Sample
from truegrade.graders.rubric import RubricGrader, RubricItem
from truegrade.stats import Estimate, cohen_kappa, json_ready, macro_f1, proportion_ci

__all__ = ["Breakdown", "MetaReport", "MetaRow", "meta_evaluate", "meta_rows"]


@dataclass(frozen=True)
class MetaRow:
    """One (response, criterion) with the experts' verdicts.

    Attributes:
        sample: The conversation (``prompt``) and the response graded.
        item: The criterion.
        labels: Each expert's verdict (met or not).
        category: The row's category (HealthBench's meta-eval clusters), if any.
        cluster: The unit resampled for intervals (the prompt).
    """

    sample: Sample
    item: RubricItem
    labels: tuple[bool, ...]
    category: str | None
    cluster: Hashable
    raters: tuple[str, ...] = ()
    """Who gave each label (HealthBench's ``anonymized_physician_ids``), when the row says."""


def _labels(value: Any, where: str) -> tuple[bool, ...]:
    if isinstance(value, bool):
        return (value,)
    if not isinstance(value, list) or not value or not all(isinstance(v, bool) for v in value):
        raise DataError(f"{where}: 'binary_labels' must be a non-empty list of true/false")
    return tuple(value)


def meta_rows(rows: Sequence[tuple[int, Mapping[str, Any]]], *, path: str = "") -> list[MetaRow]:
    """Meta-evaluation rows from ``(line, row)`` pairs, with errors naming the file and line.

    Raises:
        DataError: a row misses its criterion, response or labels.
    """
    out = []
    for line, row in rows:
        where = f"{path}:{line}" if path else f"line {line}"
        raw_item = row.get("criterion", row.get("rubric"))
        if isinstance(raw_item, str):
            raw_item = {"criterion": raw_item, "points": 1}
        if not isinstance(raw_item, Mapping):
            raise DataError(f"{where}: needs the criterion ('rubric' or 'criterion')")
        try:
            item = RubricItem.model_validate({"points": 1, **raw_item})
        except ValueError as exc:
            raise DataError(f"{where}: bad criterion: {exc}") from None
        response = row.get("completion", row.get("response"))
        if not isinstance(response, (str, list)):
            raise DataError(f"{where}: needs the response graded ('completion')")
        labels = _labels(row.get("binary_labels", row.get("labels")), where)
        raters = row.get("anonymized_physician_ids") or ()
        if raters and (
            not isinstance(raters, list)
            or len(raters) != len(labels)
            or not all(isinstance(r, (str, int)) for r in raters)
        ):
            raise DataError(f"{where}: 'anonymized_physician_ids' must name one rater per label")
        prompt_id = row.get("prompt_id")
        identity = row.get("completion_id", row.get("id", line))
        sample = Sample(
            id=f"{identity}:{line}",
            prompt=row.get("prompt"),
            response=response,
            metadata={"line": line},
        )
        category = row.get("category")
        out.append(
            MetaRow(
                sample=sample,
                item=item,
                labels=labels,
                category=str(category) if category is not None else None,
                cluster=prompt_id if isinstance(prompt_id, (str, int)) else identity,
                raters=tuple(str(r) for r in raters),
            )
        )
    return out


@dataclass(frozen=True)
class Breakdown:
    """Agreement on one slice (a category or a tag).

    Attributes:
        name: The slice.
        rows: Rows in it.
        macro_f1: Evaluator vs experts.
        expert_macro_f1: Experts vs each other (None without two labels per row).
        gap: ``expert_macro_f1 - macro_f1``: how far below the experts' own agreement.
    """

    name: str
    rows: int
    macro_f1: Estimate
    expert_macro_f1: Estimate | None
    gap: float | None


@dataclass
class MetaReport:
    """The meta-evaluation (see the module docstring)."""

    rows: int
    pairs: int
    errors: int
    macro_f1: Estimate
    kappa: Estimate
    majority_accuracy: Estimate
    expert_macro_f1: Estimate | None
    predicted_met_rate: float
    expert_met_rate: float
    categories: list[Breakdown] = field(default_factory=list)
    tags: list[Breakdown] = field(default_factory=list)
    raters: list[Breakdown] = field(default_factory=list)
    """Per rater (rows with ``anonymized_physician_ids``): the evaluator against that rater's
    labels, and that rater against the others on the same rows."""
    error_examples: list[str] = field(default_factory=list)

    @property
    def worst(self) -> list[Breakdown]:
        """Categories ordered from furthest below the experts (or lowest macro-F1)."""

        def key(b: Breakdown) -> float:
            if b.gap is not None:
                return -b.gap
            return b.macro_f1.estimate if b.macro_f1.estimate == b.macro_f1.estimate else 2.0

        return sorted(self.categories, key=key)

    def to_dict(self) -> dict[str, Any]:
        def est(e: Estimate | None) -> dict[str, Any] | None:
            return None if e is None else e.to_dict()

        def part(b: Breakdown) -> dict[str, Any]:
            return {
                "name": b.name,
                "rows": b.rows,
                "macro_f1": est(b.macro_f1),
                "expert_macro_f1": est(b.expert_macro_f1),
                "gap": b.gap,
            }

        out: dict[str, Any] = json_ready(
            {
                "schema_version": 1,
                "rows": self.rows,
                "pairs": self.pairs,
                "errors": self.errors,
                "macro_f1": est(self.macro_f1),
                "kappa": est(self.kappa),
                "majority_accuracy": est(self.majority_accuracy),
                "expert_macro_f1": est(self.expert_macro_f1),
                "predicted_met_rate": self.predicted_met_rate,
                "expert_met_rate": self.expert_met_rate,
                "categories": [part(b) for b in self.categories],
                "tags": [part(b) for b in self.tags],
                "raters": [part(b) for b in self.raters],
                "worst_categories": [b.name for b in self.worst[:5]],
                "error_examples": self.error_examples,
            }
        )
        return out


def _pairs(
    rows: Sequence[MetaRow], predicted: Sequence[bool]
) -> tuple[list[bool], list[bool], list[Hashable]]:
    truth: list[bool] = []
    pred: list[bool] = []
    clusters: list[Hashable] = []
    for row, p in zip(rows, predicted, strict=True):
        for label in row.labels:
            truth.append(label)
            pred.append(p)
            clusters.append(row.cluster)
    return truth, pred, clusters


def _expert_pairs(rows: Sequence[MetaRow]) -> tuple[list[bool], list[bool], list[Hashable]]:
    truth: list[bool] = []
    pred: list[bool] = []
    clusters: list[Hashable] = []
    for row in rows:
        if len(row.labels) < 2:
            continue
        for i, own in enumerate(row.labels):
            for j, other in enumerate(row.labels):
                if i != j:
                    pred.append(own)
                    truth.append(other)
                    clusters.append(row.cluster)
    return truth, pred, clusters


def _breakdown(
    name: str, rows: Sequence[MetaRow], predicted: Sequence[bool], n_resamples: int, seed: int
) -> Breakdown:
    return _from_pairs(
        name, len(rows), _pairs(rows, predicted), _expert_pairs(rows), n_resamples, seed
    )


_Pairs = tuple[list[bool], list[bool], list[Hashable]]


def _from_pairs(
    name: str, rows: int, model_pairs: _Pairs, expert_pairs: _Pairs, n_resamples: int, seed: int
) -> Breakdown:
    """A slice's numbers from its (evaluator, expert) and (expert, expert) pairs."""
    truth, pred, clusters = model_pairs
    model = macro_f1(truth, pred, clusters, n_resamples=n_resamples, seed=seed)
    e_truth, e_pred, e_clusters = expert_pairs
    expert = (
        macro_f1(e_truth, e_pred, e_clusters, n_resamples=n_resamples, seed=seed)
        if e_truth
        else None
    )
    gap = (
        expert.estimate - model.estimate
        if expert is not None and expert.estimate == expert.estimate
        else None
    )
    return Breakdown(name, rows, model, expert, gap)


def meta_evaluate(
    rows: Sequence[MetaRow],
    *,
    grader: RubricGrader | None = None,
    verdicts: Sequence[bool | None] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> MetaReport:
    """Compare an evaluator's criterion verdicts with the experts' (see the module docstring).

    Args:
        rows: From ``meta_rows``.
        grader: Judges each row's criterion (its judge, or the criterion's check).
        verdicts: Verdicts already made (one per row, None for a failure), instead of a grader.
        n_resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Raises:
        ValueError: neither or both of ``grader`` and ``verdicts``; verdicts of the wrong length.
    """
    if (grader is None) == (verdicts is None):
        raise ValueError("give either a grader or the verdicts")
    if verdicts is None:
        assert grader is not None
        made = grader.evaluate_criteria([(r.sample, r.item) for r in rows])
        verdicts = [v.met if v.error is None else None for v in made]
        errors = [f"{r.sample.id}: {v.error}" for r, v in zip(rows, made, strict=True) if v.error]
    else:
        if len(verdicts) != len(rows):
            raise ValueError(f"{len(verdicts)} verdicts for {len(rows)} rows")
        errors = [
            f"{r.sample.id}: no verdict" for r, v in zip(rows, verdicts, strict=True) if v is None
        ]
    kept = [(r, bool(v)) for r, v in zip(rows, verdicts, strict=True) if v is not None]
    good_rows = [r for r, _ in kept]
    predicted = [v for _, v in kept]
    truth, pred, clusters = _pairs(good_rows, predicted)
    overall = _breakdown("all", good_rows, predicted, n_resamples, seed)
    agreed: list[bool] = []
    agreed_clusters: list[Hashable] = []
    for row, p in kept:
        yes = sum(row.labels)
        if 2 * yes == len(row.labels):
            continue  # the experts split evenly: no majority to agree with
        agreed.append(p == (2 * yes > len(row.labels)))
        agreed_clusters.append(row.cluster)
    report = MetaReport(
        rows=len(rows),
        pairs=len(truth),
        errors=len(errors),
        macro_f1=overall.macro_f1,
        kappa=cohen_kappa(pred, truth, clusters, n_resamples=n_resamples, seed=seed),
        majority_accuracy=(
            proportion_ci(agreed, agreed_clusters)
            if agreed
            else Estimate.undefined("no row has a majority", n=0, clusters=0, confidence=0.95)
        ),
        expert_macro_f1=overall.expert_macro_f1,
        predicted_met_rate=sum(predicted) / len(predicted) if predicted else float("nan"),
        expert_met_rate=sum(truth) / len(truth) if truth else float("nan"),
        error_examples=errors[:10],
    )
    slices: dict[str, dict[str, list[int]]] = {"category": {}, "tag": {}}
    for k, row in enumerate(good_rows):
        if row.category is not None:
            slices["category"].setdefault(row.category, []).append(k)
        for tag in row.item.tags:
            slices["tag"].setdefault(tag, []).append(k)
    for kind, groups in slices.items():
        for name, idx in sorted(groups.items()):
            part = _breakdown(
                name, [good_rows[i] for i in idx], [predicted[i] for i in idx], n_resamples, seed
            )
            (report.categories if kind == "category" else report.tags).append(part)
    report.raters = _per_rater(good_rows, predicted, n_resamples, seed)
    return report


def _per_rater(
    rows: Sequence[MetaRow], predicted: Sequence[bool], n_resamples: int, seed: int
) -> list[Breakdown]:
    """For each named rater: the evaluator against their labels, and their labels against the
    other raters' on the same rows (HealthBench reads each physician against the rest)."""
    names = sorted({r for row in rows for r in row.raters})
    out = []
    for name in names:
        truth: list[bool] = []
        pred: list[bool] = []
        clusters: list[Hashable] = []
        e_truth: list[bool] = []
        e_pred: list[bool] = []
        e_clusters: list[Hashable] = []
        count = 0
        for row, p in zip(rows, predicted, strict=True):
            if name not in row.raters:
                continue
            count += 1
            own = row.labels[row.raters.index(name)]
            truth.append(own)
            pred.append(p)
            clusters.append(row.cluster)
            for other, label in zip(row.raters, row.labels, strict=True):
                if other != name:
                    e_truth.append(label)
                    e_pred.append(own)
                    e_clusters.append(row.cluster)
        out.append(
            _from_pairs(
                name,
                count,
                (truth, pred, clusters),
                (e_truth, e_pred, e_clusters),
                n_resamples,
                seed,
            )
        )
    return out
