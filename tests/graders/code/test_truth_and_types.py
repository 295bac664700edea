"""Answers that are not plain data reach a check as their truth alone."""

from __future__ import annotations

import textwrap

import pytest

from truegrade import load_grader
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


def test_a_truth_that_changes_between_calls_fails_the_replay(grader):
    counting = (
        "calls = [0]\nclass M:\n    def __bool__(self):\n        calls[0] += 1\n"
        "        return calls[0] == 1\ndef text_match(t):\n    return M()\n"
    )
    result = grade(grader, counting, check("assert candidate('a')\nassert not candidate('b')\n"))
    assert (result.passed, result.flags) == (False, ["order_dependent"]), result.explanation


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
