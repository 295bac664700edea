"""Call cases whose expected values come from a reference program (``expected_from``), as
HumanEval+ and MBPP+ ship their tests: the reference runs in the sandbox, its answers are kept per
worker, a reference that cannot answer is the row's error, never the response's fail; and the
spec's own comparison (``compare``) and tolerances."""

from __future__ import annotations

import pytest

from truegrade import load_grader
from truegrade.graders.code import _harness
from truegrade.graders.code._harness import CodeKernel
from truegrade.sandbox import Sandbox, SandboxConfig

DOUBLES = "def f(n):\n    return [2 * i for i in range(n)]\n"
SPEC = {"entry_point": "f", "expected_from": DOUBLES, "cases": [{"args": [3]}, {"args": [0]}]}


@pytest.fixture(scope="module")
def grader():
    return load_grader("code", call_timeout_s=2, program_timeout_s=15, feedback="full")


def grade(grader, response, tests):
    return grader.grade({"id": 1, "response": response, "reference": tests})


def test_the_reference_programs_answers_are_the_expected_values(grader):
    result = grade(grader, "def f(n):\n    return [i + i for i in range(n)]\n", SPEC)
    assert (result.passed, result.error, result.subscores) == (
        True,
        None,
        {"case_0": 1.0, "case_1": 1.0},
    )
    wrong = grade(grader, "def f(n):\n    return list(range(n))\n", SPEC)
    assert wrong.subscores == {"case_0": 0.0, "case_1": 1.0}
    assert "case_0: expected [0, 2, 4], got [0, 1, 2]" in wrong.explanation


def test_computed_expected_values_keep_their_types_a_tuple_is_not_a_list(grader):
    as_tuple = grade(grader, "def f(n):\n    return tuple(2 * i for i in range(n))\n", SPEC)
    assert as_tuple.flags == ["wrong_answer"]
    pair = {**SPEC, "expected_from": "def f(n):\n    return (n, n)\n"}
    assert not grade(grader, "def f(n):\n    return [n, n]\n", pair).passed
    assert grade(grader, "def f(n):\n    return (n, n)\n", pair).passed


@pytest.mark.parametrize(
    ("reference", "reason"),
    [
        (
            "def f(n):\n    raise ValueError('no')\n",
            "gives no answer for case 0: raised ValueError",
        ),
        ("def f(n:\n", "does not compile"),
        ("def f(n):\n    while True:\n        pass\n", "gives no answer for case 0"),
        ("def f(n):\n    return object()\n", "gives no answer for case 0"),
        ("def g(n):\n    return n\n", "gives no answer for case 0"),
    ],
    ids=["raises", "syntax", "hangs", "not_plain", "no_entry_point"],
)
def test_a_reference_that_cannot_answer_makes_the_row_an_error(grader, reference, reason):
    result = grade(grader, DOUBLES, {**SPEC, "expected_from": reference})
    assert result.passed is None
    assert result.flags == ["bad_reference"]
    assert "the reference program" in result.error and reason in result.error


def test_answers_compared_as_sets_ignore_order_and_repeats_not_types(grader):
    tests = {**SPEC, "compare": "set"}
    for answer in ("list(reversed(x))", "set(x)", "tuple(x + x)"):
        code = f"def f(n):\n    x = [2 * i for i in range(n)]\n    return {answer}\n"
        assert grade(grader, code, tests).passed, answer
    missing = grade(grader, "def f(n):\n    return [0, 2]\n", tests)
    assert "expected the items of [0, 2, 4] in any order" in missing.explanation
    booleans = {**tests, "expected_from": "def f(n):\n    return [1, 0]\n"}
    assert not grade(grader, "def f(n):\n    return [True, False]\n", booleans).passed
    number = {**tests, "expected_from": "def f(n):\n    return n\n"}
    assert "not a collection" in grade(grader, DOUBLES, number).error


