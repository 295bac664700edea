"""``math``: the hardened math answer grader.

One final answer or it fails; exact equivalence unless a tolerance is asked for; units, percent
signs and interval brackets mean what they say; every grade carries its reason as flags
(``exact_match``, ``equivalent_numeric``, ``equivalent_symbolic``, ``hedged``, ``no_answer``,
``unit_mismatch``, ``percent_mismatch``, ``interval_mismatch``, ``false_relation``,
``parse_error``, ``too_complex``, ``timeout``...). The work runs in the engine's killable workers
with a 2 s CPU-time deadline per item by default; model text is parsed only there and never
evaluated.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from truegrade.core import Sample
from truegrade.graders._kernel import GraderOptions, Kernel, KernelGrader
from truegrade.graders.math._check import MathKernel

__all__ = ["MathGrader", "MathOptions"]


class MathOptions(GraderOptions):
    """Options of ``math``.

    Attributes:
        extract: Which statements count as the final answer: ``both`` (``\\boxed{}`` and
            ``Final answer:`` lines, the default), ``boxed`` or ``answer_line``. With lines
            counted and no explicit statement, "the answer is ..." sentences count, and then a
            short response's one math span or lone number (docs/math.md). Whatever counts,
            two different answers fail as ``hedged``.
        abs_tol: Accept ``|answer - gold| <= abs_tol`` (default 0: exact). It makes any two
            numbers closer than it equal, however small they are (with 1e-6, ``2^-99`` passes
            for ``2^-98``): prefer ``rel_tol`` where answers can be tiny.
        rel_tol: Accept ``|answer - gold| <= rel_tol * |gold|`` (default 0: exact).
        angles: Treat a degree sign as pi/180 (``45^\\circ`` equals ``\\frac{\\pi}{4}``);
            without it a degree sign is ignored when comparing numbers.
        answer_tags: Tags whose contents state the answer (default ``answer``: the
            ``<answer>18</answer>`` of R1-style GRPO recipes); ``[]`` reads none.
    """

    extract: Literal["both", "boxed", "answer_line"] = "both"
    abs_tol: float = Field(default=0.0, ge=0)
    rel_tol: float = Field(default=0.0, ge=0)
    angles: bool = False
    answer_tags: list[str] = Field(default_factory=lambda: ["answer"])

    @field_validator("answer_tags")
    @classmethod
    def _tag_names(cls, value: list[str]) -> list[str]:
        bad = [t for t in value if not re.fullmatch(r"[A-Za-z][\w.-]{0,39}", t)]
        if bad:
            raise ValueError(f"a tag is a name like 'answer', not {bad[0]!r}")
        return value


class MathGrader(KernelGrader):
    """Final-answer grading for math, strict by default.

    Examples:
        >>> g = MathGrader.from_options({})
        >>> g.grade({"id": 1, "response": r"so \\boxed{\\dfrac{1}{2}}", "reference": "0.5"}).flags
        ['equivalent_numeric']
    """

    kind = "math"
    family = "math"
    Options = MathOptions
    default_execution = "process"
    inline_refused = "parsing LaTeX and simplifying with SymPy can take unbounded time"
    default_timeout_s = 2.0
    options: MathOptions

    def kernel(self) -> Kernel:
        o = self.options
        return MathKernel(
            boxes=o.extract in ("both", "boxed"),
            lines=o.extract in ("both", "answer_line"),
            abs_tol=o.abs_tol,
            rel_tol=o.rel_tol,
            angles=o.angles,
            tags=tuple(o.answer_tags),
        )

    def payload(self, sample: Sample) -> Any:
        return (sample.response_text, sample.reference)
