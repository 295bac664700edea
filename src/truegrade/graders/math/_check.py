"""The math kernel: one response against one gold answer, with a reason for every verdict.

Order of work, cheapest first: extract every final-answer statement; refuse hedges; take each
statement apart (units, percent, degrees, relations, lists); compare exact numbers without SymPy
when both sides are plain numbers (most answers); only then parse with Math-Verify's LaTeX
parser and compare strictly. Parsed gold answers are cached per worker, so a GRPO group that
shares one gold pays for it once.

Shortcuts skip work whose outcome is already known, and give exactly the verdict, flags and
explanation the full path gives (a test runs both over real responses and every committed case):
a plain literal key (``27``, ``-0.25``) skips the reading of key shapes; a plain literal answer
against a number key skips normalisation; a mixed number (``1\\frac{1}{10}``, read by the parser
as ``1 + 1/10``) against a number or another mixed number is compared as exact fractions instead
of being parsed to SymPy (a few milliseconds each).

Keys are read for what they state (docs/math.md, "How keys are read"): a GSM8K answer is what its
final ``####`` line states, a boxed key is its box, a worked solution its stated answer,
``AB=4, CD=5`` named values, ``y = 2x + 3`` a value that an equivalent equation also matches,
``12:00`` a time of day (compared as a time, never as the ratio 12:0), an inequality in one
unknown its solution set. A key that states no answer (a sentence, an empty ``####`` line) is
an error for every response, and one the parser refuses is an error wherever an answer must be
checked against it: never a score of 0 that a trainer would learn from.

Runs only inside the engine's killable workers: SymPy is imported on first use there, and any
input that makes parsing or simplification slow is stopped by the per-item deadline.
"""

from __future__ import annotations

import itertools
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from truegrade.core import Flag, gsm8k_final_answer, without_calculator_marks
from truegrade.graders._extract import boxed_spans, final_answers
from truegrade.graders._kernel import error_verdict, verdict
from truegrade.graders._numbers import parse_number, within_tolerance
from truegrade.graders.math._flags import MathFlag
from truegrade.graders.math._normalize import (
    Answer,
    ClockTime,
    assignments,
    balanced,
    clock_time,
    is_name,
    name_key,
    normalize_answer,
    split_relation,
    split_top_level,
    undouble_commands,
    unit_key,
)

__all__ = ["MathKernel"]

MAX_DISTINCT_STATEMENTS = 8
MAX_BOXES = 10_000
_GOLD_CACHE_SIZE = 4096
_WARM_SHAPES = ("x+1", "2\\sqrt{5}+3\\sqrt{2}", "\\frac{\\sqrt{3}}{2}")
_MATCHED = {  # how a parsed or numeric comparison matched -> the flag that says so
    "exact": MathFlag.EQUIVALENT_SYMBOLIC,
    "symbolic": MathFlag.EQUIVALENT_SYMBOLIC,
    "abs_tol": MathFlag.WITHIN_ABS_TOL,
    "rel_tol": MathFlag.WITHIN_REL_TOL,
}

# numbers side by side (12 13); a function's power is no number (\tan^2 60^\circ)
_JUXTAPOSED = re.compile(r"(?<!\\[a-z]{3}\^)(?<!\\[a-z]{4}\^)(?:\d\s+[\d.]|\d\s*\\[,;: ]\s*\d)")
_IN = re.compile(r"\\in\b")
# a key that ends in a constant of integration: an antiderivative, standing for its family
_PLUS_CONSTANT = re.compile(r"\+\s*C(?:_\{?\d+\}?)?\s*$")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
_COLLECTION_START = re.compile(r"^\s*(?:\\\{|\\begin\{[pbvBV]?matrix\}|\\langle)")
# the shortcuts' inputs: a plain literal, and a mixed number as the LaTeX parser reads it (an
# integer then a fraction of positive integers: 2 \frac{1}{2} is 5/2; 2 \frac{0}{3} is a product)
_PRODUCT_SIGN = re.compile(r"\\times|\\cdot|\*|" + "\u00d7")  # the last: a multiplication sign
_FACTOR = re.compile(r"(\d{1,18})(?:\s*\^\s*(?:(\d{1,2})|\{\s*(\d{1,2})\s*\}))?")
_MAX_FACTORS = 200
_PLAIN_LITERAL = re.compile(r"-?\d{1,60}(?:\.\d{1,60})?")
_MIXED_NUMBER = re.compile(r"(-?)(\d{1,60}) *\\frac\{(\d{1,60})\}\{(\d{1,60})\}")


