"""The shared final-answer extractor: every statement counts, and nothing in it can be made slow."""

from __future__ import annotations

import pytest

from truegrade.core import gsm8k_final_answer
from truegrade.graders._extract import (
    boxed_contents,
    clean_answer,
    final_answers,
    without_calculator_marks,
)


def test_boxes_are_brace_balanced_and_nested_boxes_belong_to_the_outer_one():
    assert boxed_contents(r"so \boxed{\frac{1}{2}} and \fbox{x^{2}}") == [r"\frac{1}{2}", "x^{2}"]
    assert boxed_contents(r"\boxed{a \boxed{b}}") == [r"a \boxed{b}"]
    assert boxed_contents(r"\boxed{unclosed") == []


def test_all_explicit_statements_are_returned():
    text = "Work...\nFinal Answer: 7\n\\boxed{8}\n#### 9"
    found = final_answers(text)
    assert found.level == "explicit"
    assert sorted(found.statements) == ["7", "8", "9"]


def test_answer_line_wrapping_a_box_is_one_statement():
    assert final_answers("Answer: $\\boxed{5}$").statements == ("5",)


def test_phrased_answers_only_when_nothing_explicit():
    assert final_answers("I think the answer is 12. Done").statements == ("12",)
    assert final_answers("the answer is 3\n\\boxed{4}").statements == ("4",)
    assert final_answers("nothing here").level == "none"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("  **42**. ", "42"), ("$x+1$", "x+1"), ("\\(3\\)", "3"), ("1..", "1..")],
)
def test_clean_answer(raw, clean):
    assert clean_answer(raw) == clean


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "hostile",
    [
        "answer" + " " * 200_000 + "x",
        ("the answer " + " " * 1000) * 200,
        "\\boxed{" * 20_000,
        "{" * 100_000 + "\\boxed{1}",
        ("Answer: 1\n" * 50_000),
        "####" + " \t" * 100_000,
        ("\\boxed{}" * 100_000),
    ],
)
def test_hostile_inputs_finish(hostile):
    # linear-time by construction: a quadratic pattern would not finish under the timeout
    found = final_answers(hostile)
    assert len(found.statements) <= 64


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("Answer $ 9 $", "9"),
        ("Answer \\[ \n 9 \n \\]", "9"),
        ("Therefore $x \\geq 5$ is the solution.", "x \\geq 5"),
        ("$28$ %", "28 \\%"),
        ("28 percent", "28 percent"),
        ("1,000.99$", "\\$1,000.99"),
        ("Answer $5$ or 6.", None),  # a digit outside the one span
        ("Answer $5$ or $6$.", None),  # two spans
        ("Answer $ \n 9 \n $", None),  # an inline span does not cross a line
        ("I computed 5 and I'm confident.", None),
        ("Compute $\\frac{1}{2}+\\frac{1}{3}$.", None),  # an echoed instruction
        ("What is $2+3$?", None),  # an echoed question
        ("Simplify: $\\frac{2}{4}$", None),
        ("Nice $5$ there", None),  # no concluding word
        ("$9$", "9"),
        ("We find that $x \\lt 3$.", "x \\lt 3"),
        (
            "Special matrix: $ \\begin{pmatrix}1 \\end{pmatrix} $",
            "\\begin{pmatrix}1 \\end{pmatrix}",
        ),
        ("$5", "\\$5"),  # one unpaired dollar sign is currency
    ],
)
def test_a_short_response_states_its_one_math_span_or_lone_number(text, statement):
    found = final_answers(text, short=True)
    assert found.statements == ((statement,) if statement else ())
    assert final_answers(text).statements == ()  # only when the caller asks


def test_an_answer_line_written_as_a_sentence_states_what_follows_is():
    found = final_answers("Final Answer: The largest $n$ is 34.", short=True)
    assert found.statements == ("34",)
    assert final_answers("Answer: x = 3 is 4", short=True).statements == ("x = 3 is 4",)


@pytest.mark.timeout(20)
def test_sentence_answer_lines_stay_linear():
    found = final_answers("Answer: " + "this is " * 50_000 + "5", short=True)
    assert found.statements == ("5",)


def test_a_final_answer_run_on_after_the_solution_counts_mid_line():
    text = (
        "so 5 x 6 x 4 = 120. Final Answer: The volume of $ABCDEFGH$ is 120. I hope it is correct."
    )
    assert final_answers(text, short=True).statements == ("120",)
    assert final_answers(text).statements == ()  # only when the caller asks
    hedge = "x\n**Final Answer:** 7\nso Final answer: 8"
    assert final_answers(hedge, short=True).statements == ("7", "8")


def test_the_cheap_answer_word_scan_misses_nothing_the_patterns_match():
    # the line patterns match case-insensitively, so "ANSWER" and a long s (U+017F) still count
    assert final_answers("\\boxed{5}\nFINAL ANSWER: 3").statements == ("5", "3")
    assert final_answers("\\boxed{5}\nFinal an\u017fwer: 3").statements == ("5", "3")
    assert final_answers("\\boxed{5}\n#### 3").statements == ("5", "3")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 24", "24"),
        ("The total is 5+5=<<5+5=10>>10.\n#### 10", "10"),  # short: not read as an equation
        ("#### 1,000", "1,000"),
        ("#### 3\nthen\n#### 72", "72"),  # the final line
        ("####", ""),
        ("He sold 5.\n####   ", ""),
        ("72", None),
        ("a ####b", None),  # not a line of its own
    ],
)
def test_a_gsm8k_answer_states_what_its_final_hashes_line_says(text, key):
    assert gsm8k_final_answer(text) == key


def test_calculator_marks_are_never_read():
    assert without_calculator_marks("48/2 = <<48/2=24>>24") == "48/2 = 24"
    assert without_calculator_marks("x << 3 >> 1") == "x << 3 >> 1"  # a shift, not a mark
    found = final_answers("He sold 5+5=<<5+5=10>>10 and \\boxed{<<5+5=10>>10}\n#### 10")
    assert found.statements == ("10", "10")
    assert final_answers("\\boxed{3}\n#### 5").statements == ("3", "5")  # two answers: a hedge


@pytest.mark.timeout(20)
@pytest.mark.parametrize("hostile", ["<<" * 200_000, "<<1=" + "1" * 200_000, "<<=" * 100_000])
def test_calculator_marks_are_removed_in_linear_time(hostile):
    assert without_calculator_marks(hostile) == hostile
    assert gsm8k_final_answer("#### " + hostile) == hostile
