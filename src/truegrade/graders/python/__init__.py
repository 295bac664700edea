"""Bring-your-own graders: a reward function in TRL or verl signature, run in killable workers."""

from truegrade.graders.python._grader import PythonGrader, PythonOptions, load_function
from truegrade.graders.python._signature import CallShape, classify, shape_from_callable

__all__ = [
    "CallShape",
    "PythonGrader",
    "PythonOptions",
    "classify",
    "load_function",
    "shape_from_callable",
]
