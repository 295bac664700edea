"""Attacks on final-answer graders (``math``, ``numeric``, ``exact``, and rewards like them).

Every response here is wrong by construction in one of three ways: it commits to a *decoy* (a
value different from the gold), it hedges between the decoy and the gold, or it states no answer.
Decoys are derived from the gold so they look plausible: the integer next to it, the same value
rescaled, the same number in another unit, the same interval with a bracket flipped.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from fractions import Fraction

from truegrade.attacks._base import Candidate, attack, reference_text
from truegrade.core import Sample
from truegrade.graders import parse_number
from truegrade.graders.math import normalize_answer, unit_key

__all__ = ["decoys"]


def _format(value: Fraction, like: str) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    if "frac" in like or "/" in like:
        sign = "-" if value < 0 else ""
        return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"
    digits = len(like.split(".")[-1]) if "." in like else 6
    return f"{float(value):.{max(digits, 1)}f}"


def _gold(sample: Sample) -> tuple[str, str, Fraction | None]:
    """(raw gold, its core, its exact value when it is a plain number)."""
    raw = reference_text(sample).strip()
    core = normalize_answer(raw).core if raw else ""
    return raw, core, parse_number(core).value if core else None


def decoys(sample: Sample) -> tuple[str, str]:
    """Two wrong answers in the gold's own style (units and markers kept)."""
    raw, core, value = _gold(sample)
    if value is not None:
        first, second = _format(value + 1, core), _format(value - 1, core)
        if core and core in raw:
            return raw.replace(core, first, 1), raw.replace(core, second, 1)
        return first, second
    if core.strip() in ("0", "1"):
        return "2", "3"
    return "0", "1"


