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

from truegrade.probes._result import ProbeResult
from truegrade.probes._self_preference import (
    FAMILY_STYLES,
    SelfPreferenceItem,
    measure_self_preference,
)
from truegrade.probes._sets import bundled_probe_set, read_probe_set
from truegrade.probes._sycophancy import (
    SYCOPHANCY_KINDS,
    SycophancyItem,
    SycophancyVariant,
    measure_sycophancy,
)

__all__ = [
    "FAMILY_STYLES",
    "SYCOPHANCY_KINDS",
    "ProbeResult",
    "SelfPreferenceItem",
    "SycophancyItem",
    "SycophancyVariant",
    "bundled_probe_set",
    "measure_self_preference",
    "measure_sycophancy",
    "read_probe_set",
]
