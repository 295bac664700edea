"""Validation against labels: false pass rate (the hackable direction), false fail rate,
accuracy, kappa and AUROC, each with an interval clustered on the prompt; and pairwise accuracy
on preference data (chosen versus rejected)."""

from truegrade.validate._pairwise import (
    PairwiseReport,
    PairwiseSlice,
    is_preference_row,
    validate_pairwise,
)
from truegrade.validate._validate import (
    Confusion,
    Disagreement,
    Metric,
    SliceReport,
    ValidationReport,
    field_value,
    label_verdict,
    validate_grades,
)

__all__ = [
    "Confusion",
    "Disagreement",
    "Metric",
    "PairwiseReport",
    "PairwiseSlice",
    "SliceReport",
    "ValidationReport",
    "field_value",
    "is_preference_row",
    "label_verdict",
    "validate_grades",
    "validate_pairwise",
]