@dataclass
class _Gold:
    answer: Answer
    is_collection: bool
    number: Fraction | None
    assignment_var: str | None
    value_core: str
    is_equation: bool
    problem: str | None = None
    #: The key as named values (``AB=4, CD=5``): one ``(name, value)`` per item.
    named: tuple[tuple[str | None, str], ...] = ()
    #: The whole key when it is ``name = expression`` (``y = 2x + 3``), for relation answers.
    equation_core: str = ""
    #: The key read as a time of day (``12:00``), compared as a time and never as a ratio.
    time: ClockTime | None = None
    #: The key as a prime factorization (``2 \times 2 \times 41``): its primes, with repeats.
    primes: tuple[int, ...] | None = None
    #: The names of a key of named tuples (``p=5, q=2; p=7, q=2``: ``("p", "q")``), so that an
    #: answer written the same way is read as the same tuples.
    tuple_names: tuple[str, ...] = ()
    _parsed: Any = field(default=None, repr=False)
    _relation: Any = field(default=None, repr=False)
    _written: _Gold | None = field(default=None, repr=False)

    def as_written(self) -> _Gold:
        """The key with a one-letter unit read as the letter it is (``5h`` as 5 times h): what
        an answer without a unit must match (docs/math.md, "A letter after a number")."""
        if self._written is None:
            written = _prepare_gold(self.answer.raw, letter_units=False)
            written.assignment_var, written.time = self.assignment_var, None
            self._written = written
        return self._written

    def parsed(self) -> Any:
        if self._parsed is None:
            from truegrade.graders.math._equiv import exact_value, parse_core

            if self.number is not None:  # 1.25e+18 is a number, not 1.25 e + 18
                self._parsed = exact_value(self.number)
            else:
                self._parsed = parse_core(
                    self.value_core if not self.is_equation else self.answer.core
                )
        return self._parsed

    def relation(self) -> Any:
        """The key as a relation to compare relation answers with."""
        if self._relation is None:
            from truegrade.graders.math._equiv import parse_core

            self._relation = parse_core(self.equation_core or self.answer.core)
        return self._relation


