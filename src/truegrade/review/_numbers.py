"""The numbers of a review project, each with the rule that made it.

The grader against the experts is HealthBench's meta-evaluation, computed by the same code as
``truegrade rubric meta`` (``meta_evaluate``): the grader's verdict on an (item, criterion)
paired with *each* expert's label, macro-F1 of met / not met and Cohen's kappa over those pairs,
intervals from a bootstrap over prompts. The experts against each other: the same macro-F1 with
each expert paired with every other (HealthBench's ceiling), pairwise Cohen's kappa, Fleiss'
kappa, and Krippendorff's alpha (nominal; an expert who did not label a unit is missing, not a
disagreement). A grader is *at expert level* on a slice only where its macro-F1 interval reaches
the experts' own: ``grader.ci_high >= experts.ci_low``.

Only current criteria count: labels of an old wording stay in the project as history, never in
a number about the new text.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from truegrade.core import Sample
from truegrade.graders.rubric import RubricItem
from truegrade.review._store import Criterion, Item, ReviewStore
from truegrade.rubric import MetaRow, meta_evaluate
from truegrade.stats import Estimate, cohen_kappa, fleiss_kappa, json_ready, krippendorff_alpha

__all__ = ["RULES", "Unit", "agreement", "units"]

RULES = {
    "grader_macro_f1": (
        "macro-F1 of met / not met, the grader's verdict paired with each expert's label "
        "(HealthBench); bootstrap over prompts"
    ),
    "grader_kappa": "Cohen's kappa over the same (grader, expert) pairs; bootstrap over prompts",
    "expert_macro_f1": (
        "macro-F1 of each expert's label paired with every other expert's on the same unit "
        "(HealthBench's expert ceiling); bootstrap over prompts"
    ),
    "pairwise_kappa": "Cohen's kappa of each pair of experts on the units both labelled",
    "fleiss_kappa": (
        "Fleiss' kappa over units with two labels or more (each unit's agreement over its own "
        "pairs); bootstrap over prompts"
    ),
    "krippendorff_alpha": (
        "Krippendorff's alpha, nominal, a missing label missing; bootstrap over prompts"
    ),
    "at_expert_level": "the grader's macro-F1 interval reaches the experts': ci_high >= ci_low",
}


@dataclass(frozen=True)
class Unit:
    """One (item, criterion) with every expert's label and the grader's verdict."""

    item: Item
    criterion: Criterion
    labels: dict[str, bool]
    grader: bool | None
    explanation: str


def units(store: ReviewStore, *, labelled_only: bool = False) -> list[Unit]:
    """Every (item, current criterion), its labels by expert and the grader's verdict; with
    ``labelled_only``, only those with a label (all that any number is computed from)."""
    by_pair: dict[tuple[int, int], dict[str, bool]] = {}
    for label in store.labels():
        by_pair.setdefault((label.item_id, label.criterion_id), {})[label.user] = label.met
    verdicts = store.labelled_verdicts() if labelled_only else store.verdicts()
    out = []
    for item, criterion in store.labelled_pairs() if labelled_only else store.pairs():
        verdict = verdicts.get((item.id, criterion.id))
        out.append(
            Unit(
                item,
                criterion,
                by_pair.get((item.id, criterion.id), {}),
                None if verdict is None else verdict.met,
                "" if verdict is None else (verdict.error or verdict.explanation),
            )
        )
    return out


def _estimate(e: Estimate | None, rule: str) -> dict[str, Any] | None:
    if e is None:
        return None
    out = e.to_dict()
    out["rule"] = RULES[rule]
    return out


def _slice(
    chosen: Sequence[Unit], experts: Sequence[str], n_resamples: int, seed: int, total: int
) -> dict[str, Any]:
    """The numbers of one slice: ``chosen`` its labelled units, ``total`` all of its units."""
    labelled = [u for u in chosen if u.labels]
    graded = [u for u in labelled if u.grader is not None]
    out: dict[str, Any] = {
        "units": total,
        "labelled": len(labelled),
        "labels": sum(len(u.labels) for u in chosen),
        "graded": len(graded),
        # every number is there, null until it can be computed (a new project has no labels)
        "grader_macro_f1": None,
        "grader_kappa": None,
        "expert_macro_f1": None,
        "at_expert_level": None,
        "fleiss_kappa": None,
        "krippendorff_alpha": None,
        "pairwise_kappa": [],
    }
    if graded:
        rows = [
            MetaRow(
                sample=Sample(
                    id=f"{u.item.key}:{u.criterion.key}",
                    prompt=u.item.prompt,
                    response=u.item.response,
                ),
                item=RubricItem(criterion=u.criterion.text, points=u.criterion.points),
                labels=tuple(u.labels[name] for name in experts if name in u.labels),
                category=u.item.category,
                cluster=u.item.cluster,
            )
            for u in graded
        ]
        report = meta_evaluate(
            rows, verdicts=[u.grader for u in graded], n_resamples=n_resamples, seed=seed
        )
        out["grader_macro_f1"] = _estimate(report.macro_f1, "grader_macro_f1")
        out["grader_kappa"] = _estimate(report.kappa, "grader_kappa")
        out["expert_macro_f1"] = _estimate(report.expert_macro_f1, "expert_macro_f1")
        g, x = report.macro_f1, report.expert_macro_f1
        out["at_expert_level"] = (
            None
            if x is None or g.estimate != g.estimate or x.estimate != x.estimate
            else bool(g.ci_high >= x.ci_low)
        )
    matrix = [[u.labels.get(name) for name in experts] for u in labelled]
    clusters: list[Hashable] = [u.item.cluster for u in labelled]
    if matrix and len(experts) >= 2:
        out["fleiss_kappa"] = _estimate(
            fleiss_kappa(matrix, clusters, n_resamples=n_resamples, seed=seed), "fleiss_kappa"
        )
        out["krippendorff_alpha"] = _estimate(
            krippendorff_alpha(matrix, clusters, n_resamples=n_resamples, seed=seed),
            "krippendorff_alpha",
        )
        pairs = []
        for a, b in itertools.combinations(experts, 2):
            both = [u for u in labelled if a in u.labels and b in u.labels]
            if not both:
                continue
            kappa = cohen_kappa([u.labels[a] for u in both], [u.labels[b] for u in both])
            pairs.append(
                {
                    "experts": [a, b],
                    "units": len(both),
                    **(_estimate(kappa, "pairwise_kappa") or {}),
                }
            )
        out["pairwise_kappa"] = pairs
    return out


def version_numbers(
    store: ReviewStore, criterion: Criterion, *, n_resamples: int = 500, seed: int = 0
) -> dict[str, Any]:
    """The numbers of one version of a criterion, from that version's own labels and verdicts:
    an edited criterion's page shows each wording's agreement, the old beside the new (the old
    wording's labels are its own, never counted for the new text)."""
    by_item: dict[int, dict[str, bool]] = {}
    for label in store.labels(criterion_id=criterion.id):
        by_item.setdefault(label.item_id, {})[label.user] = label.met
    verdicts = store.criterion_verdicts(criterion.id)
    found = []
    for item_id, labels in sorted(by_item.items()):
        item = store.item(item_id)
        verdict = verdicts.get(item_id)
        if item is not None:
            found.append(
                Unit(
                    item,
                    criterion,
                    labels,
                    None if verdict is None else verdict.met,
                    "" if verdict is None else (verdict.error or verdict.explanation),
                )
            )
    total = 1 if criterion.item_id is not None else store.count_items()
    experts = [u.name for u in store.users("expert")]
    ready: dict[str, Any] = json_ready(_slice(found, experts, n_resamples, seed, total))
    return ready


def agreement(
    store: ReviewStore,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    per_criterion: bool | str = True,
) -> dict[str, Any]:
    """Every number of the dashboard (``agreement.json``), overall, per category and per
    criterion (every one; only the one whose key ``per_criterion`` names; or none for False),
    each with its rule."""
    # numbers come from the labelled units alone; the others are counted in SQL, not loaded
    found = units(store, labelled_only=True)
    total, category_totals, criterion_totals = store.unit_counts(per_criterion)
    experts = [u.name for u in store.users("expert")]
    categories: dict[str, list[Unit]] = {name: [] for name in category_totals}
    criteria: dict[str, list[Unit]] = {name: [] for name in criterion_totals}
    for u in found:
        categories.setdefault(u.item.category or "(none)", []).append(u)
        if u.criterion.key in criteria:
            criteria[u.criterion.key].append(u)
    result = {
        "schema_version": 1,
        "experts": experts,
        "rules": RULES,
        "overall": _slice(found, experts, n_resamples, seed, total),
        "categories": {
            name: _slice(chosen, experts, n_resamples, seed, category_totals.get(name, 0))
            for name, chosen in sorted(categories.items())
        },
        "criteria": {
            name: _slice(chosen, experts, n_resamples, seed, criterion_totals.get(name, 0))
            for name, chosen in sorted(criteria.items())
        },
    }
    ready: dict[str, Any] = json_ready(result)
    return ready
