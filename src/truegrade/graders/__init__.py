"""Built-in graders. Each lives in its own subpackage and is loaded by name through
``truegrade.load_grader``; this package only exports the shared base for writing new ones."""

from truegrade.graders._kernel import (
    GraderOptions,
    Kernel,
    KernelGrader,
    grade_from_outcome,
    grade_from_verdict,
    set_timeout,
    verdict,
    walk,
)

__all__ = [
    "GraderOptions",
    "Kernel",
    "KernelGrader",
    "grade_from_outcome",
    "grade_from_verdict",
    "set_timeout",
    "verdict",
    "walk",
]
