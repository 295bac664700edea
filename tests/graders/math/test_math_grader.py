"""The math grader against every wrong-answer class in the field guide, and its true equivalents.

Each attack is wrong by construction; each equivalent is right by construction. All of them run
through ``load_grader("math")`` and the real engine, as a user would run them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from truegrade.core import Flag, SpecError, load_grader
from truegrade.graders.math import MathFlag

GOLD_5 = "5"


@pytest.fixture(scope="module")
def grader():
    return load_grader("math")


def grade_all(grader, pairs):
    rows = [{"id": i, "response": r, "reference": g} for i, (r, g) in enumerate(pairs)]
    return grader.grade_batch(rows)


# (response, gold, flag expected or None)
WRONG = [
    # hedges
    (r"\boxed{3} or \boxed{5}", "5", Flag.HEDGED),
    (r"It is \boxed{5}. Actually \boxed{7}.", "5", Flag.HEDGED),
    (r"\boxed{3 \text{ or } 5}", "5", Flag.HEDGED),
    (r"\boxed{3, 4, 5, 6}", "5", Flag.HEDGED),
    ("\\boxed{5}\nFinal Answer: 3", "5", Flag.HEDGED),
    ("Final answer: 5\n\n#### 6", "5", Flag.HEDGED),
    ("The final answer is $3$.\n\\boxed{5}", "5", Flag.HEDGED),
    (r"\boxed{x = 3 \text{ or } x = 5}", "5", Flag.HEDGED),
    # loose numerics (only a tolerance accepts them)
    (r"\boxed{10001}", "10000", None),
    (r"\boxed{9999}", "10{,}000", None),
    (r"\boxed{6.28}", r"2\pi", None),
    (r"\boxed{3.1416}", r"\pi", None),
    (r"\boxed{0.333}", r"\frac{1}{3}", None),
    (r"\boxed{1.414}", r"\sqrt{2}", None),
    # percent rescaling
    (r"\boxed{500}", "5", None),
    (r"\boxed{0.05}", "5", None),
    (r"\boxed{5\%}", "5", MathFlag.PERCENT_MISMATCH),
    (r"\boxed{0.25}", r"25\%", None),
    # tiny magnitudes
    (r"\boxed{\frac{1}{2^{99}}}", r"\frac{1}{2^{98}}", None),
    (r"\boxed{0.0000012}", "0.000001", None),
    (r"\boxed{2 \times 10^{-10}}", r"10^{-10}", None),
    # unit swaps
    (r"\boxed{5\text{ m}}", r"5\text{ cm}", MathFlag.UNIT_MISMATCH),
    (r"\boxed{5 \text{ kg}}", r"5\text{ g}", MathFlag.UNIT_MISMATCH),
    (r"\boxed{12 \text{ inches}}", r"12\text{ feet}", MathFlag.UNIT_MISMATCH),
    (r"\boxed{1+\frac{1}{\mathrm{e}}}", r"1-\frac{1}{e}", None),
    # silent truncation / trailing garbage
    (r"\boxed{5,3}", "5", Flag.HEDGED),
    (r"\boxed{5)(7}", "5", MathFlag.PARSE_ERROR),
    (r"\boxed{5 3}", "8", MathFlag.PARSE_ERROR),
    (r"\boxed{5]}", "5", MathFlag.PARSE_ERROR),
    # interval brackets
    (r"\boxed{(1,3)}", "[1,3)", MathFlag.INTERVAL_MISMATCH),
    (r"\boxed{[1,3]}", "[1,3)", MathFlag.INTERVAL_MISMATCH),
    (r"\boxed{(-\infty, 3)}", r"(-\infty, 3]", MathFlag.INTERVAL_MISMATCH),
    # relations with the gold on the wrong side
    (r"\boxed{5=3}", "3", MathFlag.FALSE_RELATION),
    (r"\boxed{3 = 5}", "5", MathFlag.FALSE_RELATION),
    (r"\boxed{x = 2 = 3}", "3", MathFlag.FALSE_RELATION),
    (r"\boxed{y = 5}", "x=5", None),
    # master keys and empty answers
    (":", "5", Flag.NO_ANSWER),
    (".", "5", Flag.NO_ANSWER),
    ("Solution", "5", Flag.NO_ANSWER),
    ("Thought process:", "5", Flag.NO_ANSWER),
    ("", "5", Flag.NO_ANSWER),
    ("   \n\t ", "5", Flag.NO_ANSWER),
    (r"\boxed{}", "5", Flag.NO_ANSWER),
    (r"\boxed{\phantom{5}}", "5", Flag.NO_ANSWER),
    # echoing the prompt
    ("What is 2+3? Put your final answer in \\boxed{}.", "5", Flag.NO_ANSWER),
    # the answer only in prose (no final-answer statement)
    ("I computed 5 and I'm confident.", "5", Flag.NO_ANSWER),
    ("First the answer is 3. No wait, the answer is 5.", "5", Flag.HEDGED),
    # a different variable, a different set
    (r"\boxed{\{1, 2, 4\}}", r"\{1,2,3\}", None),
    (r"\boxed{\{1, 2\}}", r"\{1,2,3\}", None),
    (r"\boxed{(2, 1)}", "(1,2)", None),
    (r"\boxed{x^2 + 1}", r"y^2 + 1", None),
]


def test_the_flags_are_the_documented_ones():
    # the values are part of the output format: docs/math.md lists every flag the grader raises
    page = (Path(__file__).resolve().parents[3] / "docs" / "math.md").read_text()
    listed = re.search(r"Flags \(.*?\): (.*?)\.\s", page, re.DOTALL)
    assert listed is not None
    documented = set(re.findall(r"`([a-z_]+)`", listed.group(1)))
    ours = {v for k, v in vars(MathFlag).items() if k.isupper()}
    shared = {Flag.EXACT_MATCH, Flag.HEDGED, Flag.NO_ANSWER, Flag.BAD_REFERENCE, Flag.TIMEOUT}
    assert documented == ours | shared
    assert ours & shared == set()


@pytest.mark.parametrize(("response", "gold", "flag"), WRONG)
def test_wrong_answers_are_rejected_with_a_reason(grader, response, gold, flag):
    g = grader.grade({"id": 1, "response": response, "reference": gold})
    assert g.error is None, g.error
    assert g.passed is False, (response, gold, g)
    assert g.explanation
    if flag:
        assert flag in g.flags, (response, g.flags)


RIGHT = [
    (r"\boxed{\frac12}", "0.5"),
    (r"\boxed{0.5}", r"\frac{1}{2}"),
    (r"\boxed{1/2}", r"\dfrac{1}{2}"),
    (r"\boxed{\tfrac{1}{2}}", "1/2"),
    (r"\boxed{-\frac{1}{2}}", r"\frac{-1}{2}"),
    (r"\boxed{10000}", "10{,}000"),
    (r"\boxed{10,000}", "10000"),
    (r"\boxed{900,\!000,\!000}", "900000000"),
    (r"\boxed{\{2,1\}}", r"\{1,2\}"),
    (r"\boxed{2, 1}", "1, 2"),
    (r"\boxed{\pi/4}", r"\frac{\pi}{4}"),
    (r"\boxed{x = 5}", "5"),
    (r"\boxed{5}", "x=5"),
    (r"\boxed{x=5}", "x=5"),
    (r"\boxed{50}", r"50\%"),
    (r"\boxed{50\%}", r"50\%"),
    (r"\boxed{\$6}", "6"),
    (r"\boxed{6}", r"\$6"),
    (r"\boxed{6 \text{ dollars}}", r"\$6"),
    (r"\boxed{100}", r"100\text{ square units}"),
    (r"\boxed{5 \text{ centimeters}}", r"5\text{ cm}"),
    (r"\boxed{48}", r"48^\circ"),
    (r"\boxed{2\sqrt{3}}", r"\sqrt{12}"),
    (r"\boxed{\frac{\sqrt{2}}{2}}", r"\frac{1}{\sqrt{2}}"),
    (r"\boxed{\frac{63}{5}}", r"12\frac{3}{5}"),
    (r"\boxed{12\frac{3}{5}}", r"12.6"),
    (r"\boxed{\frac{n(n-1)(n-2)}{6}}", r"\binom{n}{3}"),
    (r"\boxed{y = 2x + 3}", "y=2x+3"),
    (r"\boxed{2x - y + 3 = 0}", "y = 2x + 3"),
    (r"\boxed{\left(-\infty, 3\right]}", r"(-\infty, 3]"),
    (r"\boxed{[1, 3)}", "[1,3)"),
    (r"\boxed{(3, -1)}", "(3,-1)"),
    (r"\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}", r"\begin{pmatrix}1\\2\end{pmatrix}"),
    (r"\boxed{4:30 \text{ p.m.}}", r"\text{4:30 p.m.}"),
    (r"\boxed{\text{Devon}}", r"\text{Devon}"),
    (r"\boxed{\text{(C)}}", r"\text{(C)}"),
    ("The final answer is $5$. I hope it is correct.", "5"),
    ("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", "0.75"),
    ("#### 72", "72"),
    ("Adding them, the answer is 1,643.", "1643"),
    ("Answer: $\\boxed{7}$\n\nSo \\boxed{7}.", "7"),
    ("\\boxed{\\frac{1}{2}} and so the final answer is 0.5", "1/2"),
    (r"\boxed{3+2i}", "3+2i"),
    (r"\boxed{1, 2}", r"\boxed{1}, \boxed{2}"),
]


@pytest.mark.parametrize(("response", "gold"), RIGHT)
def test_true_equivalents_are_accepted(grader, response, gold):
    g = grader.grade({"id": 1, "response": response, "reference": gold})
    assert g.passed is True, (response, gold, g)
    assert set(g.flags) & {"exact_match", "equivalent_numeric", "equivalent_symbolic"}


def test_one_answer_repeated_many_times_is_still_one_answer(grader):
    g = grader.grade({"id": 1, "response": r"\boxed{5}" * 20_000, "reference": "5"})
    assert g.passed is True


def test_several_boxes_make_a_set_only_when_the_gold_is_one(grader):
    ok, bad = grade_all(
        grader, [(r"\boxed{1} and \boxed{2}", "1, 2"), (r"\boxed{1} and \boxed{2}", "2")]
    )
    assert ok.passed is True
    assert bad.passed is False and Flag.HEDGED in bad.flags


def test_angles_only_when_configured():
    strict = load_grader("math")
    angles = load_grader("math", angles=True)
    row = {"id": 1, "response": r"\boxed{45^\circ}", "reference": r"\frac{\pi}{4}"}
    assert strict.grade(row).passed is False
    assert angles.grade(row).passed is True


def test_tolerances_only_when_configured_and_named():
    g = load_grader("math", rel_tol=1e-3)
    near = g.grade({"id": 1, "response": r"\boxed{10001}", "reference": "10000"})
    assert near.passed is True and near.flags == ["within_rel_tol"]
    pi = g.grade({"id": 2, "response": r"\boxed{3.1416}", "reference": r"\pi"})
    assert pi.passed is True and pi.flags == ["within_rel_tol"]
    tiny = load_grader("math", abs_tol=1e-3).grade(
        {"id": 3, "response": r"\boxed{0.5004}", "reference": "0.5"}
    )
    assert tiny.flags == ["within_abs_tol"]


def test_model_text_is_parsed_only_in_killable_workers():
    with pytest.raises(SpecError, match="killable worker processes only"):
        load_grader("math", execution="inline")
    assert load_grader("math").execution == "process"


def test_extraction_modes():
    boxed_only = load_grader("math", extract="boxed")
    assert boxed_only.grade({"id": 1, "response": "Final answer: 5", "reference": "5"}).flags == [
        Flag.NO_ANSWER
    ]
    lines_only = load_grader("math", extract="answer_line")
    assert (
        lines_only.grade({"id": 1, "response": "Answer: \\boxed{5}", "reference": "5"}).passed
        is True
    )


def test_bad_references_are_errors_not_fails(grader):
    g = grader.grade({"id": 1, "response": r"\boxed{5}", "reference": ["a", "list"]})
    assert g.error and "bad_reference" in g.flags and g.passed is None
    rows = [
        (r"\boxed{10}", "####"),
        (r"\boxed{10}", "He sold 5+5=<<5+5=10>>10.\n####"),
        (r"\boxed{2}", r"2^{x^{x}}"),  # refused by the parser
        (r"\boxed{2}", r"y = 2^{x^{x}}"),  # the same, as a relation
        (r"\boxed{AB=4, CD=2}", r"AB=4, CD=2^{x^{x}}"),  # the same, as a named value
    ]
    for g in grade_all(grader, rows):
        assert g.error and "bad_reference" in g.flags and g.passed is None, g


SHORT_GSM8K = "The total is 5+5=<<5+5=10>>10.\n#### 10"
LONG_GSM8K = (
    "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n"
    "Natalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72"
)


@pytest.mark.parametrize(
    ("response", "gold", "passed"),
    [
        (r"\boxed{10}", SHORT_GSM8K, True),  # once read as the equation 5+5 = 10
        ("#### 10", SHORT_GSM8K, True),
        (r"\boxed{5+5=10}", SHORT_GSM8K, True),
        (r"\boxed{11}", SHORT_GSM8K, False),
        (r"\boxed{10}", "#### 10", True),
        (r"\boxed{72}", LONG_GSM8K, True),
        ("48/2=<<48/2=24>>24\n#### 72", LONG_GSM8K, True),  # a calculator mark is not an answer
        (r"\boxed{24}", LONG_GSM8K, False),
        (r"\boxed{1000}", "So 2*500=<<2*500=1000>>1,000.\n#### 1,000", True),
        ("\\boxed{3}\n#### 5", "#### 5", False),  # two answers: hedged
    ],
)
def test_a_gsm8k_answer_is_read_as_its_final_hashes_line(grader, response, gold, passed):
    g = grader.grade({"id": 1, "response": response, "reference": gold})
    assert g.error is None and g.passed is passed, (g.flags, g.explanation)


def test_numbers_as_references(grader):
    rows = [
        {"id": 1, "response": r"\boxed{0.5}", "reference": 0.5},
        {"id": 2, "response": r"\boxed{12}", "reference": 12},
    ]
    assert [g.passed for g in grader.grade_batch(rows)] == [True, True]


@pytest.mark.timeout(120)
def test_denial_of_service_inputs_are_contained_and_the_batch_goes_on():
    grader = load_grader("math")
    hostile = [
        r"\boxed{9^{9^9}}",
        r"\boxed{(10^6)!}",
        r"\boxed{2^{10^{100}}}",
        "".join(f"\\boxed{{{i}}}" for i in range(20_000)),
        r"\boxed{" + "{" * 3000 + "5" + "}" * 3000 + "}",
        r"\boxed{" + "5" * 10_000_000 + "}",
        "Answer: " + " " * 200_000 + "x",
        r"\boxed{" + "(" * 500 + "1" + ")" * 500 + "}",
        r"\boxed{1" + "+1" * 900 + "}",
        r"\boxed{\frac{" * 400 + "1" + "}{2}" * 400 + "}",
    ]
    rows = [{"id": i, "response": r, "reference": "5"} for i, r in enumerate(hostile)]
    rows += [
        {"id": "ok", "response": r"\boxed{5}", "reference": "5"},
        {"id": "wrong", "response": r"\boxed{6}", "reference": "5"},
    ]
    grades = grader.grade_batch(rows)
    for row, g in zip(rows[:-2], grades[:-2], strict=True):
        assert g.passed is not True, row["id"]
        assert g.flags or g.explanation, (row["id"], g)  # contained, with a reason
        # within the deadline (2 s) and a second for the kill: what the engine enforces
        assert g.latency_ms <= grader.timeout_s * 1000 + 1000, (row["id"], g.latency_ms)
    assert grades[-2].passed is True
    assert grades[-1].passed is False


def test_code_in_an_answer_is_text_never_run(tmp_path):
    # the CVE class of field guide section 1: graders that eval model text (prime_math, sympy's
    # parse_expr) run this; ours parses LaTeX with a grammar and never evaluates it
    marker = tmp_path / "ran"
    payloads = [
        f"\\boxed{{__import__('os').system('touch {marker}')}}",
        f"Final answer: __import__('pathlib').Path('{marker}').touch() or 5",
        f"\\boxed{{eval(\"open('{marker}', 'w')\")}}",
        "\\boxed{(lambda: 5)()}",
    ]
    grades = load_grader("math").grade_batch(
        [{"id": i, "response": p, "reference": "5"} for i, p in enumerate(payloads)]
    )
    assert [g.passed for g in grades] == [False] * len(payloads)
    assert all(g.error is None and (g.flags or g.explanation) for g in grades)
    assert not marker.exists()
