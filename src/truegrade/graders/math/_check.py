"""The math kernel: one response against one gold answer, with a reason for every verdict.

Order of work, cheapest first: extract every final-answer statement; refuse hedges; take each
statement apart (units, percent, degrees, relations, lists); compare exact numbers without SymPy
when both sides are plain numbers (most answers); only then parse with Math-Verify's LaTeX
parser and compare strictly. Parsed gold answers are cached per worker, so a GRPO group that
shares one gold pays for it once.

Runs only inside the engine's killable workers: SymPy is imported on first use there, and any
input that makes parsing or simplification slow is stopped by the per-item deadline.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from truegrade.core import Flag
from truegrade.graders._extract import boxed_contents, final_answers
from truegrade.graders._kernel import error_verdict, verdict
from truegrade.graders._numbers import parse_number, within_tolerance
from truegrade.graders.math._normalize import (
    Answer,
    balanced,
    normalize_answer,
    split_relation,
    split_top_level,
    unit_key,
)

__all__ = ["MathKernel"]

MAX_DISTINCT_STATEMENTS = 8
MAX_BOXES = 10_000
_GOLD_CACHE_SIZE = 4096

_VARIABLE = re.compile(r"(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?[\w\\]+\}?)?(?:'+)?(?:\([^()=]*\))?")
_JUXTAPOSED = re.compile(r"\d\s+[\d.]|\d\s*\\[,;: ]\s*\d")
_IN = re.compile(r"\\in\b")
_COLLECTION_START = re.compile(r"^\s*(?:\\\{|\\begin\{[pbvBV]?matrix\}|\\langle)")


@dataclass
class _Gold:
    answer: Answer
    is_collection: bool
    number: Fraction | None
    assignment_var: str | None
    value_core: str
    is_equation: bool
    problem: str | None = None
    _parsed: Any = field(default=None, repr=False)

    def parsed(self) -> Any:
        if self._parsed is None:
            from truegrade.graders.math._equiv import parse_core

            self._parsed = parse_core(self.value_core if not self.is_equation else self.answer.core)
        return self._parsed


_GROUPED_NUMBER = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def _is_collection(answer: Answer) -> bool:
    core = answer.core
    if _GROUPED_NUMBER.fullmatch(core.strip()):
        return False  # 900,000,000 is one number
    if len(split_top_level(core)) > 1 or _COLLECTION_START.match(core) or "\\cup" in core:
        return True
    if core[:1] in "([" and core[-1:] in ")]":
        return len(split_top_level(core[1:-1])) > 1
    return False


def _squash(core: str) -> str:
    return re.sub(r"\s+", "", core)


def _prepare_gold(reference: str) -> _Gold:
    if "\\boxed" in reference or "\\fbox" in reference:
        boxes = boxed_contents(reference, limit=MAX_DISTINCT_STATEMENTS)
        if boxes:  # a gold written as boxes: their contents, a list when there are several
            reference = ", ".join(boxes)
    loose = normalize_answer(reference, collapse_thousands=False)
    is_collection = not loose.is_text and _is_collection(loose)
    answer = loose if is_collection else normalize_answer(reference)
    if answer.problem:
        return _Gold(answer, False, None, None, "", False, problem="the reference is too long")
    if not answer.core and not answer.is_text:
        return _Gold(answer, False, None, None, "", False, problem="the reference is empty")
    if not balanced(answer.core):
        return _Gold(
            answer,
            False,
            None,
            None,
            "",
            False,
            problem=f"the reference {reference[:60]!r} has unbalanced brackets",
        )
    parts = split_relation(answer.core)
    assignment_var = None
    is_equation = False
    value_core = answer.core
    if len(parts) == 2 and not is_collection:
        lhs, rhs = parts
        if _VARIABLE.fullmatch(lhs) and not re.search(r"[a-zA-Z]", _strip_commands(rhs)):
            assignment_var, value_core = _squash(lhs), rhs
        else:
            is_equation = True
    elif len(parts) > 2:
        is_equation = True
    number = None
    if not is_collection and not is_equation and not answer.is_text:
        number = parse_number(value_core).value
    return _Gold(answer, is_collection, number, assignment_var, value_core, is_equation)


def _strip_commands(text: str) -> str:
    return re.sub(r"\\(?:frac|dfrac|sqrt|pi|cdot|times|left|right|infty)", "", text)


@dataclass
class _Result:
    passed: bool
    how: str = ""
    flags: tuple[str, ...] = ()
    why: str = ""


@dataclass
class MathKernel:
    """Picklable per-sample check; see the module docstring.

    Attributes:
        boxes / lines: Which final-answer statements count (both by default).
        abs_tol / rel_tol: Explicit numeric tolerances (0: exact).
        angles: Read a degree sign as pi/180 so ``45^\\circ`` equals ``\\frac{\\pi}{4}``.
    """

    boxes: bool = True
    lines: bool = True
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    angles: bool = False
    _gold: OrderedDict[str, _Gold] = field(default_factory=OrderedDict, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_gold"] = OrderedDict()
        return state

    def setup(self) -> None:
        """Import SymPy and the parser once per worker, before the first deadline starts."""
        import sympy.physics.units  # noqa: F401 - the parser imports it on its first unit

        from truegrade.graders.math import _equiv

        _equiv.parse_core("x+1")

    def gold(self, reference: str) -> _Gold:
        cached = self._gold.get(reference)
        if cached is None:
            cached = _prepare_gold(reference)
            self._gold[reference] = cached
            if len(self._gold) > _GOLD_CACHE_SIZE:
                self._gold.popitem(last=False)
        else:
            self._gold.move_to_end(reference)
        return cached

    def __call__(self, payload: tuple[str, Any]) -> dict[str, Any]:
        response, reference = payload
        if isinstance(reference, (int, float)) and not isinstance(reference, bool):
            reference = repr(reference) if isinstance(reference, float) else str(reference)
        if not isinstance(reference, str):
            return error_verdict(
                f"the reference must be an answer string, got {type(reference).__name__}",
                "bad_reference",
            )
        gold = self.gold(reference)
        if gold.problem:
            return error_verdict(gold.problem, "bad_reference")
        found = final_answers(response, boxes=self.boxes, lines=self.lines, limit=MAX_BOXES)
        if not found.statements:
            where = (
                "\\boxed{} answer" if not self.lines else "\\boxed{} answer or 'Final answer:' line"
            )
            return verdict(False, f"no final answer: the response has no {where}", Flag.NO_ANSWER)
        distinct = list(dict.fromkeys(found.statements))
        if len(distinct) > MAX_DISTINCT_STATEMENTS:
            return verdict(False, f"{len(distinct)} different final answers", Flag.HEDGED)
        if gold.is_collection and len(distinct) > 1:
            distinct = [", ".join(distinct)]
        results = [self._check(gold, statement) for statement in distinct]
        if len(results) == 1:
            return _verdict_of(results[0])
        if all(r.passed for r in results):
            merged = _verdict_of(results[-1])
            merged["explanation"] += f" (all {len(results)} statements agree)"
            return merged
        shown = ", ".join(repr(s[:30]) for s in distinct[:4])
        return verdict(False, f"{len(distinct)} different final answers: {shown}", Flag.HEDGED)

    # -- one statement -------------------------------------------------------------------------

    def _check(self, gold: _Gold, statement: str) -> _Result:
        answer = normalize_answer(statement, collapse_thousands=not gold.is_collection)
        if answer.problem:
            return _Result(False, flags=(answer.problem,), why="the answer is too long to check")
        g = gold.answer
        if g.is_text:
            if answer.text == g.text:
                return _Result(True, "exact_match", why="matches the reference text")
            return _Result(False, why=f"{statement[:60]!r} is not {g.raw[:60]!r}")
        if g.unit and answer.unit and unit_key(g.unit) != unit_key(answer.unit):
            return _Result(
                False,
                flags=("unit_mismatch",),
                why=f"unit {answer.unit.strip()!r} is not {g.unit.strip()!r}",
            )
        if answer.percent and not g.percent:
            return _Result(
                False,
                flags=("percent_mismatch",),
                why="the answer is a percentage and the reference is not",
            )
        core = answer.core
        if not core:
            return _Result(False, flags=(Flag.NO_ANSWER,), why="the final answer is empty")
        if not balanced(core):
            return _Result(
                False,
                flags=("parse_error",),
                why=f"unbalanced brackets in {core[:40]!r}: not a single answer",
            )
        if not gold.is_collection and len(split_top_level(core)) > 1:
            return _Result(
                False, flags=(Flag.HEDGED,), why=f"several candidates in one answer: {core[:60]!r}"
            )
        if gold.is_equation:
            return self._compare_relation(gold, core)
        value = self._value(gold, core)
        if isinstance(value, _Result):
            return value
        if _JUXTAPOSED.search(value) and not gold.is_collection:
            return _Result(
                False,
                flags=("parse_error",),
                why=f"numbers side by side in {value[:40]!r}: not a single answer",
            )
        return self._compare_values(gold, value, answer)

    def _value(self, gold: _Gold, core: str) -> str | _Result:
        """The value a statement asserts: ``x = 5`` asserts 5; ``5 = 3`` asserts nothing."""
        core = _IN.sub("=", core, count=1)
        parts = split_relation(core)
        if len(parts) == 1:
            return core
        lhs, chain = parts[0], parts[1:]
        if any(not p for p in parts):
            return _Result(False, flags=("parse_error",), why="an equation with an empty side")
        if _VARIABLE.fullmatch(lhs):
            if gold.assignment_var is not None and _squash(lhs) != gold.assignment_var:
                return _Result(
                    False, why=f"answers for {lhs!r}, the question asks for {gold.assignment_var!r}"
                )
            claims = chain
        else:
            claims = parts
        last = claims[-1]
        for other in claims[:-1]:
            if self._same(other, last) is None:
                return _Result(
                    False,
                    flags=("false_relation",),
                    why=f"{other[:30]!r} = {last[:30]!r} does not hold",
                )
        return last

    def _same(self, a: str, b: str) -> str | None:
        x, y = parse_number(a).value, parse_number(b).value
        if x is not None and y is not None:
            return "exact" if x == y else None
        if _squash(a) == _squash(b):
            return "exact"
        from truegrade.graders.math._equiv import equivalent, parse_core

        pa, pb = parse_core(a), parse_core(b)
        if pa.problem or pb.problem:
            return None
        return equivalent(pa.value, pb.value)

    def _compare_values(self, gold: _Gold, value: str, answer: Answer) -> _Result:
        g = gold.answer
        degrees = self.angles and answer.degrees != g.degrees
        if gold.number is not None and not degrees:
            number = parse_number(value)
            if number.value is not None:
                how = within_tolerance(
                    number.value, gold.number, abs_tol=self.abs_tol, rel_tol=self.rel_tol
                )
                if how is None:
                    return _Result(False, why=f"{value[:40]} is not {gold.value_core[:40]}")
                flag = (
                    (
                        "exact_match"
                        if _squash(value) == _squash(gold.value_core)
                        else "equivalent_numeric"
                    )
                    if how == "equal"
                    else f"within_{how}"
                )
                return _Result(True, flag, why=f"{value[:40]} equals {gold.value_core[:40]}")
            if number.problem == "out_of_range":
                return _Result(
                    False,
                    flags=("too_complex",),
                    why="the answer's magnitude is beyond exact checking",
                )
        if not degrees and _squash(value) == _squash(gold.value_core):
            return _Result(True, "exact_match", why="identical to the reference")
        from truegrade.graders.math._equiv import equivalent, parse_core

        parsed_gold = gold.parsed()
        if parsed_gold.problem:
            return _Result(
                False,
                flags=("bad_reference",),
                why=f"the reference cannot be checked: {parsed_gold.detail}",
            )
        parsed = parse_core(value)
        if parsed.problem:
            return _Result(False, flags=(parsed.problem,), why=parsed.detail)
        ours, theirs = parsed.value, parsed_gold.value
        if degrees:
            import sympy

            if answer.degrees:
                ours = ours * sympy.pi / 180
            else:
                theirs = theirs * sympy.pi / 180
        how = equivalent(theirs, ours, abs_tol=self.abs_tol, rel_tol=self.rel_tol)
        if how is None:
            flags = _interval_flag(theirs, ours)
            return _Result(False, flags=flags, why=f"{value[:40]} is not {gold.value_core[:40]}")
        flag = {"exact": "equivalent_symbolic", "symbolic": "equivalent_symbolic"}.get(
            how, f"within_{how}"
        )
        return _Result(True, flag, why=f"{value[:40]} is equivalent to {gold.value_core[:40]}")

    def _compare_relation(self, gold: _Gold, core: str) -> _Result:
        from truegrade.graders.math._equiv import parse_core, relation_equivalent

        if len(split_relation(core)) < 2 and not re.search(r"\\[lg]eq?|[<>]", core):
            return _Result(False, why="the reference is an equation and the answer is not")
        if _squash(core) == _squash(gold.answer.core):
            return _Result(True, "exact_match", why="identical to the reference")
        parsed_gold, parsed = gold.parsed(), parse_core(core)
        if parsed_gold.problem:
            return _Result(False, flags=("bad_reference",), why=parsed_gold.detail)
        if parsed.problem:
            return _Result(False, flags=(parsed.problem,), why=parsed.detail)
        try:
            how = relation_equivalent(parsed_gold.value, parsed.value)
        except Exception:
            how = None
        if how is None:
            return _Result(False, why=f"{core[:40]} is not {gold.answer.core[:40]}")
        return _Result(True, "equivalent_symbolic", why="the same relation")


def _interval_flag(gold: Any, answer: Any) -> tuple[str, ...]:
    import sympy

    if (
        isinstance(gold, sympy.Interval)
        and isinstance(answer, sympy.Interval)
        and (gold.start == answer.start and gold.end == answer.end)
    ):
        return ("interval_mismatch",)
    if isinstance(gold, sympy.Interval) != isinstance(answer, sympy.Interval) and isinstance(
        answer, (sympy.Interval, sympy.Tuple, sympy.FiniteSet)
    ):
        return ("interval_mismatch",)
    return ()


def _verdict_of(result: _Result) -> dict[str, Any]:
    flags = list(result.flags)
    if result.passed and result.how:
        flags.insert(0, result.how)
    return verdict(result.passed, result.why, *flags)
