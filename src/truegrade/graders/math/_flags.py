"""The flags of the ``math`` grader, in one place (docs/math.md lists them with the rest)."""

from __future__ import annotations

__all__ = ["MathFlag"]


class MathFlag:
    """Flags the ``math`` grader raises, besides the shared ones of ``truegrade.core.Flag``
    (``exact_match``, ``hedged``, ``no_answer``, ``bad_reference``, ``timeout``).

    A passing grade's first flag says how the answer matched (``exact_match`` or one of the
    ``equivalent_`` / ``within_`` flags); a failing one's say why, when there is more to say
    than "a different answer".
    """

    EQUIVALENT_NUMERIC = "equivalent_numeric"
    """The same number, written differently (``0.5`` for ``\\frac{1}{2}``)."""
    EQUIVALENT_SYMBOLIC = "equivalent_symbolic"
    """Equal once parsed: the same expression, set, relation or time, written differently."""
    WITHIN_ABS_TOL = "within_abs_tol"
    """Not equal, but within the ``abs_tol`` option."""
    WITHIN_REL_TOL = "within_rel_tol"
    """Not equal, but within the ``rel_tol`` option."""
    UNIT_MISMATCH = "unit_mismatch"
    """The answer's unit is not the reference's."""
    PERCENT_MISMATCH = "percent_mismatch"
    """The answer is a percentage and the reference is not (a percent is never rescaled)."""
    INTERVAL_MISMATCH = "interval_mismatch"
    """The same ends with other brackets, or an interval for a tuple or set (or back)."""
    FALSE_RELATION = "false_relation"
    """The answer chains equalities (``a = b = c``), and one of them does not hold."""
    PARSE_ERROR = "parse_error"
    """The answer is not one well-formed expression the parser can read."""
    TOO_COMPLEX = "too_complex"
    """The answer cannot be checked without evaluating something huge (``9^{9^9}``)."""
    ANSWER_TOO_LONG = "answer_too_long"
    """The final answer is over the length the grader reads."""
