"""Pairwise accuracy on preference pairs against a hand computation: ties count half under the
``half`` rule and nothing by default, errors are left out and counted, Wilson intervals widened
for clustering on the prompt, slices by category."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from truegrade.core import Grade, Sample
from truegrade.validate import PairRules, is_preference_row, validate_pairwise

HALF = PairRules(equal_scores="half")


class ByTable:
    """Scores a response by a table; ``broken`` cannot be graded."""

    name = "table"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table
        self.seen: list[str] = []

    def grade_batch(self, samples):
        out = []
        for s in samples:
            self.seen.append(s.response_text)
            if s.response_text == "broken":
                out.append(Grade.failure("cannot grade this one"))
            else:
                out.append(Grade(score=self.table[s.response_text]))
        return out


TABLE = {"good": 2.0, "fine": 1.0, "bad": 0.0, "meh": 1.0}

# (id, prompt group, subset, chosen, rejected) -> outcome
PAIRS = [
    ("p1", "q1", "chat", "good", "bad"),  # 1
    ("p2", "q1", "chat", "fine", "bad"),  # 1
    ("p3", "q1", "chat", "fine", "meh"),  # tie: 0.5
    ("p4", "q2", "chat", "bad", "good"),  # 0
    ("p5", "q2", "safety", "good", "fine"),  # 1
    ("p6", "q3", "safety", "bad", "fine"),  # 0
    ("p7", "q3", "safety", "good", "meh"),  # 1
    ("p8", "q3", "safety", "broken", "bad"),  # grader error: left out
]
OUTCOMES = {"p1": 1.0, "p2": 1.0, "p3": 0.5, "p4": 0.0, "p5": 1.0, "p6": 0.0, "p7": 1.0}


def rows(grouped: bool) -> list[Sample]:
    return [
        Sample.from_row(
            {
                "id": pid,
                "prompt": f"prompt {group}",
                "chosen": chosen,
                "rejected": rejected,
                "subset": subset,
                **({"group": group} if grouped else {}),
            }
        )
        for pid, group, subset, chosen, rejected in PAIRS
    ]


def wilson_interval(values: list[float], clusters: list[str]) -> tuple[float, float, float]:
    """The win rate and its Wilson interval on the effective sample size, written out.

    With one pair per cluster the effective size is n; otherwise n over the design effect
    (cluster-robust variance over the Bernoulli one, never below 1), and the number of clusters
    at 0 or 1.
    """
    n, p = len(values), sum(values) / len(values)
    groups = sorted(set(clusters))
    g = len(groups)
    if g == n:
        n_eff = float(n)
    elif 0 < p < 1:
        sums = [sum(v - p for v, c in zip(values, clusters, strict=True) if c == k) for k in groups]
        clustered_var = g / (g - 1) * sum(s * s for s in sums) / n**2
        n_eff = n / max(1.0, clustered_var / (p * (1 - p) / n))
    else:
        n_eff = float(g)
    z = stats.norm.ppf(0.975)
    centre = (p + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff**2)) / (1 + z * z / n_eff)
    return p, max(0.0, centre - half), min(1.0, centre + half)


def test_rows_with_chosen_and_rejected_are_preference_rows():
    assert all(is_preference_row(s) for s in rows(False))
    assert not is_preference_row(Sample.from_row({"id": 1, "response": "x", "chosen": "y"}))


def test_accuracy_ties_errors_and_the_interval_by_hand():
    grader = ByTable(TABLE)
    report = validate_pairwise(grader, rows(False), rules=HALF)
    assert (report.pairs, report.graded, report.grader_errors, report.ties) == (8, 7, 1, 1)
    _, low, high = wilson_interval(list(OUTCOMES.values()), list(OUTCOMES))
    acc = report.accuracy
    assert (acc.estimate, acc.ci_low, acc.ci_high) == pytest.approx((4.5 / 7, low, high))
    assert (acc.n, acc.clusters) == (7, 7)
    assert report.mean_margin == pytest.approx((2 + 1 + 0 - 2 + 1 - 1 + 1) / 7)
    assert [(w.id, w.chosen_score, w.rejected_score) for w in report.wrong] == [
        ("p3", 1.0, 1.0),
        ("p4", 0.0, 2.0),
        ("p6", 0.0, 1.0),
    ]
    # both sides of a pair are graded, and nothing else
    assert len(grader.seen) == 16


def test_pairs_sharing_a_prompt_are_one_cluster():
    report = validate_pairwise(ByTable(TABLE), rows(True), rules=HALF)
    groups = {pid: group for pid, group, *_ in PAIRS}
    mean, low, high = wilson_interval(list(OUTCOMES.values()), [groups[p] for p in OUTCOMES])
    acc = report.accuracy
    assert acc.clusters == 3 and "design effect" in acc.method
    assert (acc.estimate, acc.ci_low, acc.ci_high) == pytest.approx((mean, low, high))
    flat = validate_pairwise(ByTable(TABLE), rows(False), rules=HALF).accuracy
    assert acc.ci_high - acc.ci_low >= flat.ci_high - flat.ci_low  # never narrower


def test_per_category_slices_by_hand():
    report = validate_pairwise(ByTable(TABLE), rows(True), by=["metadata.subset"], rules=HALF)
    by_subset = report.slices["metadata.subset"]
    chat, safety = by_subset["chat"], by_subset["safety"]
    assert (chat.pairs, chat.ties, chat.accuracy.estimate) == (4, 1, pytest.approx(2.5 / 4))
    # the errored pair is not in its slice either
    assert (safety.pairs, safety.ties, safety.accuracy.estimate) == (3, 0, pytest.approx(2 / 3))
    groups = {pid: group for pid, group, *_ in PAIRS}
    chat_ids = ["p1", "p2", "p3", "p4"]
    _, low, high = wilson_interval([OUTCOMES[p] for p in chat_ids], [groups[p] for p in chat_ids])
    assert (chat.accuracy.ci_low, chat.accuracy.ci_high) == pytest.approx((low, high))


def test_rows_without_a_pair_are_ignored_and_intervals_stay_in_bounds():
    only = [*rows(True)[:3], Sample(id="plain", response="good", label=True)]
    report = validate_pairwise(ByTable(TABLE), only, rules=HALF)
    assert report.pairs == 3
    assert report.accuracy.estimate == pytest.approx(2.5 / 3)
    assert 0 <= report.accuracy.ci_low < report.accuracy.estimate < report.accuracy.ci_high <= 1
    # every pair lost: the interval is not a point at 0, and its width reflects 2 prompts
    lost = validate_pairwise(ByTable(TABLE), [rows(True)[3], rows(True)[5]])
    assert lost.accuracy.estimate == 0.0 and lost.accuracy.ci_low == 0.0
    assert lost.accuracy.ci_high == pytest.approx(wilson_interval([0.0, 0.0], ["q2", "q3"])[2])
    assert lost.accuracy.ci_high > 0.5


def test_by_default_equal_scores_earn_nothing():
    report = validate_pairwise(ByTable(TABLE), rows(False))
    expected = sum(v for k, v in OUTCOMES.items() if k != "p3") / 7  # p3's tie: 0, not 0.5
    assert report.accuracy.estimate == pytest.approx(expected)
    assert report.ties == 1 and report.rules.equal_scores == "tie"
    wrong = validate_pairwise(ByTable(TABLE), rows(False), rules=PairRules(equal_scores="wrong"))
    assert wrong.accuracy.estimate == pytest.approx(expected)