_GROUPED_NUMBER = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# a key written as a sentence states no answer (docs/math.md, "A key is an answer, not a
# sentence"): its words are counted outside LaTeX commands, inside \text{} as anywhere
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}")
_COMMAND = re.compile(r"\\[a-zA-Z]+")
_WORD_RUN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?(?:[ \t]+[A-Za-z]+(?:'[A-Za-z]+)?)*")
_ENDS_SENTENCE = re.compile(r"[A-Za-z0-9][.!?]$")
# words that are mathematics, not prose: function names of plain and Python syntax, and list
# separators, which end a run of words as a comma does
_NOT_PROSE = frozenset(
    {
        *("sin", "cos", "tan", "sec", "csc", "cot", "asin", "acos", "atan", "sinh", "cosh"),
        *("tanh", "exp", "log", "ln", "sqrt", "abs", "pi", "mod", "gcd", "lcm", "max", "min"),
        *("det", "lim", "oo", "infty"),
    }
)
_SEPARATORS = frozenset(("and", "or"))
# verbs that make words a statement about the answer (The answer is 5) rather than an answer
_STATING_VERBS = frozenset(
    ("is", "are", "was", "were", "be", "equals", "has", "have", "gives", "means", "can", "will")
)
_PROSE_RUN_WORDS = 5
_SENTENCE_WORDS = 3
_WORD = re.compile(r"[A-Za-z]{2,}")
_MAX_WORDS_BETWEEN_BOXES = 3
_SOLUTION_CHARS = 80


def _is_collection(answer: Answer) -> bool:
    core = answer.core
    if _GROUPED_NUMBER.fullmatch(core.strip()):
        return False  # 900,000,000 is one number
    if len(split_top_level(core)) > 1 or _COLLECTION_START.match(core) or "\\cup" in core:
        return True
    if core[:1] in "([{" and core[-1:] in ")]}":
        return len(split_top_level(core[1:-1])) > 1  # {1,2,3} is a set, as \{1,2,3\} is
    return False


def _squash(core: str) -> str:
    return re.sub(r"\s+", "", core)


def _failed_gold(answer: Answer, problem: str) -> _Gold:
    return _Gold(answer, False, None, None, "", False, problem=problem)


def _is_prose(key: str) -> bool:
    """A key written as a sentence: five words in a row (``Let's think step by step``), or three
    words or more ended by a full stop, ``!`` or ``?`` (``The answer is 5.``) or holding a verb
    that states something (``The answer is 5``, ``There is no solution``). Words are runs of
    two letters or more; single letters (variables), LaTeX commands and function names are not
    counted, and ``and`` / ``or`` separate a list as commas do. Names, ``yes``, an option letter
    and short phrases (``all real numbers``, ``\\text{no solution}``) are answers."""
    text = _COMMAND.sub(" ", _ENVIRONMENT.sub(" ", key))
    words = 0
    stating = False
    for run in _WORD_RUN.finditer(text):
        in_run = 0
        for word in run.group().split():
            lower = word.lower()
            if lower in _SEPARATORS:
                in_run = 0
            elif len(word) > 1 and lower not in _NOT_PROSE:
                in_run += 1
                words += 1
                stating = stating or lower in _STATING_VERBS
                if in_run >= _PROSE_RUN_WORDS:
                    return True
    if words < _SENTENCE_WORDS:
        return False
    ending = text.rstrip().rstrip("${} \t")
    return stating or bool(_ENDS_SENTENCE.search(ending))


def _gold_boxes(reference: str) -> str | _Gold:
    """A key written with boxes: its one boxed value, or the list its boxes make.

    The same value boxed again is one value (a solution that repeats its answer). Different
    values boxed in one phrase (``\\boxed{1} and \\boxed{2}``) are a list; boxed in different
    sentences they are two answers, and the key is refused as ambiguous.
    """
    spans = boxed_spans(reference, limit=MAX_DISTINCT_STATEMENTS)
    if not spans:
        return reference
    values = list(dict.fromkeys(content.strip() for _, _, content in spans))
    if len(values) == 1:
        return values[0]
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        gap = reference[end:start]
        if first.strip() != second.strip() and (
            "\n" in gap
            or _SENTENCE_END.search(gap)
            or len(_WORD.findall(gap)) > _MAX_WORDS_BETWEEN_BOXES
        ):
            return _failed_gold(
                normalize_answer(""),
                f"the reference boxes {len(values)} different answers in different sentences",
            )
    return ", ".join(content for _, _, content in spans)


# what a missing key looks like in a published file (a null written out, a "to be done"):
# never an answer, so never a key that fails every response
_PLACEHOLDER_KEY = re.compile(
    r"(?i)(?:n/?a|none|null|nil|nan|unknown|unk|tbd|tba|todo|\?+|-+|_+|\.\.\.|…"
    r"|see (?:above|below)|as above|no (?:key|answer|reference|solution given)(?: here| given)?"
    r"|not (?:available|applicable|given)|missing)\.?"
)


def _prepare_gold(reference: str, shortcuts: bool = True, letter_units: bool = True) -> _Gold:
    if _PLACEHOLDER_KEY.fullmatch(reference.strip()):
        return _failed_gold(
            normalize_answer(""),
            f"the reference {reference.strip()[:40]!r} is a placeholder, not an answer",
        )
    if shortcuts and _PLAIN_LITERAL.fullmatch(reference):  # most keys: no shape to read
        answer = normalize_answer(reference)
        return _Gold(answer, False, parse_number(answer.core).value, None, answer.core, False)
    reference = undouble_commands(reference)
    stated_by_hashes = gsm8k_final_answer(reference)
    if stated_by_hashes is not None:  # a GSM8K answer: its final #### line
        if not stated_by_hashes:
            return _failed_gold(normalize_answer(""), "the reference's '####' line states nothing")
        reference = stated_by_hashes
    reference = without_calculator_marks(reference)
    if "\\boxed" in reference or "\\fbox" in reference:
        boxed = _gold_boxes(reference)
        if isinstance(boxed, _Gold):
            return boxed
        reference = boxed
    elif len(reference) > _SOLUTION_CHARS:  # a worked solution as the key: its stated answer
        stated = set(final_answers(reference, boxes=False).statements)
        if len(stated) == 1:
            reference = stated.pop()
    if _is_prose(reference):
        return _failed_gold(
            normalize_answer(""), f"the reference {reference[:60]!r} is a sentence, not an answer"
        )
    loose = normalize_answer(reference, collapse_thousands=False, letter_units=letter_units)
    if loose.problem:
        return _failed_gold(loose, "the reference is too long")
    if not loose.core and not loose.is_text:
        return _failed_gold(loose, "the reference is empty")
    if not balanced(loose.core):
        return _failed_gold(loose, f"the reference {reference[:60]!r} has unbalanced brackets")
    items = None if loose.is_text else assignments(_IN.sub("=", loose.core, count=1))
    if items is not None and len(items) > 1:  # x = 10,000 is one value, not 10 and 000
        grouped = assignments(_IN.sub("=", normalize_answer(reference).core, count=1))
        if grouped is not None and len(grouped) == 1:
            items = grouped
    if items is not None and len(items) > 1:
        tuples = _value_tuples(items)
        if tuples is not None:  # p=5, q=2; p=7, q=2 is the pairs (5, 2), (7, 2)
            gold = _prepare_gold(", ".join(tuples), shortcuts, letter_units)
            gold.tuple_names = tuple(str(name) for name in dict.fromkeys(n for n, _ in items))
            return gold
        return _Gold(loose, True, None, None, loose.core, False, named=tuple(items))
    if items is not None:  # one named value: the value, with its name and the whole equation
        name, value = items[0]
        gold = _prepare_gold(value, shortcuts, letter_units)
        if gold.problem:
            return gold
        gold.assignment_var = name
        gold.equation_core = loose.core if re.search(r"[a-zA-Z]", _strip_commands(value)) else ""
        if name is not None and ":" in name:
            gold.time = None  # S_{1}:S_{2} = 7:32 is a ratio
        return gold
    is_collection = not loose.is_text and _is_collection(loose)
    answer = loose if is_collection else normalize_answer(reference, letter_units=letter_units)
    time = clock_time(answer.core) if not is_collection else None
    is_equation = len(split_relation(answer.core)) > 1 and not is_collection
    number = None
    if not is_collection and not is_equation and not answer.is_text:
        number = parse_number(answer.core).value
    primes = _prime_factors(answer.core) if not is_collection and not is_equation else None
    return _Gold(
        answer, is_collection, number, None, answer.core, is_equation, time=time, primes=primes
    )


def _value_tuples(
    items: list[tuple[str | None, str]], order: tuple[str, ...] | None = None
) -> list[str] | None:
    """``p=5, q=2, p=7, q=2`` as ``["(5, 2)", "(7, 2)"]``: the names repeat as a cycle. With
    ``order`` (a key's names), the answer's cycle must hold the same names, in any order, and
    each tuple is written in the key's."""
    names = [name for name, _ in items]
    cycle = list(dict.fromkeys(names))
    if len(cycle) < 2 or len(names) % len(cycle) or (len(names) == len(cycle) and not order):
        return None  # (one tuple of an answer is compared with the key's tuples: a partial answer)
    if names != cycle * (len(names) // len(cycle)):
        return None
    if order is not None and sorted(map(str, cycle)) != sorted(order):
        return None
    width = len(cycle)
    groups = [dict(items[i : i + width]) for i in range(0, len(items), width)]
    want = order if order is not None else cycle
    return ["(" + ", ".join(group[name] for name in want) + ")" for group in groups]


def _as_tuples(statement: str, names: tuple[str, ...]) -> str:
    """An answer written as the key's named tuples (``p=5, q=2; p=7, q=2``) as those tuples,
    ``(5, 2), (7, 2)``; any other answer as it is."""
    core = normalize_answer(statement, collapse_thousands=False).core
    items = assignments(core) if balanced(core) else None
    tuples = _value_tuples(items, names) if items is not None else None
    return ", ".join(tuples) if tuples is not None else statement


def _strip_commands(text: str) -> str:
    return re.sub(r"\\(?:frac|dfrac|sqrt|pi|cdot|times|left|right|infty)", "", text)


@dataclass
class _Result:
    passed: bool
    how: str = ""
    flags: tuple[str, ...] = ()
    why: str = ""
    #: Why the key could not be checked against this statement: the row is an error.
    error: str | None = None


def _bad_reference(why: str) -> _Result:
    return _Result(False, flags=(Flag.BAD_REFERENCE,), why=why, error=why)


@dataclass
class MathKernel:
    """Picklable per-sample check; see the module docstring.

    Attributes:
        boxes / lines: Which final-answer statements count (both by default).
        tags: Tags whose contents state the answer (``<answer>18</answer>``), with lines.
        abs_tol / rel_tol: Explicit numeric tolerances (0: exact).
        angles: Read a degree sign as pi/180 so ``45^\\circ`` equals ``\\frac{\\pi}{4}``.
        shortcuts: Take the module docstring's shortcuts (False sends every item down the full
            path: the tests that prove the shortcuts change no verdict compare the two).
    """

    deadline_clock = "cpu"  # it only computes, so it is timed in CPU time (exec.Task)

    boxes: bool = True
    lines: bool = True
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    angles: bool = False
    shortcuts: bool = True
    tags: tuple[str, ...] = ("answer",)
    _gold: OrderedDict[str, _Gold] = field(default_factory=OrderedDict, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_gold"] = OrderedDict()
        return state

    def setup(self) -> None:
        """Import SymPy and the parser once per worker, before the first deadline starts, and
        parse a few common answer shapes: the parser (ANTLR) builds its lookahead tables on the
        first sight of each construct, tens of milliseconds that would otherwise fall on the
        first graded answer with a radical or a fraction."""
        import sympy.physics.units  # noqa: F401 - the parser imports it on its first unit

        from truegrade.graders.math import _equiv

        for shape in _WARM_SHAPES:
            _equiv.parse_core(shape)

    def reads(self) -> str:
        """What counts as a final answer, for the ``no_answer`` message."""
        read = ["a \\boxed{} answer"] if self.boxes else []
        if self.lines:
            read += ["an 'Answer:' or 'Final answer:' line", "'the final answer is ...'"]
            read += ["a '#### ...' line (or '####' ending the last line)"]
            read += [f"an <{t}>...</{t}> tag" for t in self.tags]
            read += ["'the answer is ...'", "a short response's one number or math span"]
        return "the response has none of " + ", ".join(read)

    def gold(self, reference: str) -> _Gold:
        cached = self._gold.get(reference)
        if cached is None:
            cached = _prepare_gold(reference, self.shortcuts)
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
                Flag.BAD_REFERENCE,
            )
        gold = self.gold(reference)
        if gold.problem:
            return error_verdict(gold.problem, Flag.BAD_REFERENCE)
        found = final_answers(
            response,
            boxes=self.boxes,
            lines=self.lines,
            limit=MAX_BOXES,
            short=True,
            tags=self.tags,
        )
        if not found.statements:
            return verdict(False, f"no final answer: {self.reads()}", Flag.NO_ANSWER)
        distinct = list(dict.fromkeys(found.statements))
        if len(distinct) > MAX_DISTINCT_STATEMENTS:
            return verdict(False, f"{len(distinct)} different final answers", Flag.HEDGED)
        if gold.is_collection and len(distinct) > 1:
            distinct = [", ".join(distinct)]
        results = [self._check(gold, statement) for statement in distinct]
        for result in results:
            if result.error is not None:
                return error_verdict(result.error, *result.flags)
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
        if gold.problem:
            return _bad_reference(gold.problem)
        if gold.named:
            return self._compare_named(gold, statement)
        if gold.tuple_names:
            statement = _as_tuples(statement, gold.tuple_names)
        if (
            self.shortcuts
            and gold.number is not None
            and gold.time is None
            and not gold.equation_core
            and not (self.angles and gold.answer.degrees)
            and not gold.answer.letter_unit
            and _PLAIN_LITERAL.fullmatch(statement)
        ):  # a plain literal against a number: nothing to normalise, nothing to take apart
            number = parse_number(statement).value
            if number is not None:
                return self._compare_numbers(gold, statement, number)
        answer = normalize_answer(statement, collapse_thousands=not gold.is_collection)
        if answer.problem:
            return _Result(False, flags=(answer.problem,), why="the answer is too long to check")
        g = gold.answer
        if g.letter_unit and not answer.unit:  # 5 for 5h: h may be a variable
            return self._check(gold.as_written(), statement)
        if answer.letter_unit and not g.unit:  # 5h for 5: the same
            answer = normalize_answer(
                statement, collapse_thousands=not gold.is_collection, letter_units=False
            )
        if gold.time is not None:
            return _compare_times(gold.time, answer)
        if g.is_text:
            if answer.text == g.text:
                return _Result(True, Flag.EXACT_MATCH, why="matches the reference text")
            return _Result(False, why=f"{statement[:60]!r} is not {g.raw[:60]!r}")
        if g.unit and answer.unit and unit_key(g.unit) != unit_key(answer.unit):
            return _Result(
                False,
                flags=(MathFlag.UNIT_MISMATCH,),
                why=f"unit {answer.unit.strip()!r} is not {g.unit.strip()!r}",
            )
        if answer.percent and not g.percent:
            return _Result(
                False,
                flags=(MathFlag.PERCENT_MISMATCH,),
                why="the answer is a percentage and the reference is not",
            )
        core = answer.core
        if not core:
            return _Result(False, flags=(Flag.NO_ANSWER,), why="the final answer is empty")
        if not balanced(core):
            return _Result(
                False,
                flags=(MathFlag.PARSE_ERROR,),
                why=f"unbalanced brackets in {core[:40]!r}: not a single answer",
            )
        if gold.is_collection:
            core = _without_common_name(core)
        elif len(split_top_level(core)) > 1:
            return _Result(
                False, flags=(Flag.HEDGED,), why=f"several candidates in one answer: {core[:60]!r}"
            )
        if gold.is_equation:
            return self._compare_relation(gold, core)
        if gold.equation_core:
            parts = split_relation(core)
            if len(parts) > 1 and not is_name(parts[0]):  # 2x - y + 3 = 0 for y = 2x + 3
                return self._compare_relation(gold, core)
        value = self._value(gold, core)
        if isinstance(value, _Result):
            return value
        if gold.primes is not None:
            return _compare_factorizations(gold, value)
        if _JUXTAPOSED.search(value) and not gold.is_collection:
            return _Result(
                False,
                flags=(MathFlag.PARSE_ERROR,),
                why=f"numbers side by side in {value[:40]!r}: not a single answer",
            )
        return self._compare_values(gold, value, answer)

    def _compare_named(self, gold: _Gold, statement: str) -> _Result:
        """A key of named values (``AB=4, CD=5``; ``n=1, 2, 3``) against an answer that names
        them the same way (in any order) or gives the bare values (in the key's order; in any
        order when every value has the same name)."""
        answer = normalize_answer(statement, collapse_thousands=False)
        if answer.problem:
            return _Result(False, flags=(answer.problem,), why="the answer is too long to check")
        if not balanced(answer.core):
            return _Result(False, flags=(MathFlag.PARSE_ERROR,), why="unbalanced brackets")
        core = _IN.sub("=", answer.core, count=1)
        got = assignments(core)
        if got is None:
            if len(split_relation(core)) > 1:
                return _Result(False, why=f"{core[:40]!r} does not state the named values")
            got = [(None, item) for item in split_top_level(core)]
        want = list(gold.named)
        if len(got) != len(want):
            return _Result(
                False,
                flags=(Flag.HEDGED,) if len(got) > len(want) else (),
                why=f"{len(got)} values; the reference has {len(want)}",
            )
        names = [name for name, _ in want]
        if any(name is not None for name, _ in got):
            if sorted(str(n) for n, _ in got) != sorted(str(n) for n in names):
                shown = ", ".join(str(n) for n, _ in got)
                return _Result(False, why=f"answers for {shown}; the reference names {names}")
            groups = {
                n: ([v for m, v in want if m == n], [v for m, v in got if m == n]) for n in names
            }
            pairs = list(groups.values())
        elif len(set(names)) == 1:
            pairs = [([v for _, v in want], [v for _, v in got])]
        else:
            pairs = [([w], [a]) for (_, w), (_, a) in zip(want, got, strict=True)]
        hows: list[str] = []
        for wanted, given in pairs:
            remaining = list(given)
            for value in wanted:
                for i, candidate in enumerate(remaining):
                    result = self._check(self.gold(value), candidate)
                    if result.error is not None:
                        return result
                    if result.passed:
                        hows.append(result.how)
                        del remaining[i]
                        break
                else:
                    return _Result(False, why=f"no answer matches {value[:40]!r}")
        how = (
            Flag.EXACT_MATCH
            if all(h == Flag.EXACT_MATCH for h in hows)
            else MathFlag.EQUIVALENT_SYMBOLIC
        )
        return _Result(True, how, why="the named values match")

    def _value(self, gold: _Gold, core: str) -> str | _Result:
        """The value a statement asserts: ``x = 5`` asserts 5; ``5 = 3`` asserts nothing."""
        core = _IN.sub("=", core, count=1)
        parts = split_relation(core)
        if len(parts) == 1:
            return core
        lhs, chain = parts[0], parts[1:]
        if any(not p for p in parts):
            return _Result(
                False, flags=(MathFlag.PARSE_ERROR,), why="an equation with an empty side"
            )
        if is_name(lhs):
            if gold.assignment_var is not None and name_key(lhs) != gold.assignment_var:
                return _Result(
                    False, why=f"answers for {lhs!r}, the question asks for {gold.assignment_var!r}"
                )
            claims = chain
        else:
            claims = parts
        last = claims[-1]
        for other in claims[:-1]:
            same = self._same(other, last)
            if isinstance(same, _Result):
                return same
            if same is None:
                return _Result(
                    False,
                    flags=(MathFlag.FALSE_RELATION,),
                    why=f"{other[:30]!r} = {last[:30]!r} does not hold",
                )
        return last

    def _same(self, a: str, b: str) -> str | _Result | None:
        """How ``a`` equals ``b``, None when it does not, or why that cannot be checked: a side
        the parser cannot read makes the claim unreadable (``parse_error``), never false."""
        x, y = parse_number(a).value, parse_number(b).value
        if x is not None and y is not None:
            return "exact" if x == y else None
        if _squash(a) == _squash(b):
            return "exact"
        from truegrade.graders.math._equiv import equivalent, parse_core

        for parsed in (pa := parse_core(a), pb := parse_core(b)):
            if parsed.problem:
                return _Result(False, flags=(parsed.problem,), why=parsed.detail)
        return equivalent(pa.value, pb.value)

    def _compare_values(self, gold: _Gold, value: str, answer: Answer) -> _Result:
        g = gold.answer
        degrees = self.angles and answer.degrees != g.degrees
        if gold.number is not None and not degrees:
            number = parse_number(value)
            if number.value is not None:
                return self._compare_numbers(gold, value, number.value)
            if number.problem == "out_of_range":
                return _Result(
                    False,
                    flags=(MathFlag.TOO_COMPLEX,),
                    why="the answer's magnitude is beyond exact checking",
                )
        if not degrees and _squash(value) == _squash(gold.value_core):
            return _Result(True, Flag.EXACT_MATCH, why="identical to the reference")
        if self.shortcuts and not degrees and not self.abs_tol and not self.rel_tol:
            exact = _exact_mixed(gold, value)
            if exact is not None:  # what SymPy would find, comparing the same two rationals
                return exact
        from truegrade.graders.math._equiv import equivalent, exact_value, parse_core

        parsed_gold = gold.parsed()
        if parsed_gold.problem:
            return _bad_reference(f"the reference cannot be checked: {parsed_gold.detail}")
        literal = parse_number(value).value  # 1.25e18 is a number, not 1.25 e 18
        parsed = exact_value(literal) if literal is not None else parse_core(value)
        if parsed.problem:
            return _Result(False, flags=(parsed.problem,), why=parsed.detail)
        ours, theirs = parsed.value, parsed_gold.value
        if degrees:
            import sympy

            if answer.degrees:
                ours = ours * sympy.pi / 180
            else:
                theirs = theirs * sympy.pi / 180
        how = equivalent(
            theirs,
            ours,
            abs_tol=self.abs_tol,
            rel_tol=self.rel_tol,
            antiderivative=bool(_PLUS_CONSTANT.search(gold.value_core)),
        )
        if how is None:
            flags = _interval_flag(theirs, ours)
            return _Result(False, flags=flags, why=f"{value[:40]} is not {gold.value_core[:40]}")
        flag = _MATCHED[how]
        return _Result(True, flag, why=f"{value[:40]} is equivalent to {gold.value_core[:40]}")

    def _compare_numbers(self, gold: _Gold, value: str, number: Fraction) -> _Result:
        """A number key against a number read exactly from the answer ``value``."""
        assert gold.number is not None  # the callers' condition
        how = within_tolerance(number, gold.number, abs_tol=self.abs_tol, rel_tol=self.rel_tol)
        if how is None:
            return _Result(False, why=f"{value[:40]} is not {gold.value_core[:40]}")
        if how != "equal":
            flag = _MATCHED[how]
        elif _squash(value) == _squash(gold.value_core):
            flag = Flag.EXACT_MATCH
        else:
            flag = MathFlag.EQUIVALENT_NUMERIC
        return _Result(True, flag, why=f"{value[:40]} equals {gold.value_core[:40]}")

    def _compare_relation(self, gold: _Gold, core: str) -> _Result:
        from truegrade.graders.math._equiv import parse_core, relation_equivalent

        if len(split_relation(core)) < 2 and not re.search(r"\\[lg]eq?|[<>]", core):
            return _Result(False, why="the reference is an equation and the answer is not")
        whole = gold.equation_core or gold.answer.core
        if _squash(core) == _squash(whole):
            return _Result(True, Flag.EXACT_MATCH, why="identical to the reference")
        parsed_gold, parsed = gold.relation(), parse_core(core)
        if parsed_gold.problem:
            return _bad_reference(f"the reference cannot be checked: {parsed_gold.detail}")
        if parsed.problem:
            return _Result(False, flags=(parsed.problem,), why=parsed.detail)
        try:
            how = relation_equivalent(parsed_gold.value, parsed.value)
        except Exception:
            how = None
        if how is None:
            return _Result(False, why=f"{core[:40]} is not {whole[:40]}")
        return _Result(True, MathFlag.EQUIVALENT_SYMBOLIC, why="the same relation")


def _factors(core: str) -> tuple[int, ...] | None:
    """The whole numbers a product of numbers and powers multiplies (``2^4 \\times 41`` gives
    2, 2, 2, 2, 41), sorted; None for anything else, and for one number alone."""
    terms = _PRODUCT_SIGN.split(core.strip())
    if len(terms) < 2:
        return None
    factors: list[int] = []
    for term in terms:
        match = _FACTOR.fullmatch(term.strip())
        if match is None:
            return None
        factors += [int(match.group(1))] * int(match.group(2) or match.group(3) or 1)
        if len(factors) > _MAX_FACTORS:
            return None
    return tuple(sorted(factors))


def _prime_factors(core: str) -> tuple[int, ...] | None:
    """A key written as a product of primes (``2 \\times 2 \\times 41``) is a prime
    factorization; its primes, or None."""
    factors = _factors(core)
    if factors is None:
        return None
    import sympy

    return factors if all(sympy.isprime(f) for f in set(factors)) else None


def _compare_factorizations(gold: _Gold, value: str) -> _Result:
    """A prime factorization key wants the same factorization, in any order and with powers
    allowed: the number it multiplies to (``656``, an echo of the question) or another
    factorization (``4 \\times 4 \\times 41``) is not it."""
    if _factors(value) == gold.primes:
        how = (
            Flag.EXACT_MATCH
            if _squash(value) == _squash(gold.value_core)
            else MathFlag.EQUIVALENT_SYMBOLIC
        )
        return _Result(True, how, why="the same prime factorization")
    return _Result(False, why=f"{value[:40]} is not the prime factorization {gold.value_core[:40]}")


def _mixed_number(core: str) -> Fraction | None:
    """``1 \\frac{1}{10}`` as 11/10, exactly as Math-Verify's parser reads it (the integer's sign
    is the whole number's), or None for anything else."""
    match = _MIXED_NUMBER.fullmatch(core)
    if match is None:
        return None
    sign, whole, numerator, denominator = match.groups()
    if int(numerator) == 0 or int(denominator) == 0:
        return None  # the parser reads these as products, not mixed numbers
    value = int(whole) + Fraction(int(numerator), int(denominator))
    return -value if sign else value


def _exact_mixed(gold: _Gold, value: str) -> _Result | None:
    """The symbolic path's verdict when a mixed number meets a number or a mixed number: both
    parse to rationals there, and two rationals are equivalent exactly when they are equal."""
    theirs = gold.number if gold.number is not None else _mixed_number(gold.value_core)
    if theirs is None:
        return None
    ours = parse_number(value).value
    if ours is None:
        ours = _mixed_number(value)
    if ours is None:
        return None
    if ours != theirs:
        return _Result(False, why=f"{value[:40]} is not {gold.value_core[:40]}")
    return _Result(
        True,
        MathFlag.EQUIVALENT_SYMBOLIC,
        why=f"{value[:40]} is equivalent to {gold.value_core[:40]}",
    )


def _without_common_name(core: str) -> str:
    """``(x, y) = (5, 8) and (8, 5)`` as ``(5, 8), (8, 5)``: one name given to every value."""
    items = assignments(core)
    if items is None or len({name for name, _ in items}) != 1:
        return core
    return ", ".join(value for _, value in items) if len(items) > 1 else core


def _compare_times(gold: ClockTime, answer: Answer) -> _Result:
    """Times of day compare as times: ``1:15`` is not ``2:30`` (as ratios they would be equal).
    ``4:30 p.m.`` equals ``16:30``; a missing a.m./p.m. matches only a 24-hour time."""
    mine = clock_time(answer.raw.strip().strip("$").strip()) or clock_time(answer.core)
    if mine is None:
        return _Result(False, why=f"{answer.raw[:40]!r} is not a time of day; the reference is")

    def minutes(t: ClockTime) -> tuple[int, int, int]:
        hour = t.hour % 12 + (12 if t.meridiem == "pm" else 0) if t.meridiem else t.hour
        return hour, t.minute, t.second or 0

    if (gold.meridiem is None) != (mine.meridiem is None):
        plain = gold if gold.meridiem is None else mine
        if plain.hour <= 12 and plain.hour != 0:
            return _Result(False, why="a.m. or p.m. is given on one side only")
    if minutes(gold) != minutes(mine):
        return _Result(False, why=f"{answer.raw[:40]!r} is a different time")
    return _Result(True, Flag.EXACT_MATCH, why="the same time of day")


def _interval_flag(gold: Any, answer: Any) -> tuple[str, ...]:
    import sympy

    if (
        isinstance(gold, sympy.Interval)
        and isinstance(answer, sympy.Interval)
        and (gold.start == answer.start and gold.end == answer.end)
    ):
        return (MathFlag.INTERVAL_MISMATCH,)
    from truegrade.graders.math._equiv import Bag

    if isinstance(gold, sympy.Interval) != isinstance(answer, sympy.Interval) and isinstance(
        answer, (sympy.Interval, sympy.Tuple, sympy.FiniteSet, Bag)
    ):
        return (MathFlag.INTERVAL_MISMATCH,)
    return ()


def _verdict_of(result: _Result) -> dict[str, Any]:
    flags = list(result.flags)
    if result.passed and result.how:
        flags.insert(0, result.how)
    return verdict(result.passed, result.why, *flags)
