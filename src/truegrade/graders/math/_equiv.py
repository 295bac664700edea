"""Strict equivalence of two answer cores: exact numbers first, SymPy only when needed.

Parsing uses Math-Verify's LaTeX parser (``latex2sympy2_extended``, an ANTLR grammar: it builds
SymPy objects from tokens and never evaluates text as Python). Before a core reaches it, a cheap
scan refuses constructs whose evaluation is itself a denial of service (power towers, huge
factorials and exponents): those are compared as strings only and otherwise fail as
``too_complex``. After parsing, decimal floats are turned back into the exact rationals they were
written as, so ``0.0000012`` is never "equal to six places" to ``0.000001``.

The parser may return sums and products unevaluated, in the order written; each parsed value is
rebuilt once in SymPy's canonical order (linear in its size), so ``15+2\\sqrt{33}`` and
``2\\sqrt{33}+15`` compare equal structurally instead of through ``simplify`` (which can take
seconds on nested radicals).

Equality is exact (rational or symbolic). Tolerances exist, but only when the caller asks, and
they compare high-precision values without chopping small numbers to zero. Interval endpoints
must match in kind (open or closed), sets compare without order, tuples and matrices in order,
and expressions in different variables are different. An inequality in one unknown
(``-793 < a < 10``, ``1 \\le |z| \\le 2``) stands for its real solution set, so it matches the
interval or union that set is.

This module imports SymPy at import time: only worker processes import it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy
from latex2sympy2_extended.latex2sympy2 import NormalizationConfig, latex2sympy
from math_verify.grader import should_treat_as_complex
from sympy.core.relational import Relational

from truegrade.graders.math._flags import MathFlag
from truegrade.graders.math._normalize import split_top_level

__all__ = [
    "Bag",
    "Parsed",
    "equivalent",
    "exact_value",
    "parse_core",
    "relation_equivalent",
    "solution_set",
]

_CONFIG = NormalizationConfig(
    basic_latex=True,
    units=False,
    malformed_operators=True,
    nits=False,
    boxed="none",
    equations=False,
)
_HUGE_EXPONENT = re.compile(r"\^\s*\{?\s*[-+]?\s*\d{5,}")
_NESTED_EXPONENT = re.compile(r"\^\s*\{[^{}]*\^")
_PAREN_EXPONENT = re.compile(r"\^\s*\(")
# an exponent's own power that cannot grow a tower: a variable squared, cubed... (e^{-x^2})
_VARIABLE_POWER = re.compile(r"[^\\a-zA-Z][a-zA-Z]\^\s*(?:\d(?!\d)|\{\s*-?\d\s*\})")
_BIG_FACTORIAL = re.compile(r"(?:\d{4,}|[)}])\s*!")
_LONG_NUMBER = re.compile(r"\d{400,}")
# a degree sign beside a trigonometric function is in its argument: \sin(90^\circ) is 1
_TRIG = re.compile(r"\\(?:sin|cos|tan|sec|csc|cot)(?![a-zA-Z])")
_CONSTANT_NAME = re.compile(r"c(?:_\{?\d+\}?)?")
_MAX_EXPONENT = 10_000
_MAX_FACTORIAL = 1_000
# a congruence (x \equiv 2 \pmod 5): the parser reads \pmod as \pm o d and drops the modulus of
# \equiv ... \mod, so x \equiv 2 \pmod 5 would equal x \equiv 2 \pmod 7; compared as written
_CONGRUENCE = re.compile(r"\\pmod(?![a-zA-Z])|\\equiv(?![a-zA-Z]).*\\b?mod(?![a-zA-Z])")


@dataclass(frozen=True)
class Parsed:
    """A core parsed to SymPy, or why it could not be.

    Attributes:
        value: The SymPy object (None on failure).
        problem: ``parse_error`` or ``too_complex`` (None on success).
        detail: A short human-readable reason.
    """

    value: Any
    problem: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class Bag:
    """A list written without set braces (``1, 1, 2``): its items as written, repeats kept.

    Lists compare without order but with multiplicity (``1, 2`` is not ``1, 1, 2``); only a key
    written as a set (``\\{1, 2\\}``) lets repeats in the answer go uncounted. The parser reads
    any list as a SymPy set, which drops repeats, so a list is rebuilt from the items it wrote.
    """

    items: tuple[Any, ...]


_MAX_DEPTH = 32


def _depth(core: str) -> int:
    depth = deepest = 0
    for ch in core:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


def _risky(core: str) -> str | None:
    if _depth(core) > _MAX_DEPTH:
        return f"brackets nested more than {_MAX_DEPTH} deep"
    if _HUGE_EXPONENT.search(core):
        return "an exponent with five or more digits"
    if _PAREN_EXPONENT.search(core) or any(
        not _VARIABLE_POWER.match(core, m.end() - 3) for m in _NESTED_EXPONENT.finditer(core)
    ):
        return "a power tower"
    if _BIG_FACTORIAL.search(core):
        return "a factorial of a large or compound number"
    if _LONG_NUMBER.search(core):
        return "a number with hundreds of digits"
    return None


def _too_big(expr: Any) -> str | None:
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.Pow):
            exponent = node.exp
            if exponent.has(sympy.Pow) and not _bounded_exponent(exponent):
                return "a power tower"
            if exponent.is_Integer and abs(int(exponent)) > _MAX_EXPONENT:
                return "an exponent over 10,000"
        elif isinstance(node, (sympy.factorial, sympy.binomial, sympy.gamma)):
            for arg in node.args:
                if arg.is_Integer and abs(int(arg)) > _MAX_FACTORIAL:
                    return "a factorial or binomial of a number over 1,000"
                if arg.has(sympy.Pow, sympy.factorial):
                    return "a factorial of a compound number"
    return None


def _bounded_exponent(exponent: Any) -> bool:
    """An exponent holding powers that cannot grow a tower: every inner power is a root or a
    reciprocal (``10^{(\\sqrt{13}-5)/6}``) or a variable to a one-digit power (``2^{x^2}``), and a
    numeric exponent is at most 10,000 in size."""
    for inner in sympy.preorder_traversal(exponent):
        if isinstance(inner, sympy.Pow) and not (
            (inner.exp.is_Rational and abs(inner.exp) <= 1)
            or (inner.base.is_Symbol and inner.exp.is_Integer and abs(inner.exp) <= 9)
        ):
            return False
    if exponent.is_number:
        try:
            return abs(complex(sympy.N(exponent, 15))) <= _MAX_EXPONENT
        except (TypeError, ValueError):
            return False
    return True


def _exact_floats(expr: Any) -> Any:
    floats = expr.atoms(sympy.Float) if hasattr(expr, "atoms") else set()
    if not floats:
        return expr
    return expr.xreplace({f: sympy.Rational(str(f)) for f in floats})


@functools.lru_cache(maxsize=1024)  # a group's answers repeat: each is parsed once per worker
def parse_core(core: str) -> Parsed:
    """Parse a normalised core with Math-Verify's LaTeX parser, refusing what cannot be checked.

    The result is kept (SymPy objects and ``Parsed`` are immutable): the parse is most of a
    grade's time, and the responses of a group, or a dataset's golds, often share an answer."""
    risk = _risky(core)
    if risk is not None:
        return Parsed(None, MathFlag.TOO_COMPLEX, f"the answer contains {risk}")
    if _CONGRUENCE.search(core):
        return Parsed(None, MathFlag.PARSE_ERROR, "a congruence is compared only as written")
    try:
        value = latex2sympy(
            core,
            is_real=not should_treat_as_complex(core),
            convert_degrees="\\circ" in core and bool(_TRIG.search(core)),
            normalization_config=_CONFIG,
        )
    except RecursionError:
        return Parsed(None, MathFlag.TOO_COMPLEX, "the answer is nested too deeply")
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Parsed(None, MathFlag.PARSE_ERROR, f"not parseable as LaTeX: {first[:80]}")
    if value is None:
        return Parsed(None, MathFlag.PARSE_ERROR, "not parseable as LaTeX")
    big = _too_big(value)
    if big is not None:
        return Parsed(None, MathFlag.TOO_COMPLEX, f"the answer contains {big}")
    if isinstance(value, (sympy.MatAdd, sympy.MatMul)):
        value = value.doit()  # a sum or product of written-out matrices is that matrix
    written = getattr(value, "_unsorted_args", None)  # the parser's list, repeats included
    if isinstance(value, sympy.FiniteSet) and written and len(written) > 1 and not _braced(core):
        return Parsed(Bag(tuple(_finished(item) for item in written)))
    return Parsed(_finished(value))


def _finished(value: Any) -> Any:
    return _canonical(_exact_floats(_imaginary_unit(value)))


def _braced(core: str) -> bool:
    """``core`` is one set in braces (``\\{1, 2\\}``, ``{1, 2}``), not a list of them."""
    text = core.strip()
    return text.startswith(("{", "\\{")) and len(split_top_level(text)) == 1


def _imaginary_unit(value: Any) -> Any:
    """``value`` with a free ``i`` read as the imaginary unit (docs/math.md: "The imaginary unit
    is i"), so ``i^2`` is -1 and ``e^{i\\pi} = -1`` holds. An ``i`` bound as an index
    (``\\sum_{i=1}^{n} i``) stays the index, and ``a_i`` is a name of its own."""
    if not isinstance(value, sympy.Basic):
        return value
    unit = [s for s in value.free_symbols if isinstance(s, sympy.Symbol) and s.name == "i"]
    if not unit:
        return value
    return value.subs({s: sympy.I for s in unit})


def exact_value(number: Fraction) -> Parsed:
    """A number already read exactly (``1.25e+18``), as a parsed value: the LaTeX parser would
    read that ``e`` as Euler's number."""
    return Parsed(sympy.Rational(number.numerator, number.denominator))


def _canonical(expr: Any) -> Any:
    """``expr`` with every sum, product and power rebuilt (evaluated) in canonical order."""
    if isinstance(expr, (sympy.Add, sympy.Mul, sympy.Pow)):
        return expr.func(*(_canonical(arg) for arg in expr.args))
    if isinstance(expr, sympy.Mod):  # 17 \\bmod 5 is 2; a zero modulus stays as written
        args = [_canonical(arg) for arg in expr.args]
        return expr if args[1].is_zero is not False else sympy.Mod(*args)
    if isinstance(expr, (sympy.Tuple, sympy.FiniteSet, sympy.Interval, Relational, sympy.And)):
        return expr.func(*(_canonical(arg) for arg in expr.args))
    return expr


def _unknowns(expr: Any) -> list[Any]:
    """The unknowns of a relation: its free symbols and applied functions (``f(x)``), the
    symbols inside those not counted on their own."""
    calls = [f for f in expr.atoms(sympy.core.function.AppliedUndef)]
    inner = set().union(*(c.free_symbols for c in calls)) if calls else set()
    return calls + sorted(expr.free_symbols - inner, key=str)


_MAX_SOLVED_DEGREE = 4
_MAX_SOLVED_OPS = 24


def _small_inequality(relation: Any, unknown: Any) -> bool:
    """Solving stays cheap: a polynomial side of degree at most 4, or a small expression
    (``|z|``, a root); ``x^{99} - 3x + 1 > 0`` is not solved, so it cannot stall a worker."""
    side = relation.lhs - relation.rhs
    if side.is_polynomial(unknown):
        return bool(sympy.degree(side, unknown) <= _MAX_SOLVED_DEGREE)
    return bool(sympy.count_ops(side) <= _MAX_SOLVED_OPS)


@functools.lru_cache(maxsize=256)  # a group of answers shares one key
def solution_set(relation: Any) -> Any:
    """The real solution set of an inequality (or a chain of them) in one unknown, or None.

    ``-793 < a < 10`` gives ``(-793, 10)``; ``0 < f(x) < 1`` reads ``f(x)`` as the unknown.
    """
    if not isinstance(relation, (Relational, sympy.And, sympy.Or)) or isinstance(
        relation, sympy.Eq
    ):
        return None
    unknowns = _unknowns(relation)
    if len(unknowns) != 1:
        return None
    unknown = unknowns[0]
    if not isinstance(unknown, sympy.Symbol):
        unknown = sympy.Dummy("u", real=True)
        relation = relation.xreplace({unknowns[0]: unknown})
    if not all(_small_inequality(r, unknown) for r in relation.atoms(Relational)):
        return None
    try:
        result = relation.as_set()
    except Exception:
        return None
    if result.has(sympy.ConditionSet):
        return None
    return result


def _is_collection(value: Any) -> bool:
    return isinstance(value, (Bag, sympy.Set, sympy.Tuple, sympy.MatrixBase, tuple, list))


def _scalar_equal(a: Any, b: Any, abs_tol: float, rel_tol: float) -> str | None:
    if not isinstance(a, sympy.Basic) or not isinstance(b, sympy.Basic):
        return None
    if a == b:
        return "exact"
    if a.free_symbols != b.free_symbols:
        return None
    if _clearly_apart(a, b) and abs_tol == 0 and rel_tol == 0:
        return None  # most wrong answers: no simplify (tens of ms each) to prove it
    try:
        difference = sympy.expand(a - b)
        if difference != 0 and difference.has(sympy.Pow):
            difference = _radical_zero(difference)
        if difference != 0 and difference.has(sympy.Pow):
            difference = _power_zero(difference)
        if difference != 0:
            difference = sympy.simplify(difference)
    except Exception:
        difference = None
    if difference is not None and difference == 0:
        return "symbolic"
    if difference is not None and difference.is_number and difference.is_zero is True:
        return "symbolic"
    if (abs_tol > 0 or rel_tol > 0) and a.is_number and b.is_number:
        try:
            x = complex(sympy.N(a, 30))
            y = complex(sympy.N(b, 30))
        except (TypeError, ValueError):
            return None
        gap = abs(x - y)
        if abs_tol > 0 and gap <= abs_tol:
            return "abs_tol"
        if rel_tol > 0 and gap <= rel_tol * abs(y):
            return "rel_tol"
    return None


def _radical_zero(difference: Any) -> Any:
    """A bounded fast path for radicals before ``simplify`` (which can run for minutes on a
    nested radical over a sum): rationalise denominators (``radsimp``, at most four terms by its
    own bound) and denest square roots (``sqrtdenest``, three rounds). Both are exact; the
    difference comes back as 0 when they show it is, else unchanged."""
    for step in (sympy.radsimp, sympy.sqrtdenest):
        reduced = sympy.expand(step(difference))
        if reduced == 0:
            return reduced
    return difference


def _split_power(power: Any) -> Any:
    """``(a/b)^n`` as ``a^n b^{-n}`` and ``(ab)^n`` as ``a^n b^n``: a power of a quotient or a
    product with an exponent that is not an integer, split as for positive bases (integer
    exponents SymPy splits itself)."""
    numerator, denominator = sympy.fraction(sympy.together(power.base))
    parts = [sympy.expand_power_base(numerator**power.exp, force=True)]
    if denominator != 1:
        parts.append(sympy.expand_power_base(denominator ** (-power.exp), force=True))
    return sympy.Mul(*parts)


def _power_zero(difference: Any) -> Any:
    """A bounded fast path for powers of quotients and products before ``simplify`` (which
    takes a large part of the deadline on ``(1 - \\frac{1}{n})^n`` against
    ``\\frac{(n-1)^n}{n^n}``, and then fails): split each such power (``_split_power``) and
    expand once. The difference comes back as 0 when that shows it is, else unchanged. A root
    of a power (``\\sqrt{x^2}``) is not a power of a product and is left alone, so ``x`` never
    equals ``|x|`` here."""
    split = difference.replace(
        lambda e: isinstance(e, sympy.Pow) and not e.exp.is_Integer and not e.base.is_Atom,
        _split_power,
    )
    reduced = sympy.expand(split)
    return reduced if reduced == 0 else difference


# Points a symbolic difference is evaluated at before anything is simplified: rationals away
# from 0, 1 and the usual singularities.
_PROBES = (sympy.Rational(7, 3), sympy.Rational(11, 5))


def _clearly_apart(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` evaluate, at 30 digits, to values that differ by far more than
    the evaluation's error, at a point (or as numbers): then they are not equal, and the slow
    symbolic check can be skipped. Never true for equal expressions; False whenever in doubt
    (a singular point, a value that is not a finite number), leaving the decision to SymPy."""
    symbols = sorted(a.free_symbols, key=str)
    points = [dict(zip(symbols, _PROBES[k:] + _PROBES[:k], strict=False)) for k in (0, 1)]
    for point in points if symbols else [{}]:
        try:
            x = complex(sympy.N(a.subs(point) if point else a, 30))
            y = complex(sympy.N(b.subs(point) if point else b, 30))
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            return False
        scale = max(abs(x), abs(y))
        if not (scale < float("inf")) or scale == 0:
            return False
        if abs(x - y) > 1e-20 * scale:
            return True
    return False


def equivalent(
    gold: Any,
    answer: Any,
    *,
    abs_tol: float = 0.0,
    rel_tol: float = 0.0,
    antiderivative: bool = False,
) -> str | None:
    """How ``answer`` equals ``gold`` (``exact``, ``symbolic``, ``abs_tol``, ``rel_tol``), or None.

    With ``antiderivative`` the key ends in a constant of integration (``F + C``) and stands for
    its family: see ``_same_antiderivative``. Raises nothing: anything SymPy cannot decide is
    "not equal".
    """
    try:
        if antiderivative:
            family = _family(gold)
            if family is not None:
                return _same_antiderivative(family, answer, abs_tol, rel_tol)
        return _equivalent(gold, answer, abs_tol, rel_tol)
    except Exception:
        return None


def _lone_constant(expr: Any, others: set[Any]) -> Any:
    """The symbol added alone to ``expr`` (``K`` in ``x^2 + K``) that appears nowhere else in it
    and is not one of ``others``, or None."""
    if not isinstance(expr, sympy.Add):
        return None
    for term in expr.args:
        if term.is_Symbol and term not in others:
            rest = expr - term
            if term not in rest.free_symbols:
                return term
    return None


def _family(gold: Any) -> Any:
    """``F`` of a key ``F + C`` (the parser reads ``C`` as ``c``, ``C_1`` as ``c_1``) whose ``C``
    is added alone and whose ``F`` has a variable to differentiate by, or None (then the key is
    compared as written)."""
    if not isinstance(gold, sympy.Add):
        return None
    for term in gold.args:
        if term.is_Symbol and _CONSTANT_NAME.fullmatch(term.name):
            rest = gold - term
            if term not in rest.free_symbols and rest.free_symbols:
                return rest
    return None


def _same_antiderivative(family: Any, answer: Any, abs_tol: float, rel_tol: float) -> str | None:
    """``answer`` is a member of the family ``F + C``: once its own constant (any name, or
    none) is taken off, it has ``F``'s variables and the same derivative by each of them, so it
    differs from ``F`` by a number (``(x+1)^2 + K`` for ``x^2 + 2x + C``; ``x^2`` for
    ``x^2 + C``). The answer's constant may have any name that is not one of ``F``'s variables
    (``x^2 + y`` is in the family of ``x^2 + C``: ``y`` is a constant in ``x``, and
    differentiating by ``x`` says the same); ``x^2 + x`` is not."""
    if not isinstance(answer, sympy.Basic) or _is_collection(answer):
        return None
    variables = family.free_symbols
    constant = _lone_constant(answer, variables)
    member = answer - constant if constant is not None else answer
    if not member.free_symbols <= variables:
        return None
    if sympy.expand(member - family) == 0:
        return "symbolic"
    hows = []
    for variable in sorted(variables, key=str):
        how = _scalar_equal(
            sympy.diff(family, variable), sympy.diff(member, variable), abs_tol, rel_tol
        )
        if how is None:
            return None
        hows.append(how)
    return _weakest([*hows, "symbolic"])


def _equivalent(gold: Any, answer: Any, abs_tol: float, rel_tol: float) -> str | None:
    if isinstance(gold, Fraction):
        gold = sympy.Rational(gold.numerator, gold.denominator)
    if isinstance(answer, Fraction):
        answer = sympy.Rational(answer.numerator, answer.denominator)
    if isinstance(gold, Bag) or isinstance(answer, Bag):
        return _equivalent_lists(gold, answer, abs_tol, rel_tol)
    gold_set = solution_set(gold) if isinstance(answer, sympy.Set) else None
    if gold_set is not None:  # an inequality key: its solution set, written as a set
        gold = gold_set
    elif isinstance(gold, sympy.And) and isinstance(answer, sympy.And | Relational):
        mine, theirs = solution_set(gold), solution_set(answer)
        if mine is None or theirs is None or _unknowns(gold) != _unknowns(answer):
            return None
        return _equivalent(mine, theirs, abs_tol, rel_tol)
    if isinstance(gold, sympy.Interval) or isinstance(answer, sympy.Interval):
        if not (isinstance(gold, sympy.Interval) and isinstance(answer, sympy.Interval)):
            return None
        if gold.left_open != answer.left_open or gold.right_open != answer.right_open:
            return None
        start = _equivalent(gold.start, answer.start, abs_tol, rel_tol)
        end = _equivalent(gold.end, answer.end, abs_tol, rel_tol)
        return None if start is None or end is None else _weakest([start, end])
    if isinstance(gold, sympy.FiniteSet) and isinstance(answer, sympy.FiniteSet):
        return _match_unordered(list(gold.args), list(answer.args), abs_tol, rel_tol)
    if isinstance(gold, sympy.Tuple) and isinstance(answer, sympy.Tuple):
        if len(gold) != len(answer):
            return None
        return _all_in_order(list(gold.args), list(answer.args), abs_tol, rel_tol)
    if isinstance(gold, sympy.MatrixBase) and isinstance(answer, sympy.MatrixBase):
        if gold.shape != answer.shape:
            return None
        return _all_in_order(list(gold), list(answer), abs_tol, rel_tol)
    if isinstance(gold, sympy.Set) and isinstance(answer, sympy.Set):
        if gold == answer:
            return "exact"
        return "symbolic" if gold.symmetric_difference(answer).is_empty else None
    if _is_collection(gold) or _is_collection(answer):
        return None
    if isinstance(gold, Relational) or isinstance(answer, Relational):
        return relation_equivalent(gold, answer)
    return _scalar_equal(gold, answer, abs_tol, rel_tol)


def _equivalent_lists(gold: Any, answer: Any, abs_tol: float, rel_tol: float) -> str | None:
    """A list (``Bag``) against a list or a set: the same items as often, in any order; against
    a key written as a set, repeats in the answer go uncounted (``1, 1, 2`` is the set
    ``\\{1, 2\\}``); against another kind of set (a union), a list without repeats is its set."""
    mine, theirs = _items(gold), _items(answer)
    if mine is None or theirs is None:
        bag, other = (gold, answer) if isinstance(gold, Bag) else (answer, gold)
        if not isinstance(other, sympy.Set) or len(set(bag.items)) != len(bag.items):
            return None
        as_set = sympy.FiniteSet(*bag.items)
        pair = (as_set, other) if bag is gold else (other, as_set)
        return _equivalent(*pair, abs_tol, rel_tol)
    if isinstance(gold, sympy.FiniteSet):
        theirs = list(sympy.FiniteSet(*theirs).args)
    return _match_unordered(mine, theirs, abs_tol, rel_tol)


def _items(value: Any) -> list[Any] | None:
    if isinstance(value, Bag):
        return list(value.items)
    if isinstance(value, sympy.FiniteSet):
        return list(value.args)
    return None


def _weakest(hows: list[str]) -> str:
    for how in ("rel_tol", "abs_tol", "symbolic"):
        if how in hows:
            return how
    return "exact"


def _all_in_order(gold: list[Any], answer: list[Any], abs_tol: float, rel_tol: float) -> str | None:
    hows = []
    for g, a in zip(gold, answer, strict=True):
        how = _equivalent(g, a, abs_tol, rel_tol)
        if how is None:
            return None
        hows.append(how)
    return _weakest(hows) if hows else "exact"


def _match_unordered(
    gold: list[Any], answer: list[Any], abs_tol: float, rel_tol: float
) -> str | None:
    if len(gold) != len(answer):
        return None
    remaining = list(answer)
    hows = []
    for g in gold:
        for i, a in enumerate(remaining):
            how = _equivalent(g, a, abs_tol, rel_tol)
            if how is not None:
                hows.append(how)
                del remaining[i]
                break
        else:
            return None
    return _weakest(hows) if hows else "exact"


def relation_equivalent(gold: Any, answer: Any) -> str | None:
    """Two relations say the same thing: same kind (or mirrored), sides differing by a constant
    non-zero factor (``y = 2x + 3`` and ``2x - y + 3 = 0``)."""
    if not (isinstance(gold, Relational) and isinstance(answer, Relational)):
        return None
    g = gold.lhs - gold.rhs
    a = answer.lhs - answer.rhs
    mirrored = {sympy.Gt: sympy.Lt, sympy.Lt: sympy.Gt, sympy.Ge: sympy.Le, sympy.Le: sympy.Ge}
    same_kind = type(gold) is type(answer)
    if not same_kind and mirrored.get(type(gold)) is type(answer):
        a = -a
    elif not same_kind:
        return None
    if g.free_symbols != a.free_symbols:
        return None
    if sympy.simplify(g - a) == 0:
        return "symbolic"
    if a == 0:
        return None
    ratio = sympy.simplify(g / a)
    if ratio.is_number and ratio != 0 and (isinstance(gold, sympy.Eq) or ratio.is_positive):
        return "symbolic"
    return None