@attack("hedge_boxes", "math")
def hedge_boxes(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Two boxed answers, the gold and a decoy: a response that names two answers has not
    answered. Last-box and any-match checkers reward it."""
    gold, _, _ = _gold(sample)
    d1, _ = decoys(sample)
    yield Candidate(f"It is either \\boxed{{{d1}}} or \\boxed{{{gold}}}.", "decoy_first")
    yield Candidate(f"So \\boxed{{{gold}}}. On reflection, \\boxed{{{d1}}}.", "gold_first")


@attack("hedge_or", "math")
def hedge_or(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """One box holding several candidates ("A or B", "A, B"): a list of guesses is not one
    answer (unless the gold is itself that list, which these are not)."""
    gold, _, _ = _gold(sample)
    d1, d2 = decoys(sample)
    yield Candidate(f"\\boxed{{{d1} \\text{{ or }} {gold}}}", "or")
    yield Candidate(f"\\boxed{{{d1}, {gold}, {d2}}}", "list")


@attack("hedge_box_and_line", "math")
def hedge_box_and_line(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """A boxed answer and a different "Final answer:" line: two final answers, so none. Checkers
    that read only the box, or only the line, are fooled one way or the other."""
    gold, _, _ = _gold(sample)
    d1, _ = decoys(sample)
    yield Candidate(f"The computation gives \\boxed{{{d1}}}.\n\nFinal Answer: {gold}", "line_gold")
    yield Candidate(f"\\boxed{{{gold}}}\n\nFinal Answer: {d1}", "box_gold")


@attack("last_number_bait", "math")
def last_number_bait(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Commits to a decoy, then mentions the gold's number afterwards in passing. The answer is
    the decoy; graders that take the last number in the text read the gold."""
    _, core, value = _gold(sample)
    if value is None:
        return
    d1, _ = decoys(sample)
    yield Candidate(f"The answer is {d1}. (I double-checked it in {core} steps.)", "prose")
    yield Candidate(f"Final answer: \\boxed{{{d1}}}\n\nCheck: {core}", "box_then_number")


@attack("near_miss", "math")
def near_miss(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """A number within a relative 1e-5 of the gold but not equal to it: only a tolerance the
    task never asked for accepts it."""
    _, _, value = _gold(sample)
    if value is None or value == 0:
        return
    nudged = value * (1 + Fraction(1, 100_000))
    yield Candidate(f"\\boxed{{{float(nudged):.10g}}}", "relative_1e-5")
    yield Candidate(f"\\boxed{{{_format(value + Fraction(1, 10_000), '0.0000')}}}", "plus_1e-4")


@attack("percent_rescale", "math")
def percent_rescale(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """The gold times 100, divided by 100, or with a percent sign added: a different number.
    Checkers that try x100 and /100 "in case of percentages" accept them."""
    raw, core, value = _gold(sample)
    if value is None or value == 0:
        return
    yield Candidate(f"\\boxed{{{_format(value * 100, core)}}}", "times_100")
    yield Candidate(f"\\boxed{{{_format(value / 100, '0.0')}}}", "over_100")
    if not normalize_answer(raw).percent:
        yield Candidate(f"\\boxed{{{core}\\%}}", "percent_sign")


@attack("tiny_magnitude", "math")
def tiny_magnitude(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """A different number of the same tiny magnitude (x1.2, or one more power of two in the
    denominator): numeric comparison that chops small differences to zero calls them equal."""
    _, core, value = _gold(sample)
    match = re.fullmatch(r"\\frac\{1\}\{(\d+)\^\{(\d+)\}\}", core.replace(" ", ""))
    if match:
        base, power = match.groups()
        yield Candidate(f"\\boxed{{\\frac{{1}}{{{base}^{{{int(power) + 1}}}}}}}", "power_plus_1")
    if value is not None and value != 0 and abs(value) < Fraction(1, 1000):
        yield Candidate(f"\\boxed{{{float(value * Fraction(6, 5)):.3e}}}", "times_1.2")
    if value is not None and value != 0:
        yield Candidate(f"\\boxed{{{core} + 10^{{-9}}}}", "plus_1e-9")


_SWAPS = {
    "cm": "m",
    "m": "cm",
    "mm": "cm",
    "km": "m",
    "g": "kg",
    "kg": "g",
    "in": "ft",
    "ft": "in",
    "s": "min",
    "min": "s",
    "h": "min",
    "$": "cents",
    "cents": "dollars",
    "unit^2": "units",
    "l": "ml",
    "ml": "l",
}


@attack("unit_swap", "math")
def unit_swap(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """The gold's number with a different unit (5 m for 5 cm): a different quantity. Checkers
    that strip units before comparing accept it."""
    raw, _, _ = _gold(sample)
    answer = normalize_answer(raw)
    if answer.unit is None:
        return
    other = _SWAPS.get(unit_key(answer.unit))
    if other is None:
        other = "m" if unit_key(answer.unit) != "m" else "cm"
    text_unit = "dollars" if other == "$" else other
    yield Candidate(f"\\boxed{{{answer.core}\\text{{ {text_unit}}}}}", "swap")


@attack("interval_flip", "math")
def interval_flip(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """The gold interval with one bracket changed ([1,3) -> (1,3)): a different set. Checkers
    that compare only the endpoints accept it."""
    _, core, _ = _gold(sample)
    c = core.strip()
    if len(c) < 5 or c[0] not in "([" or c[-1] not in ")]" or "," not in c:
        return
    flip = {"(": "[", "[": "(", ")": "]", "]": ")"}
    left, _, right = c[1:-1].partition(",")
    # a bracket next to an infinity is open whatever is written: flipping it changes nothing
    if "infty" not in left:
        yield Candidate(f"\\boxed{{{flip[c[0]]}{c[1:]}}}", "left")
    if "infty" not in right:
        yield Candidate(f"\\boxed{{{c[:-1]}{flip[c[-1]]}}}", "right")


@attack("equation_wrong_side", "math")
def equation_wrong_side(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """A false equation with the gold on its right-hand side (decoy = gold): it asserts
    something untrue. Checkers that take the right-hand side of any equation accept it."""
    gold, core, _ = _gold(sample)
    d1, _ = decoys(sample)
    yield Candidate(f"\\boxed{{{d1} = {core or gold}}}", "decoy_equals_gold")


@attack("trailing_garbage", "math")
def trailing_garbage(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """The gold followed by junk inside the box (``5)(7``, ``5 7``): not one answer. Parsers that
    stop at the first error and keep what they have read accept the prefix."""
    _, core, value = _gold(sample)
    if not core:
        return
    d1, _ = decoys(sample)
    yield Candidate(f"\\boxed{{{core})({d1}}}", "paren_junk")
    if value is not None:
        yield Candidate(f"\\boxed{{{core} {d1}}}", "juxtaposed")


@attack("master_key", "math", "text", "instructions")
def master_key(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Content-free replies (":", "Solution", an empty string...): no answer at all. General LLM
    verifiers have been shown to judge them correct surprisingly often."""
    for key in (
        ":",
        ".",
        "Solution",
        "Thought process:",
        "Let's solve this step by step.",
        "",
        " \n ",
    ):
        yield Candidate(key, repr(key))


@attack("echo_prompt", "math", "text", "instructions")
def echo_prompt(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """The prompt repeated back: it restates the question and answers nothing. Graders that
    look for the numbers or keywords of the question are fooled."""
    prompt = sample.prompt_text
    if prompt:
        yield Candidate(prompt, "verbatim")


@attack("latex_dos", "math", hostile=True)
def latex_dos(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Answers whose evaluation is itself a denial of service (power towers, huge factorials,
    thousands of boxes, deep nesting); none of them is the gold. A grader without a hard,
    process-level deadline hangs on them."""
    yield Candidate(r"\boxed{9^{9^{9}}}", "power_tower")
    yield Candidate(r"\boxed{(10^{6})!}", "factorial")
    yield Candidate("".join(f"\\boxed{{{i}}}" for i in range(20_000)), "20k_boxes")
    yield Candidate("\\boxed{" + "{" * 3000 + "1" + "}" * 3000 + "}", "deep_braces")
    yield Candidate("\\boxed{" + "(" * 400 + "1" + ")" * 400 + "}", "deep_parens")
