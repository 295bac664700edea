"""Answers that are not plain data reach a check as their truth alone; typed call cases keep the
tuples JSON would turn into lists."""

from __future__ import annotations

import textwrap

import pytest

from truegrade import load_grader
from truegrade.graders.code._spec import SpecProblem, parse_spec
from truegrade.sandbox import Opaque


@pytest.fixture(scope="module")
def grader():
    return load_grader("code", call_timeout_s=2, program_timeout_s=15)


def grade(grader, response, tests):
    return grader.grade({"id": 1, "response": response, "reference": tests})


MATCH = "import re\ndef text_match(text):\n    return re.search('ab+', text)\n"


def check(body: str) -> dict[str, str]:
    source = "def check(candidate):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return {"entry_point": "text_match", "check": source}


# -- truthiness-only answers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "assert candidate('xabbb')\nassert not candidate('xyz')\n",
        "assert candidate('ab') is not None\nassert bool(candidate('b')) is False\n",
        "if not candidate('ab'):\n    raise AssertionError\n",
    ],
)
def test_a_check_that_tests_only_truth_passes_a_re_match(grader, body):
    result = grade(grader, MATCH, check(body))
    assert result.passed, result.explanation


@pytest.mark.parametrize(
    "body",
    [
        "assert candidate('ab') == 'Found a match!'\n",  # equality is identity
        "assert candidate('ab') == True\n",
        "assert candidate('ab') is None\n",
        "assert len(candidate('ab')) == 2\n",  # TypeError, as on a bare object
        "assert candidate('ab').group(0) == 'ab'\n",  # nothing of the Match crossed
        "assert candidate('ab') < 1\n",
        "assert candidate(candidate('ab'))\n",  # passed back: the program's doing, not an error
    ],
)
def test_an_opaque_answer_offers_nothing_but_its_truth(grader, body):
    result = grade(grader, MATCH, check(body))
    assert (result.passed, result.error) == (False, None), result.explanation
    assert result.flags == ["not_plain_data"], result.explanation


def test_the_truth_is_the_programs_own_bool_under_its_deadline(grader):
    raising = "class M:\n    def __bool__(self):\n        raise ValueError('no')\n"
    endless = "class M:\n    def __bool__(self):\n        while True:\n            pass\n"
    body = "assert candidate('a')\n"
    for source, flag in ((raising, "exception"), (endless, "timeout")):
        result = grade(grader, source + "def text_match(t):\n    return M()\n", check(body))
        assert (result.passed, result.flags) == (False, [flag]), result.explanation


def test_a_truth_that_changes_between_calls_fails(grader):
    counting = (
        "calls = [0]\nclass M:\n    def __bool__(self):\n        calls[0] += 1\n"
        "        return calls[0] == 1\ndef text_match(t):\n    return M()\n"
    )
    result = grade(grader, counting, check("assert candidate('a')\nassert not candidate('b')\n"))
    assert result.passed is False, result.explanation
    assert result.flags[0] in ("order_dependent", "not_plain_data"), result.explanation


def test_call_cases_still_fail_an_answer_that_is_not_plain_data(grader):
    tests = {"entry_point": "text_match", "cases": [{"args": ["ab"], "expected": True}]}
    result = grade(grader, MATCH, tests)
    assert (result.passed, result.flags) == (False, ["not_plain_data"])


def test_an_opaque_value_equals_only_itself():
    value = Opaque(True, "re.Match")
    assert value and not Opaque(False, "re.Match")
    assert value == value and value != Opaque(True, "re.Match") and value != True  # noqa: E712
    for operation in (len, iter, lambda v: v + 1, lambda v: v < 1, lambda v: -v):
        with pytest.raises(TypeError):
            operation(value)
    assert "re.Match" in repr(value)


# -- typed call cases -----------------------------------------------------------------------------

IS_TUPLE = "def first(t):\n    assert isinstance(t, tuple)\n    return t[:1]\n"


