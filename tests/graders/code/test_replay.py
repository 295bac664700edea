"""The order of the calls is a secret: a program that answers by its place in the session (a
positional program: the n-th call gets the n-th expected value of the dataset, never computed)
fails in every form of test, every time, and an honest program passes, its answers judged as the
test judges them.

Calls known ahead (every call case; the literal calls a check starts with) are sent in one
request in a secret order that moves an answer; calls a check makes as it runs are replayed in a
fresh session in a secret order, and the check is run again on those answers.
"""

from __future__ import annotations

import math

import pytest

from truegrade.graders.code import CodeGrader
from truegrade.graders.code._calls import Calls, replay_order, replay_rounds
from truegrade.graders.code._harness import CodeKernel
from truegrade.sandbox import SandboxConfig

SQUARES = [(x, x * x) for x in range(1, 8)]
LOOP_CHECK = f"""
def check(candidate):
    for x, want in {SQUARES!r}:
        assert candidate(x) == want
"""
LITERAL_CHECK = "def check(candidate):\n" + "".join(
    f"    assert candidate({x}) == {w}\n" for x, w in SQUARES
)
CASES = [{"args": [x], "expected": w} for x, w in SQUARES]
REFERENCE = "def f(x):\n    return x * x\n"


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options({"call_timeout_s": 3, "program_timeout_s": 20})


def _specs() -> dict[str, dict]:
    """The same task in each form a row can state it."""
    return {
        "check with a loop": {"entry_point": "f", "check": LOOP_CHECK},
        "check of literal asserts": {"entry_point": "f", "check": LITERAL_CHECK},
        "call cases": {"entry_point": "f", "cases": CASES},
        "cases with a reference": {
            "entry_point": "f",
            "cases": [{"args": [x]} for x, _ in SQUARES],
            "expected_from": REFERENCE,
        },
    }


def _graded(grader: CodeGrader, response: str, form: str, copies: int = 1):
    spec = _specs()[form]
    return grader.grade_batch([{"response": response, "reference": spec} for _ in range(copies)])


FORMS = ["check with a loop", "check of literal asserts", "call cases", "cases with a reference"]

POSITIONAL = f"""
EXPECTED = {[w for _, w in SQUARES]!r}
calls = 0

def f(x):
    global calls
    answer = EXPECTED[calls % len(EXPECTED)]
    calls += 1
    return answer
"""

MEMO = """
seen = {}
EXPECTED = [1, 4, 9, 16, 25, 36, 49]

def f(x):
    # hands out the dataset's answers in the order new arguments arrive
    if x not in seen:
        seen[x] = EXPECTED[len(seen)]
    return seen[x]
"""


@pytest.mark.parametrize("form", FORMS)
def test_an_honest_program_passes_in_every_form(grader, form):
    (grade,) = _graded(grader, "def f(x):\n    return x * x\n", form)
    assert grade.passed, grade.explanation


@pytest.mark.parametrize("program", [POSITIONAL, MEMO], ids=["counter", "memo"])
@pytest.mark.parametrize("form", FORMS)
def test_a_positional_program_fails_in_every_form_every_time(grader, form, program):
    grades = _graded(grader, program, form, copies=6)
    for grade in grades:
        assert grade.error is None
        assert grade.passed is False, grade.explanation
        assert grade.flags[0] in ("order_dependent", "wrong_answer"), grade.flags


RANDOM_ROOT = """
import random

def f(x):
    # Newton's method from a random start: a correct answer that differs from run to run
    guess = random.uniform(1.0, 100.0)
    for _ in range(200):
        guess = (guess + x * x / guess) / 2
    return guess
"""

RANDOM_ORDER = """
import random

def f(x):
    keys = list(range(x))
    random.shuffle(keys)
    return {k: k * k for k in keys}  # the same dict, filled in another order each time
"""


VARYING = {
    "a root from a random start, within tolerance": (
        RANDOM_ROOT,
        "abs(candidate(x) - x) < 1e-6",
    ),
    "a dict filled in a random order": (
        RANDOM_ORDER,
        "candidate(x) == {k: k * k for k in range(x)}",
    ),
}


