"""Calls sent ahead: the literal calls a check starts with (and every call case) go to the
session as one request. Verdicts must be exactly those of calls made one by one, whatever the
check does next and whatever the program does to its state."""

from __future__ import annotations

import pytest

from truegrade.graders.code import CodeGrader
from truegrade.graders.code._calls import UNKNOWN, Budget, Calls
from truegrade.graders.code._harness import _ahead, _calls_ahead, _run_cases
from truegrade.graders.code._spec import parse_spec
from truegrade.sandbox import Sandbox


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options(
        {"call_timeout_s": 3, "program_timeout_s": 20, "feedback": "full"}
    )


def _row(response: str, check: str, entry: str = "f") -> dict:
    return {"response": response, "reference": {"entry_point": entry, "check": check}}


def test_only_the_leading_literal_calls_are_sent_ahead():
    check = """
def check(candidate):
    import math
    assert candidate(1) == 2
    assert candidate(x=2, y=(1, 2)) == 3 and f(-1.5) != 0
    assert candidate(True) == candidate(1), "the message is not evaluated ahead"
    for i in range(3):
        assert candidate(i) == i + 1
    assert candidate(9) == 10
"""
    ahead = _calls_ahead(check, "f")
    assert ahead == (([1], {}), ([], {"x": 2, "y": (1, 2)}), ([-1.5], {}), ([True], {}), ([1], {}))
    assert _calls_ahead("def check(candidate):\n    g = candidate\n    assert g(1)\n", "f") == ()
    nested = "def check(candidate):\n    assert candidate(candidate(1)) == 3\n"
    assert _calls_ahead(nested, "f") == ()
    assert _calls_ahead(
        "def check(c):\n    assert c([1, 2]) == 3\n    assert c([]) == 0\n", "f"
    ) == (
        ([[1, 2]], {}),
        ([[]], {}),
    )


def test_arithmetic_a_check_writes_as_literals_is_sent_ahead_with_the_answers_it_asserts():
    check = """
def check(candidate):
    assert candidate(3 * 5 * 7) == True
    assert candidate([1, 0**0], 'ab' + 'c') == None
    assert 2 == candidate((1, 7 // 2, 7 % 4, 1 / 4), x=-3 - 1)
    assert candidate(1 + 2j) != 0
    assert candidate(2**65) == 1
"""
    calls, wanted = _ahead(check, "f")
    assert calls == (
        ([105], {}),
        ([[1, 1], "abc"], {}),
        ([(1, 3, 3, 0.25)], {"x": -4}),
        ([1 + 2j], {}),
    )
    assert wanted == (True, None, 2, UNKNOWN)  # ``!=`` says no answer
    # what Python would not fold the same way, or might make large, stops the guess there
    for argument in ("True * 3", "2 ** 65", "10 ** 100 * 10 ** 100", "'a' * 3", "1 // 0", "x + 1"):
        assert _calls_ahead(f"def check(c):\n    assert c({argument}) == 1\n", "f") == ()


def test_a_positional_program_fails_whatever_the_answers_the_check_asserts():
    """The secret order moves an answer the check asserts: a program that answers by its place
    in the session, even knowing every answer, must guess the order, and is not spared the
    replay when the draw does not move what it gave."""
    grader = CodeGrader.from_options({"feedback": "full"})
    check = (
        "def check(candidate):\n    assert candidate(2 * 1) == False\n"
        "    assert candidate(3 * 1) == True\n    assert candidate(4 * 1) == False\n"
        "    assert candidate(5 * 1) == True\n"
    )
    positional = "_n = [0]\ndef f(x):\n    _n[0] += 1\n    return _n[0] % 2 == 0\n"
    grades = grader.grade_batch([_row(positional, check) for _ in range(12)])
    assert not any(grade.passed for grade in grades), [g.explanation for g in grades]
    assert grader.grade(_row("def f(x):\n    return x % 2 == 1\n", check)).passed


LOOP_CHECK = """
def check(candidate):
    assert candidate(1) == 2
    assert candidate(2) == 3
    for i in range(5):
        assert candidate(i) == i + 1
    assert candidate(10) == 11
"""


def test_a_check_that_goes_on_with_other_calls_gets_the_same_verdicts(grader):
    right = grader.grade(_row("def f(x):\n    return x + 1\n", LOOP_CHECK))
    assert right.passed, right.explanation
    wrong_late = grader.grade(_row("def f(x):\n    return x + 1 if x < 4 else 0\n", LOOP_CHECK))
    assert wrong_late.passed is False and "assertion failed" in wrong_late.explanation


