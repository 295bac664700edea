"""Pairwise accuracy on preference pairs against a hand computation: ties count half, errors
are left out and counted, intervals are clustered on the prompt, slices by category."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from truegrade.core import Grade, Sample
from truegrade.validate import is_preference_row, validate_pairwise


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


def t_interval(values: list[float], clusters: list[str]) -> tuple[float, float, float]:
    """Mean and its cluster-robust t interval, written out."""
    n, mean = len(values), sum(values) / len(values)
    groups = sorted(set(clusters))
    sums = [sum(v - mean for v, c in zip(values, clusters, strict=True) if c == g) for g in groups]
    g = len(groups)
    se = math.sqrt(g / (g - 1) * sum(s * s for s in sums) / n**2)
    half = stats.t.ppf(0.975, g - 1) * se
    return mean, mean - half, mean + half


def test_rows_with_chosen_and_rejected_are_preference_rows():
    assert all(is_preference_row(s) for s in rows(False))
    assert not is_preference_row(Sample.from_row({"id": 1, "response": "x", "chosen": "y"}))


def test_accuracy_ties_errors_and_the_interval_by_hand():
    grader = ByTable(TABLE)
    report = validate_pairwise(grader, rows(False))
    assert (report.pairs, report.graded, report.grader_errors, report.ties) == (8, 7, 1, 1)
    values = list(OUTCOMES.values())
    mean, low, high = t_interval(values, list(OUTCOMES))
    # one pair per cluster: the textbook s / sqrt(n)
    s = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    assert high - mean == pytest.approx(stats.t.ppf(0.975, 6) * s / math.sqrt(7))
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
    report = validate_pairwise(ByTable(TABLE), rows(True))
    groups = {pid: group for pid, group, *_ in PAIRS}
    mean, low, high = t_interval(list(OUTCOMES.values()), [groups[p] for p in OUTCOMES])
    acc = report.accuracy
    assert acc.clusters == 3
    assert (acc.estimate, acc.ci_low, acc.ci_high) == pytest.approx((mean, low, high))
    assert acc.ci_high - acc.ci_low > 0


def test_per_category_slices_by_hand():
    report = validate_pairwise(ByTable(TABLE), rows(True), by=["metadata.subset"])
    by_subset = report.slices["metadata.subset"]
    chat, safety = by_subset["chat"], by_subset["safety"]
    assert (chat.pairs, chat.ties, chat.accuracy.estimate) == (4, 1, pytest.approx(2.5 / 4))
    # the errored pair is not in its slice either
    assert (safety.pairs, safety.ties, safety.accuracy.estimate) == (3, 0, pytest.approx(2 / 3))
    groups = {pid: group for pid, group, *_ in PAIRS}
    chat_ids = ["p1", "p2", "p3", "p4"]
    _, low, high = t_interval([OUTCOMES[p] for p in chat_ids], [groups[p] for p in chat_ids])
    assert (chat.accuracy.ci_low, chat.accuracy.ci_high) == pytest.approx((low, high))


def test_rows_without_a_pair_are_ignored_and_a_single_cluster_has_no_interval():
    only = [*rows(True)[:3], Sample(id="plain", response="good", label=True)]
    report = validate_pairwise(ByTable(TABLE), only)
    assert report.pairs == 3
    assert report.accuracy.estimate == pytest.approx(2.5 / 3)
    assert report.accuracy.ci_low is None  # three pairs of one prompt: one cluster
