"""``instructions``: IFEval's verifiable instruction-following constraints ("no commas", "at
least 300 words", "end with this phrase"...), strict or loose as IFEval defines them, one verdict
per constraint, and hardened against responses that meet the constraints without attempting the
request (echoing the prompt, stuffing keywords, saying nothing)."""

from truegrade.graders.instructions._checks import (
    CONSTRAINED_OPTIONS,
    Checker,
    Constraint,
    parse_constraints,
)
from truegrade.graders.instructions._grader import (
    InstructionFlag,
    InstructionsGrader,
    InstructionsOptions,
    constraints_of,
)

__all__ = [
    "CONSTRAINED_OPTIONS",
    "Checker",
    "Constraint",
    "InstructionFlag",
    "InstructionsGrader",
    "InstructionsOptions",
    "constraints_of",
    "parse_constraints",
]
