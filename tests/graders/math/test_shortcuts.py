"""The math kernel's shortcuts change no grade: each corpus is graded with them and without them
(``MathKernel(shortcuts=False)``: every item down the full path), and the verdicts, flags and
explanations must be identical, under every option that touches a shortcut's conditions.

Corpora: the 800 real Qwen2.5-Math responses (when the shared data is present), Math-Verify's own
cases, every case of the math grader's tests, and cases built on the shortcuts' edges (signs,
zeros, spacing, leading zeros, the forms the parser reads as products, units, percent, degrees).
Each corpus also shows the shortcuts are taken: less parsing and normalising with them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.external._suite import load_cases, prediction
from tests.graders.math import test_answer_formats, test_math_grader
from tests.reference import QWEN_MATH, read_jsonl
from truegrade.graders.math import _check, _equiv
from truegrade.graders.math._check import MathKernel

ROOT = Path(__file__).resolve().parents[3]
QWEN = QWEN_MATH

OPTIONS: list[dict[str, Any]] = [
    {},
    {"angles": True},
    {"abs_tol": 0.01},
    {"rel_tol": 1e-3},
    {"boxes": False},
]

MIXED = [
    r"1\frac{1}{10}",
    r"1 \frac{1}{10}",
    r"1  \dfrac{1}{10}",
    r"-1\frac{1}{10}",
    r"-0\frac{1}{2}",
    r"0\frac{3}{2}",
    r"007\frac{1}{2}",
    r"1\frac{01}{02}",
    r"5\frac{4}{2}",
    r"2\frac{0}{3}",  # a product for the parser: 0
    r"2\frac{1}{0}",
    r"1\frac{-1}{2}",
    r"1.5\frac{1}{2}",
    r"1\frac12",
    r"1\frac{ 1 }{2}",
    r"- 1\frac{1}{2}",
    r"1\frac{1}{2}x",
    r"123456789012345678901234567890\frac{1}{3}",
]
NUMBERS = [
    "1.1",
    "11/10",
    r"\frac{11}{10}",
    "-1.1",
    "0.5",
    "-0.5",
    "1.5",
    "7",
    "-7",
    "0",
    "0.0",
    "-0",
    "27",
    "027",
    "27.",
    "2.50",
    "1e3",
    "1000",
    "10,000",
    "45",
    r"45^\circ",
    r"45^{\circ}",
    r"\frac{\pi}{4}",
    "5%",
    r"5\%",
    r"5 \text{ cm}",
    r"5\text{ m}",
    "12:00",
    "x = 27",
    "x=1.1",
    r"\$27",
    r"27 \text{ dollars}",
    "1234567890123456789012345678901234567890123456789012345678901234567",
]
EDGES = [(f"\\boxed{{{a}}}", b) for a in MIXED + NUMBERS for b in MIXED + NUMBERS] + [
    (f"The answer is {a}.", b) for a in ("27", "-0.25", r"1\frac{1}{2}") for b in NUMBERS
]


def _qwen_pairs() -> list[tuple[str, str]]:
    rows = read_jsonl(QWEN)
    return [(response, str(row["answer"])) for row in rows for response in row["code"]]


def _test_cases() -> list[tuple[str, str]]:
    pairs = [(r, g) for _, r, g in test_answer_formats.RIGHT]
    pairs += [(r, g) for _, r, g, _ in test_answer_formats.WRONG]
    pairs += [(r, g) for r, g, _ in test_math_grader.WRONG]
    pairs += [(r, g) for r, g in test_math_grader.RIGHT]
    return pairs


def _math_verify_cases() -> list[tuple[str, str]]:
    return [(prediction(case["pred"]), case["gold"]) for case in load_cases()]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every core sent to Math-Verify's LaTeX parser or to the normaliser: the work the
    shortcuts skip."""
    calls: list[str] = []
    parse, normalize = _equiv.parse_core, _check.normalize_answer

    def counted_parse(core: str) -> Any:
        calls.append(core)
        return parse(core)

    def counted_normalize(text: str, **kwargs: Any) -> Any:
        calls.append(text)
        return normalize(text, **kwargs)

    monkeypatch.setattr(_equiv, "parse_core", counted_parse)
    monkeypatch.setattr(_check, "normalize_answer", counted_normalize)
    return calls


def _assert_same_grades(
    pairs: list[tuple[str, str]], parses: list[str], options: list[dict[str, Any]]
) -> None:
    for option in options:
        fast, full = MathKernel(**option), MathKernel(**option, shortcuts=False)
        before = len(parses)
        quick = [fast(pair) for pair in pairs]
        taken = len(parses) - before
        slow = [full(pair) for pair in pairs]
        differ = [(pair, a, b) for pair, a, b in zip(pairs, quick, slow, strict=True) if a != b]
        assert differ == [], (option, differ[:3])
        assert taken < len(parses) - before - taken, ("no shortcut taken", option)
    for gold in {g for _, g in pairs}:  # the keys read the same way too
        assert _check._prepare_gold(gold) == _check._prepare_gold(gold, shortcuts=False), gold


@pytest.mark.shared_data
def test_the_800_real_responses_get_the_same_grades(parses):
    _assert_same_grades(_qwen_pairs(), parses, OPTIONS[:3])


@pytest.mark.slow
def test_math_verify_cases_get_the_same_grades(parses):
    _assert_same_grades(_math_verify_cases(), parses, OPTIONS)


def test_the_grader_tests_cases_get_the_same_grades(parses):
    _assert_same_grades(_test_cases(), parses, OPTIONS)


def test_cases_on_the_shortcuts_edges_get_the_same_grades(parses):
    _assert_same_grades(EDGES, parses, OPTIONS[:3])  # the options the shortcuts look at


def test_a_mixed_number_is_read_as_the_parser_reads_it():
    for core in MIXED:
        core = core.replace("\\dfrac", "\\frac")
        mine = _check._mixed_number(core)
        if mine is None:
            continue
        parsed = _equiv.parse_core(core)
        assert parsed.problem is None, core
        assert parsed.value == _equiv.exact_value(mine).value, core
    assert _check._mixed_number(r"2\frac{0}{3}") is None  # a product for the parser
    assert _check._mixed_number(r"1\frac{1}{10}") == _check.Fraction(11, 10)
