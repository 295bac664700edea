"""The trusted side on hostile program data: every comparison, decode and message the harness
makes of what a program sent must end in a verdict, a fail with a flag, never an exception (an
error, which a trainer skips, so a program could choose one) and never a long stall."""

from __future__ import annotations

import math

import pytest

from truegrade.graders.code import CodeGrader
from truegrade.graders.code._conventions import kattis_compare, parse_kattis_flags
from truegrade.graders.code._harness import _short, values_match
from truegrade.graders.code._program import costly_fstrings
from truegrade.graders.code._stdio import outputs_match
from truegrade.sandbox import crowded_within, decode_value


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    # every failure's detail: the messages are part of what is tested
    return CodeGrader.from_options(
        {"call_timeout_s": 5, "program_timeout_s": 30, "feedback": "full"}
    )


def _cases_row(response: str, cases: list, **spec) -> dict:
    return {"response": response, "reference": {"entry_point": "f", "cases": cases, **spec}}


def _failed(grade, flag: str) -> None:
    assert grade.error is None, grade.error
    assert grade.passed is False, grade.explanation
    assert grade.flags[0] == flag, (grade.flags, grade.explanation)


def _forger(value: str) -> str:
    """A program that writes its own, correctly numbered, result record on the response pipe,
    holding ``value`` (JSON text built by the program), and then returns."""
    return (
        "import json, os, struct, sys\n"
        "def f():\n"
        "    frame = sys._getframe(1)\n"
        "    while 'answered' not in frame.f_locals:\n"
        "        frame = frame.f_back\n"
        f"    value = {value}\n"
        "    record = json.dumps({'status': 'ok', 'value': value,\n"
        "                         'call': frame.f_locals['answered']})\n"
        "    data = record.encode()\n"
        "    os.write(4, struct.pack('>I', len(data)) + data)\n"
        "    return 0\n"
    )


# -- records the codec cannot rebuild -------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "{'c': [10**400, 0]}",  # complex() of an int past any float: OverflowError
        "{'c': [0, -10**400]}",
        "{'t': [1, {'c': [10**400, 0]}]}",  # nested
        "{'b': 'caf\\u00e9'}",  # not ASCII base64
        "{'i': 'xyz'}",
    ],
)
def test_a_forged_record_the_codec_cannot_rebuild_is_a_fail(grader, value):
    grade = grader.grade(_cases_row(_forger(value), [{"args": [], "expected": 1}]))
    _failed(grade, "not_plain_data")


# -- comparisons of numbers past any float --------------------------------------------------------

HUGE = 10**400


@pytest.mark.parametrize(
    ("actual", "expected", "tolerances"),
    [
        (HUGE, 1.5, {"abs_tol": 1e-6}),  # math.isfinite(10**400) raised OverflowError
        (HUGE, 1.5, {"rel_tol": 1e-9}),
        (1.5, HUGE, {"abs_tol": 1e-6}),
        (-HUGE, -1e308, {"rel_tol": 1e-9}),
        (HUGE, math.inf, {"abs_tol": 1e-6}),
        (math.nan, HUGE, {"abs_tol": 1e-6}),
        ([1, HUGE], [1, 2.5], {"abs_tol": 1e-6}),
        ({"x": (HUGE,)}, {"x": [0.5]}, {"rel_tol": 1e-3}),
        (complex(1, 2), HUGE, {"abs_tol": 1e-6}),
    ],
    ids=lambda value: _short(value, 30),
)
def test_numbers_past_any_float_are_compared_without_raising(actual, expected, tolerances):
    assert values_match(actual, expected, **tolerances) is False


def test_an_int_past_any_float_meets_an_int_or_a_float_within_an_exact_tolerance():
    assert values_match(HUGE, HUGE, abs_tol=1e-6)
    assert values_match(HUGE + 1, HUGE, abs_tol=1e-6) is False  # two ints compare exactly
    assert values_match(2**1100, 2.0**1000, rel_tol=1.0)  # within: |a - b| <= max(|a|, |b|)


@pytest.mark.parametrize("answer", ["10 ** 400", "-10 ** 400", "[10 ** 400, 1.5]"])
def test_a_huge_int_where_a_float_is_expected_with_tolerances_is_a_wrong_answer(grader, answer):
    """Every HumanEval+ / MBPP+ preset row sets abs_tol or rel_tol."""
    program = f"def f():\n    return {answer}\n"
    expected = [0.5, 1.5] if answer.startswith("[") else 1.5
    row = _cases_row(program, [{"args": [], "expected": expected}], abs_tol=1e-6, rel_tol=1e-6)
    _failed(grader.grade(row), "wrong_answer")


# -- what the harness writes of an answer ---------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        [[10**5000]],  # repr raises ValueError: past Python's limit on decimal digits
        {10**5000: (10**4000,)},
        [10**4200] * 200,  # just under the limit: each written out in quadratic time
        ["x" * 100_000] * 10,
        [[[[]]]] * 50_000,
        {frozenset({1, 2}): {3}, (): set(), (1,): frozenset()},
    ],
)
def test_an_answer_is_written_out_in_bounded_length_whatever_it_holds(value):
    text = _short(value)
    assert len(text) <= 120
    if len(repr_or_none(value)) <= 120:
        assert text == repr(value)


