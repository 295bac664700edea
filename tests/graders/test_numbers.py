from __future__ import annotations

from fractions import Fraction

import pytest

from truegrade.graders._numbers import parse_number, within_tolerance


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("-3", -3),
        ("+7", 7),
        ("10,000", 10000),
        ("10{,}000", 10000),
        ("10\\,000", 10000),
        ("0.5", Fraction(1, 2)),
        (".25", Fraction(1, 4)),
        ("1e3", 1000),
        ("2.5E-1", Fraction(1, 4)),
        ("1/2", Fraction(1, 2)),
        ("-1/3", Fraction(-1, 3)),
        ("\\frac{3}{4}", Fraction(3, 4)),
        ("-\\dfrac{3}{4}", Fraction(-3, 4)),
        ("\\frac12", Fraction(1, 2)),
        ("\\$5", 5),
    ],
)
def test_literal_forms_parse_exactly(text, value):
    parsed = parse_number(text)
    assert parsed.value == value and not parsed.percent


@pytest.mark.parametrize(
    "text",
    [
        "1,00",
        "1,0000",
        "x",
        "3 or 5",
        "5)(7",
        "5, 3",
        "1/0",
        "",
        "2^10",
        "1.2.3",
        "0x10",
        "nan",
        "inf",
        "1_000",
    ],
)
def test_anything_else_is_not_a_number(text):
    assert parse_number(text).value is None


def test_percent_is_recorded_not_rescaled():
    parsed = parse_number("50\\%")
    assert parsed.value == 50 and parsed.percent


@pytest.mark.parametrize("text", ["1e999999999", "9" * 5000, "1/" + "9" * 5000])
def test_magnitudes_that_would_make_arithmetic_a_dos_are_refused(text):
    assert parse_number(text).problem == "out_of_range"


def test_tolerances_are_explicit():
    a, b = Fraction(10001), Fraction(10000)
    assert within_tolerance(a, b) is None
    assert within_tolerance(a, b, rel_tol=1e-4) == "rel_tol"
    assert within_tolerance(a, b, abs_tol=1) == "abs_tol"
    tiny_a, tiny_b = Fraction(1, 2**98), Fraction(1, 2**99)
    assert within_tolerance(tiny_a, tiny_b) is None
