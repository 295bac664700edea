"""Bias probes that measure: sycophancy and self-preference of judges and reward models.

The ``judge`` grader guards against known judge biases (fences, both orders, a same-family
refusal); these probes *measure* two of them by asking the grader new, controlled questions:

* ``measure_sycophancy``: the same response graded with and without the user asserting a view
  (a wrong answer, a pushback): does the score move toward the user?
* ``measure_self_preference``: the same content in the judge's own family's style and in other
  families': does the judge prefer its own, at equal length?

Each returns a ``ProbeResult``: an estimate with an interval clustered on the probe item and a
verdict at a documented threshold. ``truegrade bias --probe`` runs them. Probe sets are read
with ``read_probe_set`` (Anthropic's user-view sycophancy rows are read as published) or come
bundled (``bundled_probe_set``). This is an analysis: it calls graders only through the
``Grader`` contract (``run_grader``).
"""

from truegrade.probes._result import (
    BIASED,
    NOT_DETECTED,
    NOT_MEASURED,
    ProbeResult,
    probe_verdict,
)
from truegrade.probes._self_preference import (
    FAMILY_STYLES,
    SELF_PREFERENCE_THRESHOLD,
    SelfPreferenceItem,
    judge_family_of,
    measure_self_preference,
    styled,
)
from truegrade.probes._sets import (
    bundled_probe_set,
    read_probe_set,
    sycophancy_items_from_user_view,
)
from truegrade.probes._sycophancy import (
    SYCOPHANCY_KINDS,
    SYCOPHANCY_TEMPLATES,
    SYCOPHANCY_THRESHOLD,
    SycophancyItem,
    SycophancyVariant,
    measure_sycophancy,
    sycophancy_variants,
    with_user_turn,
)

__all__ = [
    "BIASED",
    "FAMILY_STYLES",
    "NOT_DETECTED",
    "NOT_MEASURED",
    "SELF_PREFERENCE_THRESHOLD",
    "SYCOPHANCY_KINDS",
    "SYCOPHANCY_TEMPLATES",
    "SYCOPHANCY_THRESHOLD",
    "ProbeResult",
    "SelfPreferenceItem",
    "SycophancyItem",
    "SycophancyVariant",
    "bundled_probe_set",
    "judge_family_of",
    "measure_self_preference",
    "measure_sycophancy",
    "probe_verdict",
    "read_probe_set",
    "styled",
    "sycophancy_items_from_user_view",
    "sycophancy_variants",
    "with_user_turn",
]