MATCHER = "import re\n\n\ndef m(text):\n    return re.match('a+', text)\n"
NOT_NONE = {
    "entry_point": "m",
    "expected_from": MATCHER,
    "compare": "not_none",
    "cases": [{"args": ["aab"]}, {"args": ["b"]}],
}


@pytest.mark.parametrize(
    ("program", "passes"),
    [
        (MATCHER, True),  # a re.Match is not plain data: only whether there is one is compared
        ("def m(text):\n    return text.startswith('a')\n", True),  # a bool is read as itself
        ("def m(text):\n    return text[:1] == 'a' or None\n", True),
        ("def m(text):\n    return text\n", False),  # '' for no match is not None
        ("def m(text):\n    return None\n", False),
        ("def m(text):\n    return True\n", False),
    ],
)
def test_not_none_compares_only_whether_there_is_an_answer(grader, program, passes):
    assert grade(grader, program, NOT_NONE).passed is passes


def test_not_none_leaves_a_functions_calls_to_itself_alone(grader):
    recursive = (
        "def m(text):\n    if len(text) > 1:\n        return m(text[1:]).upper()\n"
        "    return text or None\n"
    )
    # given a bool for its inner call, ``.upper()`` would raise
    tests = {**NOT_NONE, "expected_from": recursive, "cases": [{"args": ["aab"]}]}
    assert grade(grader, recursive, tests).passed
    assert grade(grader, "def n(text):\n    return 1\n", tests).flags == ["missing_entry_point"]


def test_the_rows_tolerances_override_the_graders(grader):
    third = {"entry_point": "h", "expected_from": "def h(x):\n    return x / 3\n"}
    tests = {**third, "cases": [{"args": [1]}], "abs_tol": 1e-6}
    assert grade(grader, "def h(x):\n    return 0.3333334\n", tests).passed
    assert not grade(grader, "def h(x):\n    return 0.33334\n", tests).passed
    exact = {**third, "cases": [{"args": [1]}]}
    assert not grade(grader, "def h(x):\n    return 0.3333334\n", exact).passed
    relative = {**third, "cases": [{"args": [3e9]}], "rel_tol": 1e-7}
    assert grade(grader, "def h(x):\n    return 1e9 + 50\n", relative).passed


def test_the_answers_of_other_references_are_accepted_too(grader):
    tests = {
        "entry_point": "h",
        "expected_from": ["def h(x):\n    return x\n", "def h(x):\n    return -x\n"],
        "cases": [{"args": [1]}, {"args": [2]}],
    }
    assert grade(grader, "def h(x):\n    return -x\n", tests).passed
    assert grade(grader, "def h(x):\n    return x if x > 1 else -x\n", tests).passed
    assert not grade(grader, "def h(x):\n    return 0\n", tests).passed
    broken = {**tests, "expected_from": ["def h(x):\n    return x\n", "def h(x):\n    1 / 0\n"]}
    assert "reference program 2 gives no answer" in grade(grader, DOUBLES, broken).error


def test_a_workers_reference_answers_are_computed_once(monkeypatch):
    kernel = CodeKernel(SandboxConfig(), call_timeout_s=2, program_timeout_s=10)
    loaded: list[str] = []
    load = Sandbox.load

    def counting(self, source, **kwargs):
        loaded.append(source)
        return load(self, source, **kwargs)

    monkeypatch.setattr(Sandbox, "load", counting)
    monkeypatch.setattr(_harness, "_ANSWERS", type(_harness._ANSWERS)())
    payload = {"response": DOUBLES, "prompt": None, "tests": SPEC}
    for _ in range(3):
        assert kernel(payload)["passed"] is True
    assert loaded.count(DOUBLES) == 4  # the reference once, then the response each time
    other = {**SPEC, "cases": [{"args": [4]}]}  # other inputs: computed anew
    assert kernel({**payload, "tests": other})["passed"] is True
    assert loaded.count(DOUBLES) == 6
