"""``math``: final-answer grading for mathematics that does not reward hedges, near misses,
unit swaps or garbage after the answer. Built on Math-Verify's LaTeX parser; strict by default."""

from truegrade.graders.math._flags import MathFlag
from truegrade.graders.math._grader import MathGrader, MathOptions
from truegrade.graders.math._normalize import Answer, normalize_answer, unit_key

__all__ = [
    "Answer",
    "MathFlag",
    "MathGrader",
    "MathOptions",
    "normalize_answer",
    "unit_key",
]
