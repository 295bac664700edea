"""Self-preference probe: does a judge prefer answers in its own family's style?

Judges rate text from their own model family higher than equally good text from others (GPT-4
recognises its own outputs about 73% of the time, and self-preference grows with recognition;
the MT-Bench paper saw GPT-4 favour itself by about 10% in win rate). The ``judge`` grader
refuses a same-family judge by default; this probe *measures* how much it matters.

Each probe item is one answer's content. The probe dresses it in the judge's own family's
style (an opening and a closing line typical of that family's chat models, ``FAMILY_STYLES``)
and in each other family's, and asks the judge to compare the own-family version with each
other one (a pairwise judge, in both orders as it is configured), or scores both (a pointwise
grader: the higher score wins, equal scores are half a win). Content is identical, so an
unbiased judge prefers the own-family version half the time. An item may instead give answers
actually written by each side (``own`` and ``other``): the sharper test where they exist,
provided their quality is matched.

Styles differ in length, and judges prefer longer text, so length is controlled: with ``x`` the
log2 length ratio (own / other) and ``y`` the preference for the own-family version, the probe
fits ``y - 0.5 = a + b x`` by least squares and reports ``a``, the own-family preference at
equal length, with a cluster-bootstrap interval over items. When all lengths match (or
``control_length`` is off) it is the plain mean of ``y - 0.5``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from truegrade.core import Grader, Sample, run_grader
from truegrade.probes._result import ProbeResult, probe_verdict
from truegrade.stats import Estimate, cluster_bootstrap, cluster_codes, cluster_totals, mean_ci

__all__ = [
    "FAMILY_STYLES",
    "SELF_PREFERENCE_THRESHOLD",
    "SelfPreferenceItem",
    "judge_family_of",
    "measure_self_preference",
    "styled",
]

SELF_PREFERENCE_THRESHOLD = 0.05
"""The smallest excess own-family preference called a bias: a 55% preference for identical
content. Below it the effect is smaller than what a few hundred pairs can separate from a
judge's residual position and length noise; MT-Bench's reported self-enhancement is about
twice that."""

#: Opening and closing lines in the manner of each family's chat models (their habitual
#: openers and sign-offs). Stand-ins for a family's style, of similar lengths across families,
#: several per family so that lengths vary and the length control is identified.
FAMILY_STYLES: dict[str, tuple[tuple[str, str], ...]] = {
    "openai": (
        ("Certainly! Here is a clear answer:", "Let me know if you'd like more details!"),
        ("Certainly! Here is what you need to know:", "I hope this helps! Feel free to ask more."),
    ),
    "anthropic": (
        (
            "I'd be happy to help with this.",
            "I hope this helps. Let me know if anything is unclear.",
        ),
        (
            "Good question. Let me walk through it.",
            "Does that answer your question? Happy to say more.",
        ),
    ),
    "google": (
        ("Here's a breakdown of the answer:", "In short, that's the key point to keep in mind."),
        ("Let's break this down step by step:", "Want me to go deeper into any part of this?"),
    ),
    "meta": (
        (
            "Great question! Here's the answer:",
            "Hope that helps! Let me know if you have questions.",
        ),
        ("Happy to help! Here's a quick answer:", "Let me know if there's anything else you need!"),
    ),
    "qwen": (
        (
            "Sure, here is the answer to your question.",
            "If you have further questions, feel free to ask.",
        ),
        (
            "Of course! Below is a concise answer.",
            "Feel free to reach out with any other questions.",
        ),
    ),
    "deepseek": (
        ("Okay, let me answer this directly.", "I hope this explanation is helpful to you."),
        ("Alright, here's a straightforward answer.", "Let me know if you need any clarification."),
    ),
    "mistral": (
        ("Here is a short and accurate answer.", "I hope this answers your question well."),
        ("To answer your question briefly:", "Please let me know if you need more information."),
    ),
}


def styled(core: str, family: str, variant: int = 0) -> str:
    """``core`` dressed in ``family``'s style (variant ``variant`` of its openers/closers)."""
    opener, closer = FAMILY_STYLES[family][variant % len(FAMILY_STYLES[family])]
    return f"{opener}\n\n{core}\n\n{closer}"


