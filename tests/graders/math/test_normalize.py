from __future__ import annotations

import pytest

from truegrade.graders.math._normalize import (
    ClockTime,
    assignments,
    balanced,
    clock_time,
    is_name,
    normalize_answer,
    split_relation,
    split_top_level,
    undouble_commands,
    unit_key,
)


@pytest.mark.parametrize(
    ("raw", "core", "unit", "percent", "degrees"),
    [
        (r"$\boxed{10{,}000}$", "10000", None, False, False),
        (r"900,\!000,\!000", "900000000", None, False, False),
        (r"100\text{ square units}", "100", "square units", False, False),
        (r"48^\circ", "48", None, False, True),
        (r"48^{\circ}", "48", None, False, True),
        (r"\$6", "6", "$", False, False),
        (r"198\%", "198", None, True, False),
        (r"5 \text{ cm}", "5", "cm", False, False),
        (r"5 cm", "5", "cm", False, False),
        (r"6 \text{ inches}^2", "6", "inches^2", False, False),
        (r"\dfrac{1}{9}", r"\frac{1}{9}", None, False, False),
        (r"\left( 1, 2 \right]", "( 1, 2 ]", None, False, False),
        (r"1+\frac{1}{\mathrm{e}}", r"1+\frac{1}{e}", None, False, False),
        ("4t", "4t", None, False, False),
    ],
)
def test_markers_are_kept_as_data(raw, core, unit, percent, degrees):
    answer = normalize_answer(raw)
    assert (answer.core, answer.unit, answer.percent, answer.degrees) == (
        core,
        unit,
        percent,
        degrees,
    )


def test_words_are_text_answers_with_a_flat_key():
    gold = normalize_answer(r"\text{4:30 p.m.}")
    assert gold.is_text and gold.text == "4:30pm"
    assert normalize_answer(r"4:30 \text{ p.m.}").text == "4:30pm"
    assert normalize_answer(r"\text{Devon}").is_text
    assert not normalize_answer("x^2+1").is_text


def test_thousands_collapse_only_when_asked():
    assert normalize_answer("1,000", collapse_thousands=False).core == "1,000"
    assert normalize_answer("1,2").core == "1,2"


def test_units_compare_by_key():
    assert unit_key("centimeters") == unit_key("cm") == "cm"
    assert unit_key("square units") == "unit^2"
    assert unit_key("m") != unit_key("cm")
    assert unit_key(" p.m.") == "pm"


def test_top_level_splitting_respects_brackets():
    assert split_top_level("1, 2, 3") == ["1", "2", "3"]
    assert split_top_level(r"3 \text{ or } 5") == ["3", "5"]
    assert split_top_level("(1,2)") == ["(1,2)"]
    assert split_top_level(r"\{1,2\}") == [r"\{1,2\}"]
    assert split_top_level("f(x,y), 3") == ["f(x,y)", "3"]


def test_relations_split_at_top_level_equals_only():
    assert split_relation("x = 2+3 = 5") == ["x", "2+3", "5"]
    assert split_relation(r"x \le 5") == [r"x \le 5"]
    assert split_relation("f(a=1) = 2") == ["f(a=1)", "2"]


def test_balance():
    assert balanced("[1,3)") and balanced(r"\{1\}")
    assert not balanced("5)(7") and not balanced("(5")


def test_overlong_answers_are_refused_unread():
    assert normalize_answer("1" * 5000).problem == "answer_too_long"


@pytest.mark.parametrize(
    ("raw", "core", "unit", "percent"),
    [
        (r"11,\! 111,\! 100", "11111100", None, False),
        ("1 000 000", "1000000", None, False),
        ("12 13", "12 13", None, False),  # not groups of three: two numbers
        ("28 pct", "28", None, True),
        ("28 percentage", "28", None, True),
        ("28 per cent", "28", None, True),
        ("$125$ miles", "125", "miles", False),  # paired dollars are math delimiters
        (r"\$125", "125", "$", False),
        ("x**4 + 2*x", r"x^4 + 2 \cdot x", None, False),
        ("2*(x+1)**(n+1)", r"2 \cdot (x+1)^{n+1}", None, False),
    ],
)
def test_number_and_syntax_formats(raw, core, unit, percent):
    answer = normalize_answer(raw)
    assert (answer.core, answer.unit, answer.percent) == (core, unit, percent)


def test_python_powers_stay_linear_on_hostile_input():
    assert normalize_answer("x**(" * 500).core.count("^") == 500


def test_doubled_backslashes_before_a_command_are_undone():
    assert undouble_commands(r"-2 \\le x \\le 7") == r"-2 \le x \le 7"
    assert undouble_commands(r"1 & 0 \\ 0 & 1") == r"1 & 0 \\ 0 & 1"  # a matrix row break


@pytest.mark.parametrize(
    ("text", "time"),
    [
        ("12:00", ClockTime(12, 0, None, None)),
        ("4:30 p.m.", ClockTime(4, 30, None, "pm")),
        (r"\text{4:30 p.m.}", ClockTime(4, 30, None, "pm")),
        ("16:45:10", ClockTime(16, 45, 10, None)),
        ("1:2", None),  # minutes have two digits: a ratio
        ("25:00", None),
        ("13:00 pm", None),
        ("7:60", None),
    ],
)
def test_clock_times(text, time):
    assert clock_time(text) == time


@pytest.mark.parametrize(
    ("lhs", "named"),
    [
        ("x", True),
        ("x_{1}", True),
        ("f(x)", True),
        ("AB", True),
        ("|AB|", True),
        ("(p,q)", True),
        ("S_{MBCN}:S", True),
        (r"\frac{NO}{BO}", True),
        (r"\alpha", True),
        ("2x", False),
        ("x+y", False),
        ("a^2", False),
        (r"\sin x", False),
        (r"\frac{1}{2}", False),
    ],
)
def test_names(lhs, named):
    assert is_name(lhs) is named


def test_assignments():
    assert assignments("AB=4, CD=5") == [("AB", "4"), ("CD", "5")]
    assert assignments("n=1, 2, 3") == [("n", "1"), ("n", "2"), ("n", "3")]
    assert assignments("a_{3} = 2") == [("a_3", "2")]
    assert assignments("z = 1 + 1 = 2") == [("z", "2")]
    assert assignments("x = 2x - 5") is None  # an equation to solve
    assert assignments("x^2 + y^2 = 1") is None
    assert assignments("x < 3, x = 5") is None
    assert assignments("1, 2, 3") is None
