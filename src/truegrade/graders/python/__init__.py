"""Bring-your-own graders: a reward function in TRL or verl signature, run in killable workers."""

from truegrade.graders.python._grader import PythonGrader, PythonOptions

__all__ = [
    "PythonGrader",
    "PythonOptions",
]
