"""Agreement of pairwise verdicts with pairwise labels, under rules a user names.

Papers that report a judge's or a reward model's agreement with people (or with objective
labels) differ in small rules that move the number by many points: how the two orders of a
pairwise comparison are combined, whether ties count, what an unreadable verdict is worth, what
equal reward scores are. Here each rule is an explicit option (:class:`PairRules`) so a paper's
protocol can be reproduced exactly, and the defaults are chosen so that a judge that abstains
(says tie, or gives no readable verdict) or flips with the order of the responses earns no
credit: a verdict that does not name the label's winner is never counted as agreement with it.

Every pair is reduced to a label and a verdict in ``A`` / ``B`` / ``tie`` (``A`` is the first
response of the pair as the labels see it, e.g. ``chosen``), and a credit in [0, 1] for the
accuracy. The report gives MT-Bench's two agreement numbers (with and without ties), the
win/tie/loss accuracy, macro-F1 and Cohen's kappa, each with an interval clustered on the pair's
``group`` (the prompt), and always the count and rate of unreadable verdicts.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from truegrade.stats import cohen_kappa, macro_f1, proportion_ci, win_rate_ci
from truegrade.validate._validate import Metric

__all__ = [
    "Combine",
    "EqualScores",
    "LabelTies",
    "PairAgreement",
    "PairRules",
    "RecordedPair",
    "Unreadable",
    "VerdictTies",
    "pairwise_agreement",
    "winner_of",
]

Combine = Literal["both_agree", "any_winner", "average"]
LabelTies = Literal["keep", "drop"]
VerdictTies = Literal["class", "half", "drop"]
EqualScores = Literal["tie", "wrong", "half"]
Unreadable = Literal["wrong", "tie", "drop"]
Side = Literal["A", "B", "tie"]

#: The class an unreadable verdict gets when it is counted (as wrong): it matches no label.
UNREADABLE = "unreadable"


class PairRules(BaseModel):
    """How verdicts are turned into agreement (defaults never credit an abstaining judge).

    Attributes:
        combine: Two (or more) orders of one comparison: ``both_agree`` gives a winner only when
            every order names it, else a tie (FastChat / MT-Bench, and truegrade's judge);
            ``any_winner`` turns (winner, tie) into the winner and (A, B) into a tie (JudgeBench);
            ``average`` takes the mean of the orders' preferences for ``A`` (a tie is 0.5).
        label_ties: ``keep`` a tie label as a third class, or ``drop`` those pairs.
        verdict_ties: A tie verdict against a label with a winner: wrong (``class``, it is its
            own answer), worth one ``half``, or ``drop`` the pair from the accuracy. Against a
            tie label a tie verdict is right under every rule.
        equal_scores: Reward scores exactly equal on the two responses: a ``tie`` verdict (the
            tie rules above apply), ``wrong`` whatever the label (JudgeBench, RewardBench), or
            ``half`` a win whatever the label.
        unreadable: An order whose verdict could not be read (or a pair with no verdict):
            the pair counts as ``wrong``, the order reads as a ``tie`` (then ``combine``
            applies: JudgeBench), or ``drop`` the pair. The rate is reported under every rule.
    """

    model_config = ConfigDict(frozen=True)

    combine: Combine = "both_agree"
    label_ties: LabelTies = "keep"
    verdict_ties: VerdictTies = "class"
    equal_scores: EqualScores = "tie"
    unreadable: Unreadable = "wrong"


class RecordedPair(BaseModel):
    """One labelled comparison and what a judge or reward model said about it.

    Attributes:
        id: The pair's id.
        label: Which response the label prefers: ``A``, ``B`` or ``tie``.
        verdicts: One preference for ``A`` per order of presentation, already in the label's
            frame (a verdict from the swapped order is turned back): 1 = A, 0 = B, 0.5 = tie,
            values between are probabilities; None where the verdict could not be read.
        scores: Reward scores of ``A`` and ``B`` (instead of verdicts).
        group: Cluster for the intervals (the prompt); the id when None.
        fields: Values to slice by (``category``, ``source``, ...).
    """

    id: str
    label: Side
    verdicts: list[float | None] = Field(default_factory=list)
    scores: tuple[float, float] | None = None
    group: str | None = None
    fields: dict[str, Any] = Field(default_factory=dict)


class PairAgreement(BaseModel):
    """Agreement of pairwise verdicts with labels, under ``rules``."""

    rules: PairRules
    pairs: int = Field(description="Pairs given.")
    counted: int = Field(description="Pairs in the accuracy (after the drop rules).")
    unreadable: int = Field(description="Pairs with an order (or all) unreadable.")
    unreadable_rate: float | None
    dropped: dict[str, int] = Field(
        default_factory=dict, description="Pairs left out, by rule (label_ties, unreadable, ...)."
    )
    verdict_ties: int = Field(description="Counted pairs whose verdict is a tie.")
    inconsistent_orders: int = Field(
        0, description="Pairs whose orders named different winners (position inconsistency)."
    )
    equal_scores: int = 0
    accuracy: Metric
    agreement_with_ties: Metric
    agreement_without_ties: Metric
    macro_f1: Metric
    kappa: Metric
    confusion: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="confusion[label][verdict] = pairs."
    )
    slices: dict[str, dict[str, PairAgreement]] = Field(default_factory=dict)


def winner_of(preference: float) -> Side:
    """``A`` above 0.5, ``B`` below, ``tie`` at exactly 0.5."""
    return "A" if preference > 0.5 else "B" if preference < 0.5 else "tie"


def _combine(values: Sequence[float], rule: Combine) -> Side:
    if rule == "average":
        return winner_of(sum(values) / len(values))
    sides = [winner_of(v) for v in values]
    if rule == "both_agree":
        return sides[0] if all(s == sides[0] for s in sides) else "tie"
    count = sum(1 if s == "A" else -1 if s == "B" else 0 for s in sides)
    if any(s == "A" for s in sides) and any(s == "B" for s in sides):
        return "tie"
    return "A" if count > 0 else "B" if count < 0 else "tie"


class _Outcome(BaseModel):
    label: str
    verdict: str
    credit: float | None  # None: left out of the accuracy
    unreadable: bool = False
    inconsistent: bool = False
    equal: bool = False
    dropped: str | None = None


def _outcome(pair: RecordedPair, rules: PairRules) -> _Outcome:
    label = pair.label
    if label == "tie" and rules.label_ties == "drop":
        return _Outcome(label=label, verdict="", credit=None, dropped="label_ties")
    if pair.scores is not None:
        a, b = pair.scores
        if a == b:
            if rules.equal_scores == "tie":
                return _credit(label, "tie", rules, equal=True)
            credit = 0.0 if rules.equal_scores == "wrong" else 0.5
            return _Outcome(label=label, verdict="tie", credit=credit, equal=True)
        return _credit(label, "A" if a > b else "B", rules)
    values = list(pair.verdicts)
    unreadable = not values or any(v is None for v in values)
    if unreadable:
        if rules.unreadable == "drop":
            return _Outcome(
                label=label, verdict="", credit=None, unreadable=True, dropped="unreadable"
            )
        if rules.unreadable == "wrong" or not values:
            return _Outcome(label=label, verdict=UNREADABLE, credit=0.0, unreadable=True)
    readable = [0.5 if v is None else v for v in values]
    sides = {winner_of(v) for v in readable}
    verdict = _combine(readable, rules.combine)
    out = _credit(label, verdict, rules)
    out.unreadable = unreadable
    out.inconsistent = len(readable) > 1 and len(sides) > 1
    return out


def _credit(label: str, verdict: Side, rules: PairRules, *, equal: bool = False) -> _Outcome:
    if verdict == label:
        credit: float | None = 1.0
    elif verdict == "tie":
        credit = {"class": 0.0, "half": 0.5, "drop": None}[rules.verdict_ties]
    else:
        credit = 0.0
    dropped = "verdict_ties" if credit is None else None
    return _Outcome(label=label, verdict=verdict, credit=credit, equal=equal, dropped=dropped)


def _cluster(pair: RecordedPair) -> Hashable:
    return pair.group if pair.group is not None else f"id:{pair.id}"


def _report(pairs: Sequence[RecordedPair], rules: PairRules) -> PairAgreement:
    outcomes = [_outcome(p, rules) for p in pairs]
    dropped: dict[str, int] = {}
    for o in outcomes:
        if o.dropped is not None:
            dropped[o.dropped] = dropped.get(o.dropped, 0) + 1
    counted = [(p, o) for p, o in zip(pairs, outcomes, strict=True) if o.credit is not None]
    clusters = [_cluster(p) for p, _ in counted]
    # the class agreements read every pair with a verdict, whatever the tie rule for credit
    classed = [(p, o) for p, o in zip(pairs, outcomes, strict=True) if o.verdict]
    labels = [o.label for _, o in classed]
    verdicts = [o.verdict for _, o in classed]
    class_clusters = [_cluster(p) for p, _ in classed]
    no_ties = [
        (o.label == o.verdict, _cluster(p))
        for p, o in classed
        if o.label != "tie" and o.verdict != "tie"
    ]
    confusion: dict[str, dict[str, int]] = {}
    for _, o in classed:
        row = confusion.setdefault(o.label, {})
        row[o.verdict] = row.get(o.verdict, 0) + 1
    unreadable = sum(o.unreadable for o in outcomes)
    return PairAgreement(
        rules=rules,
        pairs=len(pairs),
        counted=len(counted),
        unreadable=unreadable,
        unreadable_rate=unreadable / len(pairs) if pairs else None,
        dropped=dropped,
        verdict_ties=sum(o.verdict == "tie" for _, o in counted),
        inconsistent_orders=sum(o.inconsistent for o in outcomes),
        equal_scores=sum(o.equal for o in outcomes),
        accuracy=Metric.of(win_rate_ci([o.credit or 0.0 for _, o in counted], clusters)),
        agreement_with_ties=Metric.of(
            proportion_ci([a == b for a, b in zip(labels, verdicts, strict=True)], class_clusters)
        ),
        agreement_without_ties=Metric.of(
            proportion_ci([x for x, _ in no_ties], [c for _, c in no_ties])
        ),
        macro_f1=Metric.of(macro_f1(labels, verdicts, class_clusters)),
        kappa=Metric.of(cohen_kappa(labels, verdicts, class_clusters)),
        confusion=confusion,
    )


def pairwise_agreement(
    pairs: Sequence[RecordedPair],
    rules: PairRules | None = None,
    *,
    by: Sequence[str] = (),
) -> PairAgreement:
    """Agreement of each pair's verdict (or scores) with its label, overall and per slice.

    Args:
        pairs: The labelled pairs with their verdicts or reward scores.
        rules: How orders, ties, equal scores and unreadable verdicts count (the defaults
            credit no abstention and no order-dependent verdict).
        by: Keys of ``fields`` to slice by (a pair without the key is in ``(missing)``).

    Examples:
        >>> abstains = [RecordedPair(id=str(i), label="A", verdicts=[0.5, 0.5]) for i in range(4)]
        >>> pairwise_agreement(abstains).accuracy.estimate
        0.0
    """
    rules = rules or PairRules()
    report = _report(pairs, rules)
    for key in by:
        groups: dict[str, list[RecordedPair]] = {}
        for p in pairs:
            groups.setdefault(str(p.fields.get(key, "(missing)")), []).append(p)
        report.slices[key] = {value: _report(g, rules) for value, g in sorted(groups.items())}
    return report
