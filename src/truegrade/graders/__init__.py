"""Built-in graders. Each lives in its own subpackage and is loaded by name through
``truegrade.load_grader``; this package exports what a grader author builds on (CONTRIBUTING,
"Adding a grader"): the kernel base and its options, the verdict helpers, and the final-answer
extraction and number reading the built-in graders share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_modules

if TYPE_CHECKING:
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

_HOMES = {
    "truegrade.graders._extract": ("final_answers",),
    "truegrade.graders._kernel": (
        "GraderOptions",
        "Kernel",
        "KernelGrader",
        "error_verdict",
        "set_timeout",
        "validate_options",
        "verdict",
        "walk",
    ),
    "truegrade.graders._numbers": (
        "ParsedNumber",
        "parse_number",
    ),
}
"""Where each name lives: its module is imported when the name is first read, so importing
the package (as every worker process does, for the one kernel it runs) costs nothing."""

__getattr__, __dir__ = lazy_modules(globals(), _HOMES)
