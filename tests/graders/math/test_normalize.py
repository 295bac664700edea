from __future__ import annotations

import pytest

from truegrade.graders.math._normalize import (
    balanced,
    normalize_answer,
    split_relation,
    split_top_level,
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
