"""EvalPlus's comparison of an answer with the reference's, as its evaluator applies it
(``compare: evalplus``, written by the ``humaneval`` and ``mbpp`` presets for HumanEval+ and
MBPP+ rows).

EvalPlus runs the response in its own process and compares each answer with Python's ``==``;
where that fails and the task has a tolerance, the two must be of one type and length and
within ``numpy.allclose`` (``rtol`` 10⁻⁷, ``atol`` the row's). A row whose ``atol`` is 0 gets
10⁻⁶ from the first input whose expected answer is a float, or a flat list or tuple of floats,
on: EvalPlus sets the variable once and keeps it for the rest of that run, and it runs the base
inputs and the plus inputs apart.

Why Python's ``==`` is safe here, where the strict comparison exists for hostile objects: only
plain data leaves the sandbox, so both sides are builtin values rebuilt from JSON, and ``==``
between them runs no code of the program's. The differences from the strict rule are
EvalPlus's: ``0 == False``, ``1 == 1.0``, and NaN is not NaN.

What it must never do: raise, or take time superlinear in the answer (the sizes are capped by
the sandbox's output cap; comparisons are element by element).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["EVALPLUS_RTOL", "evalplus_match", "evalplus_tolerances"]

EVALPLUS_RTOL = 1e-7
"""``numpy.allclose``'s relative tolerance, which EvalPlus passes explicitly."""
_FLOAT_ATOL = 1e-6
_NUMBERS = (bool, int, float, complex)


def evalplus_tolerances(expected: Sequence[Any], atol: float, groups: Sequence[int]) -> list[float]:
    """The absolute tolerance EvalPlus applies to each case: the row's ``atol``, or where it is
    0, 10⁻⁶ from the first case whose expected answer is a float (or a flat list or tuple of
    floats) to the end of its group. ``groups`` are where each group after the first starts
    (the plus inputs, after the base inputs)."""
    starts = set(groups)
    out, current = [], atol
    for index, value in enumerate(expected):
        if index in starts:
            current = atol
        if current == 0 and _is_floats(value):
            current = _FLOAT_ATOL
        out.append(current)
    return out


def _is_floats(value: Any) -> bool:
    if type(value) is float:
        return True
    if type(value) in (list, tuple) and value:
        return all(type(item) is float for item in value)
    return False


def evalplus_match(answer: Any, expected: Any, atol: float) -> bool:
    """Whether EvalPlus passes ``answer`` where the reference answered ``expected``."""
    try:
        if answer == expected:
            return True
    except (ValueError, TypeError, RecursionError, OverflowError):  # never for plain data
        return False
    if atol == 0 or type(answer) is not type(expected):
        return False
    if isinstance(expected, (list, tuple)) and len(answer) != len(expected):
        return False
    try:
        return _allclose(answer, expected, atol)
    except (OverflowError, RecursionError):
        return False


def _allclose(answer: Any, expected: Any, atol: float, depth: int = 0) -> bool:
    """``numpy.allclose(answer, expected, rtol=1e-7, atol=atol)`` for what numpy reads as an
    array of numbers: numbers, and lists and tuples of them of one shape; anything else (a
    string, None, a dict, a ragged list) is refused, as numpy's comparison fails on it."""
    if isinstance(expected, _NUMBERS) and isinstance(answer, _NUMBERS):
        return _close(answer, expected, atol)
    if depth > 100 or not isinstance(expected, (list, tuple)):
        return False
    if not isinstance(answer, (list, tuple)) or len(answer) != len(expected):
        return False
    return all(_allclose(a, e, atol, depth + 1) for a, e in zip(answer, expected, strict=True))


def _close(answer: complex, expected: complex, atol: float) -> bool:
    """``|answer - expected| <= atol + rtol * |expected|``, numpy's ``isclose``: NaN is close to
    nothing, an infinity only to itself."""
    a, e = complex(answer), complex(expected)
    if any(math.isnan(x) for x in (a.real, a.imag, e.real, e.imag)):
        return False
    if any(math.isinf(x) for x in (a.real, a.imag, e.real, e.imag)):
        return a == e
    return abs(a - e) <= atol + EVALPLUS_RTOL * abs(e)