def repr_or_none(value) -> str:
    try:
        return repr(value)
    except ValueError:
        return "x" * 1000


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("[10 ** 5000]", "an int of"),  # str() of the AssertionError raised ValueError
        ("{1: 10 ** 5000}", "an int of"),
        ("'y' * 500_000", "yyy"),
    ],
)
def test_a_check_whose_assertion_carries_the_answer_fails_with_a_short_message(message, said):
    grader = CodeGrader.from_options({"call_timeout_s": 5, "feedback": "full"})
    check = "def check(candidate):\n    got = candidate()\n    assert got == 1, got\n"
    row = {
        "response": f"def f():\n    return {message}\n",
        "reference": {"entry_point": "f", "check": check},
    }
    grade = grader.grade(row)
    _failed(grade, "wrong_answer")
    assert said in grade.explanation and len(grade.explanation) < 1000


def test_a_check_that_raises_with_the_answer_in_its_message_fails_with_a_short_message(grader):
    check = "def check(candidate):\n    raise KeyError(candidate())\n"
    row = {
        "response": "def f():\n    return [10 ** 5000]\n",
        "reference": {"entry_point": "f", "check": check},
    }
    _failed(grader.grade(row), "wrong_answer")


# -- stdout compared with tolerances --------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "answer", "accepted"),
    [
        ("1e999999", "1e999998", False),  # both read as inf: not finite, no match
        ("1e999999", "1.5", False),
        ("1" * 400, "1" * 399 + "2", False),
        ("1" * 400, "1" * 400, True),
        ("nan", "1.5", False),
        ("-inf", "inf", False),
        ("1e-999999", "0", True),  # within 1e-6
        ("0x1p99999999999999999999", "1.5", False),
        ("1" * 100_000 + "x", "1.5", False),  # backtracked in time quadratic in its length
        ("0x" + "f" * 100_000 + "g", "1.5", False),
        ("1." + "1" * 100_000 + "e", "1.5", False),
    ],
)
def test_huge_numeric_tokens_are_judged_in_linear_time_without_raising(output, answer, accepted):
    kattis = parse_kattis_flags("float_tolerance 1e-6")
    assert (kattis_compare(output, answer, kattis) == "") is accepted
    for compare in ("tokens", "lines"):
        assert outputs_match(output, answer, compare, abs_tol=1e-6) is accepted


def test_a_huge_token_under_the_kattis_validator_is_a_wrong_answer(grader):
    program = "print('1' * 300_000 + 'x')\n"
    row = {
        "response": program,
        "reference": {
            "stdio": [{"stdin": "", "stdout": "1.5\n"}],
            "compare": "kattis",
            "validator_flags": "float_tolerance 1e-6",
        },
    }
    _failed(grader.grade(row), "wrong_answer")


# -- answers crowded with distinct values of one hash ---------------------------------------------

_PRIME = 2**61 - 1  # ints hash to their value modulo this
_CROWD = "[5 + k * (2**61 - 1) for k in range(20_000)]"


@pytest.mark.parametrize(
    ("answer", "check"),
    [
        (_CROWD, "assert set(got) == {5}"),  # MBPP's style: the check builds the set
        (f"tuple({_CROWD})", "assert set(got) == {5}"),
        (f"[[x] for x in {_CROWD}]", "assert set(map(tuple, got)) == {(5,)}"),
        (f"[(x, 'a') for x in {_CROWD}]", "assert set(got) == {(5, 'a')}"),
        (f"[{_CROWD}[i:i + 50] for i in range(0, 20_000, 50)]", "assert set(sum(got, [])) == {5}"),
        (f"dict(enumerate({_CROWD}))", "assert set(got.values()) == {5}"),
        (f"{{'rows': {_CROWD}}}", "assert set(got['rows']) == {5}"),
    ],
    ids=["list", "tuple", "rows", "pairs", "split across lists", "dict values", "nested"],
)
def test_an_answer_crowded_with_one_hash_is_not_plain_data(grader, answer, check):
    """A check that builds a set of such an answer cost the harness 43 s for 37,000 items."""
    row = {
        "response": f"def f():\n    return {answer}\n",
        "reference": {
            "entry_point": "f",
            "check": f"def check(candidate):\n    got = candidate()\n    {check}\n",
        },
    }
    grade = grader.grade(row)
    _failed(grade, "not_plain_data")
    assert "share one hash" in grade.explanation


