"""``code``: Python programs graded by their tests, run in a sandbox.

The program runs isolated (``truegrade.sandbox``) and only ever receives inputs; the tests'
logic and expected values stay in a trusted harness outside the sandbox, and every answer comes
back as plain builtin data (exact types) before anything compares it.
"""

from truegrade.graders.code._grader import (
    CodeGrader,
    CodeOptions,
    StdioTask,
    allow_unsandboxed,
    runs_programs_sandboxed,
    stdio_task,
)
from truegrade.graders.code._harness import CodeFlag, CodeKernel, values_match
from truegrade.graders.code._program import build_program, extract_code
from truegrade.graders.code._rows import reference_solution
from truegrade.graders.code._spec import SpecProblem, TestSpec, parse_spec
from truegrade.graders.code._tells import TellFlag, find_tells, visible_inputs

__all__ = [
    "CodeFlag",
    "CodeGrader",
    "CodeKernel",
    "CodeOptions",
    "SpecProblem",
    "StdioTask",
    "TellFlag",
    "TestSpec",
    "allow_unsandboxed",
    "build_program",
    "extract_code",
    "find_tells",
    "parse_spec",
    "reference_solution",
    "runs_programs_sandboxed",
    "stdio_task",
    "values_match",
    "visible_inputs",
]
