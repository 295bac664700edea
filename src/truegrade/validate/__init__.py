"""Validation against labels: false pass rate (the hackable direction), false fail rate,
accuracy, kappa and AUROC, each with an interval clustered on the prompt."""

from truegrade.validate._validate import (
    Confusion,
    Disagreement,
    Metric,
    SliceReport,
    ValidationReport,
    label_verdict,
    validate_grades,
)

__all__ = [
    "Confusion",
    "Disagreement",
    "Metric",
    "SliceReport",
    "ValidationReport",
    "label_verdict",
    "validate_grades",
]
