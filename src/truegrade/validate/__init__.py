"""Validation against labels: false pass rate (the hackable direction), false fail rate,
accuracy, kappa and AUROC, each with an interval clustered on the prompt; and pairwise accuracy
on preference data (chosen versus rejected); and agreement of recorded pairwise verdicts with
pairwise labels under named rules (how orders, ties and unreadable verdicts count), with readers
for published verdict files."""

from truegrade.validate._agreement import (
    PairAgreement,
    PairRules,
    RecordedPair,
    pairwise_agreement,
    winner_of,
)
from truegrade.validate._pairwise import (
    PairwiseReport,
    PairwiseSlice,
    is_preference_row,
    validate_pairwise,
)
from truegrade.validate._recorded import (
    VERDICT_FORMATS,
    detect_format,
    read_alpaca_eval,
    read_grades_pairs,
    read_judgebench,
    read_mt_bench,
)
from truegrade.validate._validate import (
    Confusion,
    Disagreement,
    Metric,
    SliceReport,
    ValidationReport,
    validate_grades,
)

__all__ = [
    "VERDICT_FORMATS",
    "Confusion",
    "Disagreement",
    "Metric",
    "PairAgreement",
    "PairRules",
    "PairwiseReport",
    "PairwiseSlice",
    "RecordedPair",
    "SliceReport",
    "ValidationReport",
    "detect_format",
    "is_preference_row",
    "pairwise_agreement",
    "read_alpaca_eval",
    "read_grades_pairs",
    "read_judgebench",
    "read_mt_bench",
    "validate_grades",
    "validate_pairwise",
    "winner_of",
]