def test_state_kept_between_calls_is_still_caught(grader):
    counter = "_n = [0]\ndef f(x):\n    _n[0] += 1\n    return _n[0] + 1\n"
    check = "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 3\n"
    grade = grader.grade(_row(counter, check))
    assert grade.passed is False and grade.flags[0] in ("order_dependent", "wrong_answer")
    # a call sent ahead that the check skips (short-circuit) is still made, in the secret
    # order: a program whose answers depend on it is judged on the answers it gave
    seen = "_seen = set()\ndef f(x):\n    _seen.add(x)\n    return x + 1 if 5 in _seen else 0\n"
    skip = (
        "def check(candidate):\n    assert candidate(1) == 2 or candidate(5) == 6\n"
        "    assert candidate(2) == 3\n"
    )
    grades = grader.grade_batch([_row(seen, skip) for _ in range(20)])
    assert all(grade.error is None for grade in grades)
    assert not all(grade.passed for grade in grades)  # 5 after 2 in some order: a wrong answer
    assert grader.grade(_row("def f(x):\n    return x + 1\n", skip)).passed


def test_a_failed_check_does_not_wait_for_a_call_sent_ahead_that_hangs(grader):
    # the second call is wrong; the third, sent ahead, would spin forever: the check stops at
    # the second, the session is ended, and the verdict is the wrong answer, not a timeout
    program = "def f(x):\n    while x == 3:\n        pass\n    return 0 if x == 2 else x + 1\n"
    check = (
        "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 3\n"
        "    assert candidate(3) == 4\n"
    )
    grade = grader.grade(_row(program, check))
    assert grade.passed is False
    assert "timeout" not in grade.flags and "assertion failed" in grade.explanation


def test_call_cases_after_a_crash_or_a_timeout_still_run_each_in_turn(grader):
    program = (
        "import os\ndef f(x):\n    if x == 2:\n        os._exit(3)\n    while x == 3:\n"
        "        pass\n    return x * 10\n"
    )
    cases = [{"args": [x], "expected": x * 10} for x in (1, 2, 3, 4, 5)]
    grade = grader.grade({"response": program, "reference": {"entry_point": "f", "cases": cases}})
    assert [grade.subscores[f"case_{i}"] for i in range(5)] == [1.0, 0.0, 0.0, 1.0, 1.0]
    assert {"early_exit", "timeout"} <= set(grade.flags)


def test_arguments_that_look_alike_are_not_taken_for_each_other(grader):
    # True and 1, 1.0 and 1 are different calls: a program that tells them apart is graded on
    # the answers to the calls the check really made
    program = "def f(x):\n    return type(x).__name__\n"
    check = (
        "def check(candidate):\n    assert candidate(1) == 'int'\n"
        "    assert candidate(True) == 'bool'\n    assert candidate(1.0) == 'float'\n"
    )
    assert grader.grade(_row(program, check)).passed


def _cases_row(response: str, count: int) -> dict:
    cases = [{"args": [n], "expected": n + 1} for n in range(count)]
    return {"response": response, "reference": {"entry_point": "f", "cases": cases}}


def test_score_all_stops_at_the_first_failure_and_a_hanging_program_costs_one_limit():
    """As EvalPlus stops (its default) and judges do: the cases after the first that fails are
    not run, judged in the order the session answers them, so a program that hangs on every
    input runs out of time once, not once per case."""
    hangs = "def f(n):\n    while True:\n        pass\n"
    spec = parse_spec(_cases_row(hangs, 8)["reference"])
    with Sandbox() as box:
        for stop, made in ((True, 1), (False, 8)):
            program = box.load(hangs, entry_point="f")
            calls = Calls(program, Budget(30.0), 0.3, fresh_process=False)
            outcomes = _run_cases(spec, calls, 0.0, 0.0, stop_at_failure=stop)
            program.close()
            assert len(outcomes) == 8 and not any(o.passed for o in outcomes)
            assert calls.count == made  # the calls the harness made: one time-out, or eight
            not_run = [o for o in outcomes if o.reason.startswith("not run")]
            assert len(not_run) == (7 if stop else 0)
    grade = CodeGrader.from_options({"call_timeout_s": 0.3, "score": "all"}).grade(
        _cases_row(hangs, 8)
    )
    assert grade.passed is False and grade.score == 0.0 and "timeout" in grade.explanation


def test_score_all_still_passes_a_right_program_and_fails_one_wrong_case():
    grader = CodeGrader.from_options({"score": "all"})
    assert grader.grade(_cases_row("def f(n):\n    return n + 1\n", 12)).passed
    last_wrong = "def f(n):\n    return n + 1 if n != 11 else 0\n"
    grade = grader.grade(_cases_row(last_wrong, 12))
    assert grade.passed is False and grade.score == 0.0
    assert "case_11: wrong_answer" in grade.explanation  # the failure, not a case left unrun
    fraction = CodeGrader.from_options({}).grade(_cases_row(last_wrong, 12))
    assert fraction.score == pytest.approx(11 / 12)  # the default runs every case