@pytest.mark.parametrize("name", list(VARYING))
def test_an_honest_program_whose_answers_vary_passes_the_replay(grader, name):
    # a loop: the calls are made in the check's order, so the replay runs, and the check judges
    # the replay's answers as it judged the first pass's
    program, condition = VARYING[name]
    check = f"def check(candidate):\n    for x in range(1, 8):\n        assert {condition}\n"
    (grade,) = grader.grade_batch(
        [{"response": program, "reference": {"entry_point": "f", "check": check}}]
    )
    assert grade.passed, grade.explanation


def _kernel(**options):
    return CodeKernel(SandboxConfig(), call_timeout_s=3, program_timeout_s=20, **options)


def _count_replays(monkeypatch) -> list[int]:
    made: list[int] = []
    real = Calls.replay

    def counted(self):
        made.append(len(self.log))
        return real(self)

    monkeypatch.setattr(Calls, "replay", counted)
    return made


@pytest.mark.parametrize(
    ("form", "replays"),
    [
        ("check of literal asserts", 0),  # every call known ahead: sent in a secret order
        ("call cases", 0),
        ("check with a loop", 1),  # calls made as the check runs: replayed once
    ],
)
def test_only_calls_made_in_the_tests_order_are_replayed(monkeypatch, form, replays):
    made = _count_replays(monkeypatch)
    spec = _specs()[form]
    grade = _kernel()({"response": "def f(x):\n    return x * x\n", "tests": spec, "prompt": None})
    assert grade["passed"], grade
    assert len(made) == replays


def test_the_order_of_a_request_is_a_fresh_draw_and_always_moves_an_answer():
    for count in range(9):
        assert sorted(replay_order(list(range(count)))) == list(range(count))
    draws = {tuple(replay_order([0, 1, 2, 3])) for _ in range(500)}
    assert len(draws) == 24  # every order comes up: not a fixed rotation
    answers = [True, True, False, True, True, True]
    for _ in range(200):  # a counter answering in the tests' order fails every time
        order = replay_order(answers, differ=True)
        assert [answers[i] for i in order] != answers
    assert replay_order([7, 7, 7], differ=True) in (
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    )


def test_passes_with_few_arrangements_are_replayed_until_a_guess_is_unlikely():
    assert replay_rounds([1, 2, 3]) == 1  # the default: one round
    assert replay_rounds([1, 1, 1], 20) == 1  # nothing to guess: every order gives the same
    assert replay_rounds([1, 2], 20) == 6  # 1 * 2**5 >= 20
    assert replay_rounds([1, 2, 3], 20) == 2  # 5 * 6
    assert replay_rounds([True] * 4 + [False] * 3, 20) == 1  # 35 arrangements
    assert replay_rounds([True] * 5000 + [False], 20) == 1  # never computed whole
    for odds in (20, 100, 1000):
        for answers in ([1, 2], [1, 1, 2], [1, 2, 3, 4], [0] * 9 + [1]):
            arrangements = math.factorial(len(answers)) // math.prod(
                math.factorial(answers.count(a)) for a in set(answers)
            )
            rounds = replay_rounds(answers, odds)
            assert (arrangements - 1) * arrangements ** (rounds - 1) >= odds


@pytest.mark.parametrize("form", ["check of literal asserts", "call cases"])
def test_with_replay_odds_a_short_shuffled_pass_gets_more_rounds(monkeypatch, form):
    made = _count_replays(monkeypatch)
    two = {
        "check of literal asserts": {
            "entry_point": "f",
            "check": (
                "def check(candidate):\n    assert candidate(2) == 4\n"
                "    assert candidate(3) == 9\n"
            ),
        },
        "call cases": {"entry_point": "f", "cases": CASES[1:3]},
    }[form]
    kernel = _kernel(replay_odds=1000)
    honest = kernel({"response": "def f(x):\n    return x * x\n", "tests": two, "prompt": None})
    assert honest["passed"], honest
    assert len(made) == replay_rounds([b"4", b"9"], 1000) - 1  # the shuffled pass is one round
    counter = kernel(
        {
            "response": "n = 0\ndef f(x):\n    global n\n    n += 1\n    return [4, 9][n - 1]\n",
            "tests": two,
            "prompt": None,
        }
    )
    assert counter["passed"] is False