def test_a_typed_case_sends_a_tuple_where_json_would_send_a_list(grader):
    plain = {"entry_point": "first", "cases": [{"args": [[3, 4]], "expected": [3]}]}
    typed = {
        "entry_point": "first",
        "typed": True,
        "cases": [{"args": [{"t": [3, 4]}], "expected": {"t": [3]}}],
    }
    assert grade(grader, IS_TUPLE, plain).flags == ["exception"]
    result = grade(grader, IS_TUPLE, typed)
    assert result.passed, result.explanation


def test_a_typed_expected_value_is_compared_with_its_exact_type(grader):
    tests = {
        "entry_point": "first",
        "typed": True,
        "cases": [{"args": [{"t": [3, 4]}], "expected": [3]}],  # a list: the tuple answer is not
    }
    assert grade(grader, IS_TUPLE, tests).flags == ["wrong_answer"]


def test_typed_values_of_every_tag_are_decoded():
    spec = parse_spec(
        {
            "entry_point": "f",
            "typed": True,
            "cases": [
                {
                    "args": [{"s": [1]}, {"f": [2]}, {"b": "aGk="}, {"c": [1, 2]}],
                    "kwargs": {"d": {"d": [[{"t": [1, 2]}, "x"]]}},
                    "expected": {"t": [None, True]},
                    "also": [[1]],
                }
            ],
        }
    )
    case = spec.cases[0]
    assert case.args == [{1}, frozenset({2}), b"hi", 1 + 2j]
    assert case.kwargs == {"d": {(1, 2): "x"}}
    assert case.expected == (None, True) and case.also == ([1],) and spec.typed


@pytest.mark.parametrize(
    ("typed", "case", "message"),
    [
        (True, {"args": [{"x": 1}], "expected": 1}, "case 0: a typed value"),
        (True, {"args": [], "expected": {"t": 1}}, "case 0: a typed value"),
        ("yes", {"args": [], "expected": 1}, "'typed' must be true or false"),
    ],
)
def test_a_typed_value_that_is_not_encoded_is_a_bad_spec(typed, case, message):
    with pytest.raises(SpecProblem, match=message):
        parse_spec({"entry_point": "f", "typed": typed, "cases": [case]})


# -- keys and set items, as strictly as values ----------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected", "passes"),
    [
        ("{1: 'a'}", {"d": [[True, "a"]]}, False),  # keys compared with ==: True is 1
        ("{True: 'a'}", {"d": [[1, "a"]]}, False),
        ("{True: 'a'}", {"d": [[True, "a"]]}, True),
        ("{1.0: 'a'}", {"d": [[1, "a"]]}, True),  # 1 and 1.0, as for values
        ("{(1, True): 'a'}", {"d": [[{"t": [1, 1]}, "a"]]}, False),
        ("{'k': {1: 'a'}}", {"d": [["k", {"d": [[True, "a"]]}]]}, False),
        ("{1, 2}", {"s": [True, 2]}, False),  # set items too
        ("{True, 2}", {"s": [True, 2]}, True),
        ("{True, 1}", {"s": [True, 1]}, True),
        ("frozenset({(1, 2)})", {"f": [{"t": [True, 2]}]}, False),
        ("{1.0, 2}", {"s": [1, 2]}, True),
    ],
)
def test_keys_and_set_items_are_compared_as_strictly_as_values(grader, answer, expected, passes):
    tests = {"entry_point": "f", "typed": True, "cases": [{"args": [], "expected": expected}]}
    result = grade(grader, f"def f():\n    return {answer}\n", tests)
    assert result.passed is passes, result.explanation
    assert passes or result.flags == ["wrong_answer"]


def test_a_reference_answer_s_bool_keys_are_not_met_by_int_keys(grader):
    reference = "def f(xs):\n    return {x > 0: x for x in xs}\n"
    tests = {"entry_point": "f", "expected_from": reference, "cases": [{"args": [[1, -1]]}]}
    wrong = grade(grader, "def f(xs):\n    return {int(x > 0): x for x in xs}\n", tests)
    assert (wrong.passed, wrong.flags) == (False, ["wrong_answer"]), wrong.explanation
    assert grade(grader, reference, tests).passed
