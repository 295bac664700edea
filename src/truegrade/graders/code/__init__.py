"""``code``: programs graded by their tests, run in a sandbox (Python functions; stdin/stdout
programs in eight languages; Kattis/ICPC problem packages read as they are).

The program runs isolated (``truegrade.sandbox``) and only ever receives inputs; the tests'
logic and expected values stay in a trusted harness outside the sandbox, and every answer comes
back as plain builtin data (exact types) before anything compares it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_modules

if TYPE_CHECKING:
    from truegrade.graders.code._compile import ensure_pch, pch_status
    from truegrade.graders.code._grader import (
        CodeGrader,
        CodeOptions,
        StdioTask,
        allow_unsandboxed,
        max_cpu_s,
        runs_programs_sandboxed,
        stdio_task,
    )
    from truegrade.graders.code._harness import CodeFlag
    from truegrade.graders.code._languages import language_named, toolchain
    from truegrade.graders.code._package import (
        Package,
        PackageProblem,
        Submission,
        read_package,
        time_limit_from,
    )
    from truegrade.graders.code._rows import reference_solution
    from truegrade.graders.code._spec import SpecProblem, TestSpec, parse_spec
    from truegrade.graders.code._stdio import VERDICTS
    from truegrade.graders.code._tells import TellFlag

__all__ = [
    "VERDICTS",
    "CodeFlag",
    "CodeGrader",
    "CodeOptions",
    "Package",
    "PackageProblem",
    "SpecProblem",
    "StdioTask",
    "Submission",
    "TellFlag",
    "TestSpec",
    "allow_unsandboxed",
    "ensure_pch",
    "language_named",
    "max_cpu_s",
    "parse_spec",
    "pch_status",
    "read_package",
    "reference_solution",
    "runs_programs_sandboxed",
    "stdio_task",
    "time_limit_from",
    "toolchain",
]

_HOMES = {
    "truegrade.graders.code._compile": (
        "ensure_pch",
        "pch_status",
    ),
    "truegrade.graders.code._grader": (
        "CodeGrader",
        "CodeOptions",
        "StdioTask",
        "allow_unsandboxed",
        "max_cpu_s",
        "runs_programs_sandboxed",
        "stdio_task",
    ),
    "truegrade.graders.code._harness": ("CodeFlag",),
    "truegrade.graders.code._languages": (
        "language_named",
        "toolchain",
    ),
    "truegrade.graders.code._package": (
        "Package",
        "PackageProblem",
        "Submission",
        "read_package",
        "time_limit_from",
    ),
    "truegrade.graders.code._rows": ("reference_solution",),
    "truegrade.graders.code._spec": (
        "SpecProblem",
        "TestSpec",
        "parse_spec",
    ),
    "truegrade.graders.code._stdio": ("VERDICTS",),
    "truegrade.graders.code._tells": ("TellFlag",),
}
"""Where each name lives: its module is imported when the name is first read, so importing
the package (as every worker process does, for the one kernel it runs) costs nothing."""

__getattr__, __dir__ = lazy_modules(globals(), _HOMES)