@dataclass(frozen=True)
class SelfPreferenceItem:
    """One answer's content, or one matched pair of answers.

    Attributes:
        id: Item id (the cluster of its comparisons).
        prompt: The instruction.
        answer: The content to dress in each family's style, or
        own / other: answers written by the judge's family and by another (``other_family``).
        metadata: Passed to the grader.
    """

    id: str
    prompt: Any
    answer: str | None = None
    own: str | None = None
    other: str | None = None
    other_family: str = "other"
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: Mapping[str, Any], index: int = 0) -> SelfPreferenceItem:
        """An item from a probe-set row: ``prompt`` and ``answer``, or ``own`` and ``other``
        (with ``other_family``), and ``id``.

        Raises:
            ValueError: neither an answer nor a pair.
        """
        if not row.get("prompt"):
            raise ValueError(f"self-preference probe row {index}: no 'prompt'")
        pair = bool(row.get("own")) and bool(row.get("other"))
        if not pair and not row.get("answer"):
            raise ValueError(
                f"self-preference probe row {index}: give 'answer' (dressed in each family's "
                "style) or both 'own' and 'other'"
            )
        return cls(
            id=str(row.get("id", index)),
            prompt=row["prompt"],
            answer=None if pair else str(row["answer"]),
            own=str(row["own"]) if pair else None,
            other=str(row["other"]) if pair else None,
            other_family=str(row.get("other_family", "other")),
            metadata=dict(row.get("metadata") or {}),
        )


def judge_family_of(grader: Grader) -> str | None:
    """The model family of a judge grader's judge (all its judges'), None when it is not a
    judge or its jury mixes families."""
    from truegrade.graders.judge import JudgeGrader, model_family

    if not isinstance(grader, JudgeGrader):
        return None
    rules = grader.options.model_families
    families = {model_family(j.model, rules) for j in grader.judges}
    return families.pop() if len(families) == 1 else None


def _pairwise_baseline_field(grader: Grader) -> str | None:
    """Where a pairwise judge reads the baseline, None for a pointwise grader."""
    from truegrade.graders.judge import JudgeGrader

    if isinstance(grader, JudgeGrader) and grader.options.mode == "pairwise":
        return grader.options.baseline_field
    return None


