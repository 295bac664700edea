"""How biased is a judge? Its recorded verdicts say, with confidence intervals.

Three measurements, each on verdicts the judge already gave (no new calls):

* **P(prefers longer)**: over pairs whose outputs differ in length, the judge's mean preference
  for the longer one. 0.5 is no length bias. (AlpacaEval's GPT-4 judge audit: 0.606.)
* **P(prefers first)**: where the order the judge saw is known, its mean preference for the
  output shown first. 0.5 is no position bias. With both orders judged, position consistency
  (the share of pairs with the same verdict either way) is reported too.
* **Score-length correlation**: for pointwise scores, the rank (Spearman) correlation between
  score and response length.

Intervals cluster on the instruction (or the pair): the two orders of one pair, or one
instruction judged for many models, are not independent evidence. Pure numerics: no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from truegrade.lc._table import PreferenceTable
from truegrade.stats import Estimate, cluster_bootstrap, cluster_codes, cluster_totals, mean_ci

__all__ = [
    "BiasReport",
    "bias_report",
    "length_preference",
    "position_preference",
    "score_length_correlation",
]


def length_preference(
    preference: ArrayLike,
    model_chars: ArrayLike,
    baseline_chars: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
) -> Estimate:
    """P(the judge prefers the longer output), over pairs of different lengths.

    Args:
        preference: P(the model's output is better), per pair.
        model_chars: The model output's length.
        baseline_chars: The baseline output's length.
        clusters: Cluster id per pair (the instruction), for the interval.
        confidence: Interval coverage.
    """
    pref = np.asarray(preference, dtype=np.float64)
    ours = np.asarray(model_chars, dtype=np.float64)
    theirs = np.asarray(baseline_chars, dtype=np.float64)
    differ = ours != theirs
    longer = np.where(ours > theirs, pref, 1.0 - pref)[differ]
    kept = None if clusters is None else [c for c, d in zip(clusters, differ, strict=True) if d]
    return mean_ci(longer, kept, confidence=confidence)


def position_preference(
    prefers_first: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
) -> Estimate:
    """P(the judge prefers the output shown first): the mean of per-verdict probabilities."""
    return mean_ci(np.asarray(prefers_first, dtype=np.float64), clusters, confidence=confidence)


def score_length_correlation(
    scores: ArrayLike,
    lengths: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Spearman correlation of score and length, with a cluster-bootstrap percentile interval.

    The ranks are taken once on the whole sample (average ranks for ties); each resample
    computes Pearson's correlation of those ranks from per-cluster sums, so thousands of
    resamples cost a few matrix products.
    """
    from scipy.stats import rankdata

    s = np.asarray(scores, dtype=np.float64)
    n_len = np.asarray(lengths, dtype=np.float64)
    if s.size != n_len.size:
        raise ValueError("scores and lengths must have the same size")
    if s.size < 3 or np.ptp(s) == 0 or np.ptp(n_len) == 0:
        return Estimate.undefined(
            "needs at least 3 items with varying scores and lengths",
            n=int(s.size),
            clusters=int(s.size),
            confidence=confidence,
        )
    a, b = rankdata(s), rankdata(n_len)
    codes, g = cluster_codes(clusters, s.size)
    columns = np.column_stack([np.ones_like(a), a, b, a * a, b * b, a * b])
    totals = cluster_totals(codes, g, columns)

    def pearson(t: NDArray[np.float64]) -> NDArray[np.float64]:
        n, sa, sb, saa, sbb, sab = (t[:, i] for i in range(6))
        cov = sab - sa * sb / n
        out: NDArray[np.float64] = cov / np.sqrt((saa - sa * sa / n) * (sbb - sb * sb / n))
        return out

    boot = cluster_bootstrap(totals, pearson, n_resamples=n_resamples, seed=seed)
    return boot.estimate(0, n=int(s.size), confidence=confidence, what="Spearman")


@dataclass(frozen=True)
class BiasReport:
    """A judge's measured biases; ``None`` where the verdicts cannot show one.

    Attributes:
        n: Verdicts read.
        prefers_longer: P(prefers the longer output), overall.
        prefers_longer_by_model: The same, per compared model.
        prefers_first: P(prefers the output shown first), where the order is known.
        position_consistency: Share of pairs judged the same way in both orders.
        score_length: Spearman correlation of pointwise scores with length.
        notes: What could not be measured, and why.
    """

    n: int
    prefers_longer: Estimate | None = None
    prefers_longer_by_model: dict[str, Estimate] = field(default_factory=dict)
    prefers_first: Estimate | None = None
    position_consistency: Estimate | None = None
    score_length: Estimate | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""

        def plain(e: Estimate | None) -> dict[str, Any] | None:
            return None if e is None else e.to_dict()

        return {
            "n": self.n,
            "prefers_longer": plain(self.prefers_longer),
            "prefers_longer_by_model": {
                k: plain(v) for k, v in self.prefers_longer_by_model.items()
            },
            "prefers_first": plain(self.prefers_first),
            "position_consistency": plain(self.position_consistency),
            "score_length": plain(self.score_length),
            "notes": list(self.notes),
        }


def bias_report(
    table: PreferenceTable | None = None,
    *,
    consistent: ArrayLike | None = None,
    consistency_clusters: Sequence[Hashable] | None = None,
    scores: ArrayLike | None = None,
    score_lengths: ArrayLike | None = None,
    score_clusters: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
) -> BiasReport:
    """Every bias the given verdicts can show.

    Args:
        table: Pairwise verdicts (lengths always; order when ``first_is_model`` is recorded).
        consistent: 1/0 per pair judged in both orders: same verdict either way.
        consistency_clusters: Cluster id per such pair.
        scores: Pointwise scores.
        score_lengths: The lengths of the responses the ``scores`` score.
        score_clusters: Cluster id per score.
        confidence: Interval coverage.
    """
    notes: list[str] = []
    n = 0
    longer: Estimate | None = None
    by_model: dict[str, Estimate] = {}
    first: Estimate | None = None
    if table is not None and len(table):
        n += len(table)
        clusters = list(table.instructions)
        longer = length_preference(
            table.preference,
            table.model_chars,
            table.baseline_chars,
            clusters,
            confidence=confidence,
        )
        for model in table.model_names:
            rows = table.rows_of(model)
            if model == table.baseline:
                continue
            by_model[model] = length_preference(
                table.preference[rows],
                table.model_chars[rows],
                table.baseline_chars[rows],
                [clusters[i] for i in rows],
                confidence=confidence,
            )
        if table.first_is_model is not None:
            shown = table.first_is_model
            prefers_first = np.where(shown, table.preference, 1.0 - table.preference)
            first = position_preference(prefers_first, clusters, confidence=confidence)
        else:
            notes.append(
                "position preference: the order the judge saw is not recorded in these verdicts"
            )
    consistency: Estimate | None = None
    if consistent is not None:
        values = np.asarray(consistent, dtype=np.float64)
        if values.size:
            consistency = mean_ci(values, consistency_clusters, confidence=confidence)
    correlation: Estimate | None = None
    if scores is not None and score_lengths is not None:
        s = np.asarray(scores, dtype=np.float64)
        n += int(s.size)
        correlation = score_length_correlation(
            s, score_lengths, score_clusters, confidence=confidence
        )
    elif table is not None:
        notes.append("score-length correlation: no pointwise scores in these verdicts")
    return BiasReport(
        n=n,
        prefers_longer=longer,
        prefers_longer_by_model=by_model,
        prefers_first=first,
        position_consistency=consistency,
        score_length=correlation,
        notes=notes,
    )