@pytest.mark.parametrize(
    "answer",
    [
        "list(range(50_000))",
        "[(i, j) for i in range(100) for j in range(100)]",
        "[[i * j for j in range(100)] for i in range(100)]",
        "{i: str(i) for i in range(10_000)}",
        "[-1, -2] * 1000 + [(-1, k) for k in range(100)] + [(-2, k) for k in range(100)]",
        "[7] * 50_000 + [7.0, True, 1, 1.0]",  # repeats are no crowd
        "[i / 7 for i in range(20_000)] + [2.0**k for k in range(-1000, 1000, 61)]",
        f"[5 + k * {_PRIME} for k in range(64)]",  # at the limit: still plain data
    ],
)
def test_honest_answers_are_no_crowd(grader, answer):
    row = {
        "response": f"def f():\n    return {answer}\n",
        "reference": {
            "entry_point": "f",
            "check": "def check(candidate):\n    assert candidate() == " + answer + "\n",
        },
    }
    grade = grader.grade(row)
    assert grade.passed, grade.explanation


def test_a_typed_spec_may_state_a_crowded_list_the_answer_may_not():
    """The codec decodes typed specs too: a crowd there is the dataset's, trusted, and left to
    the comparison, which refuses to build its set (``compare: set``)."""
    crowd = [5 + k * _PRIME for k in range(100)]
    assert decode_value({"t": crowd}) == tuple(crowd)
    assert crowded_within(tuple(crowd)) and not crowded_within(crowd[:64])


# -- responses too long, or too costly, to parse --------------------------------------------------

ADD = "def f(x):\n    return x + 1\n"
SPECS = {
    "check": {"entry_point": "f", "check": "def check(candidate):\n    assert candidate(1) == 2\n"},
    "cases": {
        "entry_point": "f",
        "cases": [{"args": [1], "expected": 2}, {"args": [2], "expected": 3}],
    },
    "stdio": {"stdio": [{"stdin": "1\n", "stdout": "2\n"}]},
    "stdio in C++": {"language": "cpp", "stdio": [{"stdin": "1\n", "stdout": "2\n"}]},
}


@pytest.mark.parametrize("form", list(SPECS))
def test_a_response_past_the_cap_fails_every_test_unread(grader, form):
    response = "```python\n" + ADD + "```\n" + "x" * (256 << 10)
    grade = grader.grade({"response": response, "reference": SPECS[form]})
    _failed(grade, "response_too_long")
    assert set(grade.subscores.values()) == {0.0} and grade.flags == ["response_too_long"]
    assert "response_bytes" in grade.explanation


def test_the_cap_counts_utf8_bytes_and_is_an_option():
    grader = CodeGrader.from_options({"response_bytes": 2048})
    row = {"reference": SPECS["cases"]}
    honest = ADD + "# " + "x" * 1900 + "\n"
    assert grader.grade({**row, "response": honest}).passed
    accented = ADD + "# " + "\u00e9" * 1100 + "\n"  # 1,131 characters, 2,231 bytes
    _failed(grader.grade({**row, "response": accented}), "response_too_long")
    with pytest.raises(Exception, match="response_bytes"):
        CodeGrader.from_options({"response_bytes": 10})


@pytest.mark.parametrize(
    "body",
    [
        'f"' + "{x}" * 60_000 + '"',  # 180 KB of fields in one literal: 6.6 s to grade
        'f"""' + "{x}\n" * 45_000 + '"""',
        'f"{x:' + "{x}" * 60_000 + '}"',  # fields in a format spec
    ],
    ids=["one literal", "triple-quoted", "format spec"],
)
def test_a_program_whose_f_strings_cost_the_parser_quadratic_time_fails_unparsed(grader, body):
    for form in ("cases", "stdio"):
        response = f"```python\ndef f(x):\n    return {body}\n```\n"
        grade = grader.grade({"response": response, "reference": SPECS[form]})
        _failed(grade, "response_too_long")
        assert "f-strings" in grade.explanation


def test_honest_f_strings_are_parsed_and_run(grader):
    lines = "".join(f"    s += f'{{x}}-{{x + {i}}}: {{x * {i}!r:>8}}'\n" for i in range(3000))
    response = f"def f(x):\n    s = ''\n{lines}    return x + 1 if s else 0\n"
    assert len(response) > 100_000
    assert costly_fstrings(response) == ""
    assert grader.grade({"response": response, "reference": SPECS["cases"]}).passed


@pytest.mark.parametrize(
    "code",
    [
        'x = f"' + "{x}" * 20_000 + '"\ny = (\n',  # a token error after it: still measured
        'x = rf"' + "{x}" * 20_000 + '"\n',
        'x = F"' + "{x}" * 20_000 + '"\n',
    ],
)
def test_costly_f_strings_are_found_however_the_program_ends(code):
    assert "f-strings hold 20,000 fields" in costly_fstrings(code)
    assert costly_fstrings(code.replace("f", "").replace("F", "")) == ""  # plain strings: cheap


def test_keys_crowded_with_one_hash_match_nothing_and_build_no_set():
    crowd = {5 + k * _PRIME: k for k in range(200)}
    assert values_match(crowd, dict(crowd)) is False
    assert values_match(set(crowd), set(crowd)) is False
    assert values_match({1: "a", 2: "b"}, {2: "b", 1: "a"})