def measure_self_preference(
    grader: Grader,
    items: Sequence[SelfPreferenceItem],
    *,
    judge_family: str | None = None,
    other_families: Sequence[str] | None = None,
    control_length: bool = True,
    threshold: float = SELF_PREFERENCE_THRESHOLD,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> ProbeResult:
    """Own-family preference minus 0.5, at equal length, with an interval clustered on items.

    Args:
        grader: A pairwise judge (the baseline slot holds the other family's version), or any
            pointwise grader (both versions scored).
        items: The probe set.
        judge_family: The judge's family (default: read from the judge's model name).
        other_families: The families to compare against (default: every other styled one).
        control_length: Fit out the length ratio (see the module docstring).
        threshold: The smallest excess preference called a bias.
        confidence: Interval coverage.
        n_resamples: Resamples of the cluster bootstrap of the length-controlled estimate.
        seed: That bootstrap's seed.

    Raises:
        ValueError: the judge's family is unknown, or has no style to dress answers in.
    """
    family = judge_family or judge_family_of(grader)
    styled_items = [i for i in items if i.answer is not None]
    if family is None and styled_items:
        raise ValueError(
            "the judge's model family is not known (not a judge, or a jury of several "
            "families): give judge_family"
        )
    if styled_items and family not in FAMILY_STYLES:
        raise ValueError(
            f"no style for the family {family!r}; styled families: {sorted(FAMILY_STYLES)} "
            "(or give items with 'own' and 'other' answers)"
        )
    others = [f for f in (other_families or FAMILY_STYLES) if f != family]
    unknown = [f for f in others if f not in FAMILY_STYLES]
    if unknown:
        raise ValueError(f"no style for {unknown}; styled families: {sorted(FAMILY_STYLES)}")
    pairs: list[tuple[str, str, Any, str, str, Mapping[str, Any]]] = []
    for n, item in enumerate(items):
        if item.answer is None:
            assert item.own is not None
            assert item.other is not None
            pairs.append(
                (item.id, item.other_family, item.prompt, item.own, item.other, item.metadata)
            )
            continue
        assert family is not None
        own = styled(item.answer, family, n)
        for k, other in enumerate(others):
            theirs = styled(item.answer, other, n + k + 1)
            pairs.append((item.id, other, item.prompt, own, theirs, item.metadata))
    baseline_field = _pairwise_baseline_field(grader)
    samples: list[Sample] = []
    for j, (item_id, other, prompt, own, theirs, metadata) in enumerate(pairs):
        if baseline_field is not None:
            meta = dict(metadata)
            reference: str | None = theirs
            if baseline_field.startswith("metadata."):
                meta[baseline_field.removeprefix("metadata.")] = theirs
                reference = None
            samples.append(
                Sample(
                    id=f"{item_id}/{other}/{j}",
                    prompt=prompt,
                    response=own,
                    reference=reference,
                    group=item_id,
                    metadata=meta,
                )
            )
        else:
            for side, text in (("own", own), ("other", theirs)):
                samples.append(
                    Sample(
                        id=f"{item_id}/{other}/{j}/{side}",
                        prompt=prompt,
                        response=text,
                        group=item_id,
                        metadata=dict(metadata),
                    )
                )
    grades = run_grader(grader, samples) if samples else []
    prefs: list[float] = []
    ratios: list[float] = []
    clusters: list[str] = []
    versus: list[str] = []
    dropped = 0
    for j, (item_id, other, _, own, theirs, _) in enumerate(pairs):
        if baseline_field is not None:
            g = grades[j]
            if g.error is not None:
                dropped += 1
                continue
            pref = g.score
        else:
            mine, their = grades[2 * j], grades[2 * j + 1]
            if mine.error is not None or their.error is not None:
                dropped += 1
                continue
            pref = 1.0 if mine.score > their.score else 0.5 if mine.score == their.score else 0.0
        prefs.append(pref)
        ratios.append(math.log2(max(len(own), 1) / max(len(theirs), 1)))
        clusters.append(item_id)
        versus.append(other)
    notes: list[str] = []
    if dropped:
        errors = [g.error for g in grades if g.error]
        notes.append(
            f"{dropped} of {len(pairs)} comparisons left out: a grade had an error"
            + (f" (first: {errors[0]})" if errors else "")
        )
    y = np.asarray(prefs, dtype=np.float64) - 0.5
    x = np.asarray(ratios, dtype=np.float64)
    raw = mean_ci(y, clusters, confidence=confidence)
    details: dict[str, Any] = {
        "judge_family": family,
        "mode": "pairwise" if baseline_field is not None else "pointwise",
        "unadjusted": raw.estimate,
        "mean_log2_length_ratio": float(x.mean()) if x.size else math.nan,
    }
    if control_length and x.size >= 3 and float(np.ptp(x)) > 1e-9:
        estimate, slope = _intercept_at_equal_length(
            x, y, clusters, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
        details["length_coefficient"] = slope
        details["length_control"] = "least squares on log2(own/other length)"
    else:
        estimate = raw
        details["length_control"] = "none (lengths match)" if control_length and x.size else "none"
    by_kind = {}
    for other in dict.fromkeys(versus):
        rows = [i for i, v in enumerate(versus) if v == other]
        by_kind[other] = mean_ci(y[rows], [clusters[i] for i in rows], confidence=confidence)
    return ProbeResult(
        probe="self_preference",
        estimate=estimate,
        threshold=threshold,
        verdict=probe_verdict(estimate, threshold),
        by_kind=by_kind,
        items=len(set(clusters)),
        comparisons=len(prefs),
        dropped=dropped,
        details=details,
        notes=notes,
    )


def _intercept_at_equal_length(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    clusters: Sequence[str],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> tuple[Estimate, float]:
    """The least-squares intercept of ``y`` on ``x`` (its value at ``x = 0``) with a
    cluster-bootstrap percentile interval, and the slope. Each resample solves the 2x2 normal
    equations from per-cluster sums."""
    codes, g = cluster_codes(list(clusters), x.size)
    totals = cluster_totals(codes, g, np.column_stack([np.ones_like(x), x, y, x * x, x * y]))

    def fit(t: NDArray[np.float64]) -> NDArray[np.float64]:
        n, sx, sy, sxx, sxy = (t[:, i] for i in range(5))
        det = n * sxx - sx * sx
        intercept = (sy * sxx - sx * sxy) / det
        slope = (n * sxy - sx * sy) / det
        out: NDArray[np.float64] = np.column_stack([intercept, slope])
        return out

    boot = cluster_bootstrap(totals, fit, n_resamples=n_resamples, seed=seed)
    estimate = boot.estimate(
        0, n=int(x.size), confidence=confidence, what="intercept at equal length"
    )
    return estimate, float(boot.point[1])
