"""Built-in graders. Each lives in its own subpackage and is loaded by name through
``truegrade.load_grader``; this package exports what a grader author builds on (CONTRIBUTING,
"Adding a grader"): the kernel base and its options, the verdict helpers, and the final-answer
extraction and number reading the built-in graders share."""

from truegrade.graders._extract import final_answers
from truegrade.graders._kernel import (
    GraderOptions,
    Kernel,
    KernelGrader,
    error_verdict,
    set_timeout,
    validate_options,
    verdict,
    walk,
)
from truegrade.graders._numbers import ParsedNumber, parse_number

__all__ = [
    "GraderOptions",
    "Kernel",
    "KernelGrader",
    "ParsedNumber",
    "error_verdict",
    "final_answers",
    "parse_number",
    "set_timeout",
    "validate_options",
    "verdict",
    "walk",
]
