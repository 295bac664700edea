"""Exact, bounded parsing of number literals: the fast path shared by the numeric graders.

Numbers are parsed into ``fractions.Fraction`` so ``0.1 + 0.2`` style float error never decides a
grade and ``1/2**98`` never equals ``1/2**99``. Nothing is evaluated: the parser accepts literal
forms only (integers with optional thousands separators, decimals, scientific notation, ``a/b``,
``\\frac{a}{b}``, a trailing percent sign) and refuses magnitudes that would make exact arithmetic
itself a denial of service.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

__all__ = ["MAX_DIGITS", "MAX_EXPONENT", "ParsedNumber", "parse_number", "within_tolerance"]

MAX_DIGITS = 4000
MAX_EXPONENT = 1000

_DECIMAL = re.compile(
    r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?|[+-]?\.\d+(?:[eE][+-]?\d+)?"
)
_RATIO = re.compile(r"([+-]?\d+)[ \t]*/[ \t]*(\d+)")
_LATEX_FRAC = re.compile(
    r"([+-]?)[ \t]*\\[dt]?frac[ \t]*\{[ \t]*([+-]?\d+)[ \t]*\}[ \t]*\{[ \t]*(\d+)[ \t]*\}"
)
_LATEX_FRAC_SHORT = re.compile(r"([+-]?)[ \t]*\\[dt]?frac(\d)(\d)")


@dataclass(frozen=True)
class ParsedNumber:
    """A parsed literal: its exact value, whether it carried a percent sign, or why it failed.

    Attributes:
        value: The exact value, or None.
        percent: A trailing ``%`` / ``\\%`` was present (the value is *not* rescaled).
        problem: Why there is no value: ``not_a_number`` or ``out_of_range``.
    """

    value: Fraction | None
    percent: bool = False
    problem: str | None = None


def parse_number(text: str) -> ParsedNumber:
    """Parse a number literal exactly; see the module docstring for the accepted forms.

    Examples:
        >>> parse_number("10{,}000").value
        Fraction(10000, 1)
        >>> parse_number("1e999999").problem
        'out_of_range'
    """
    t = text.strip()
    if len(t) > MAX_DIGITS + 64:
        return ParsedNumber(None, problem="out_of_range")
    t = t.replace("{,}", ",").replace("\\,", "").replace("\\!", "").replace("\\ ", "")
    if t.startswith("\\$"):
        t = t[2:].lstrip()
    elif t.startswith("$") and not t.endswith("$"):
        t = t[1:].lstrip()
    percent = False
    for suffix in ("\\%", "%"):
        if t.endswith(suffix):
            percent = True
            t = t[: -len(suffix)].rstrip()
            break
    if _DECIMAL.fullmatch(t):
        try:
            number = Decimal(t.replace(",", ""))
        except InvalidOperation:  # pragma: no cover - the pattern admits only valid literals
            return ParsedNumber(None, percent, "not_a_number")
        digits = len(number.as_tuple().digits)
        if digits > MAX_DIGITS or abs(number.adjusted()) > MAX_EXPONENT:
            return ParsedNumber(None, percent, "out_of_range")
        return ParsedNumber(Fraction(number), percent)
    match = _RATIO.fullmatch(t) or _LATEX_FRAC.fullmatch(t) or _LATEX_FRAC_SHORT.fullmatch(t)
    if match:
        groups = match.groups()
        sign = -1 if len(groups) == 3 and groups[0] == "-" else 1
        num_text, den_text = groups[-2], groups[-1]
        if len(num_text) > MAX_DIGITS or len(den_text) > MAX_DIGITS:
            return ParsedNumber(None, percent, "out_of_range")
        denominator = int(den_text)
        if denominator == 0:
            return ParsedNumber(None, percent, "not_a_number")
        return ParsedNumber(sign * Fraction(int(num_text), denominator), percent)
    return ParsedNumber(None, percent, "not_a_number")


def within_tolerance(
    answer: Fraction, target: Fraction, *, abs_tol: float = 0.0, rel_tol: float = 0.0
) -> str | None:
    """How ``answer`` matches ``target``: ``equal``, ``abs_tol``, ``rel_tol`` or None (no match).

    Tolerances are explicit and zero by default: exact equality is the only match then.
    """
    if answer == target:
        return "equal"
    diff = abs(answer - target)
    if abs_tol > 0 and diff <= Fraction(abs_tol):
        return "abs_tol"
    if rel_tol > 0 and diff <= Fraction(rel_tol) * abs(target):
        return "rel_tol"
    return None
