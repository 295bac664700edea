"""The replay that checks a pass for state: a program must not be able to tell it from the first
pass, and one that does must still not be able to answer it.

Each attack below is a positional program: it answers the n-th call with the n-th expected value
of the check, never computing anything, and uses one observable to decide that it is being
replayed, where it shifts its answers by the order it expects. Before the replay order was a
secret random draw (it was the first pass rotated by one), and before every session was started
from the same place with one call per request, each of them passed.
"""

from __future__ import annotations

import math

import pytest

from truegrade.graders.code import CodeGrader
from truegrade.graders.code._harness import replay_order, replay_rounds

SQUARES = [(x, x * x) for x in range(1, 8)]
CHECK = f"""
def check(candidate):
    for x, want in {SQUARES!r}:
        assert candidate(x) == want
"""
CALLS_ONLY = """
def check(candidate):
    for x in range(6):
        candidate(x)
"""


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options({"call_timeout_s": 3, "program_timeout_s": 20})


def _row(response: str, check: str = CHECK) -> dict:
    return {"response": response, "reference": {"entry_point": "f", "check": check}}


_POSITIONAL = """
EXPECTED = {expected!r}
calls = 0
replaying = False

def f(x):
    global calls, replaying
    replaying = replaying or replayed()
    shift = 1 if replaying else 0  # the old replay: the first pass rotated by one
    answer = EXPECTED[(calls + shift) % len(EXPECTED)]
    calls += 1
    return answer
"""

DISTINGUISHERS = {
    # the first pass's session used to be forked inside the zygote's `load`
    "stack": """
import sys
def replayed():
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "load":
            return False
        frame = frame.f_back
    return True
""",
    # the replay used to send every call in one request, visible in the session loop's frame
    "request in the session loop's frame": """
import sys
def replayed():
    frame = sys._getframe()
    while frame is not None:
        header = frame.f_locals.get("header")
        if isinstance(header, dict) and len(header.get("calls", ())) > 1:
            return True
        frame = frame.f_back
    return False
""",
    # the replay's calls are sent together: the request pipe holds the ones still to come
    "bytes waiting on the request pipe": """
import array, fcntl, termios
def replayed():
    waiting = array.array("i", [0])
    fcntl.ioctl(3, termios.FIONREAD, waiting)
    return waiting[0] > 0
""",
    # the zygote's bookkeeping: the replay's session is forked after the first pass's died
    "the zygote's list of killed sessions": """
import gc
def replayed():
    zygote = [o for o in gc.get_objects() if type(o).__name__ == "Zygote"]
    return bool(zygote and zygote[0].dying)
""",
}


def test_squares_check_passes_an_honest_program(grader):
    assert grader.grade(_row("def f(x):\n    return x * x\n")).passed


@pytest.mark.parametrize("observable", list(DISTINGUISHERS))
def test_a_positional_program_that_tells_the_replay_apart_still_fails(grader, observable):
    program = DISTINGUISHERS[observable] + _POSITIONAL.format(expected=[w for _, w in SQUARES])
    grades = grader.grade_batch([_row(program) for _ in range(3)])
    for grade in grades:
        assert grade.error is None
        # it is caught by the replay, or, where it cannot tell the passes apart any more and
        # takes the first pass for the replay, by the check itself
        assert grade.passed is False, grade.explanation
        assert grade.flags[0] in ("order_dependent", "wrong_answer")


_OBSERVER = """
import gc, os, sys

def f(x):
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        local = {
            name: repr(value)[:300]
            for name, value in frame.f_locals.items()
            if name not in ("answered", "record")  # the call's place in its session, as a counter
        }
        frames.append((frame.f_code.co_name, frame.f_lineno, sorted(local.items())))
        frame = frame.f_back
    zygote = [o for o in gc.get_objects() if type(o).__name__ == "Zygote"]
    state = sorted((k, repr(v)[:300]) for k, v in vars(zygote[0]).items()) if zygote else None
    descriptors = []
    for fd in range(256):
        try:
            descriptors.append((fd, os.fstat(fd).st_mode))
        except OSError:
            pass
    return repr((x, frames, state, descriptors, sorted(sys.modules), dict(os.environ)))
"""


def test_stack_frame_locals_zygote_state_descriptors_and_modules_are_the_same_in_both(grader):
    """The program reports what it can see; the replay requires the same report for each call,
    so the grade passes only if none of it differs between the first pass and the replay."""
    grade = grader.grade(_row(_OBSERVER, CALLS_ONLY))
    assert grade.passed, grade.explanation


def test_the_replay_order_is_a_fresh_draw_and_the_first_always_moves_an_answer():
    for count in range(9):
        assert sorted(replay_order(list(range(count)))) == list(range(count))
    draws = {tuple(replay_order([0, 1, 2, 3])) for _ in range(500)}
    assert len(draws) == 24  # every order comes up: not a fixed rotation
    answers = [True, True, False, True, True, True]
    for _ in range(200):  # a counter answering in the first pass's order fails every time
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
    assert replay_rounds([1, 2, 3]) == 1  # the default: one replay
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


def test_with_replay_odds_honest_programs_pass_and_counters_still_fail():
    grader = CodeGrader.from_options({"replay_odds": 1000, "call_timeout_s": 3})
    check = "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(3) == 9\n"
    honest = grader.grade(_row("def f(x):\n    return x * x\n", check))
    counter = grader.grade(
        _row("n = 0\ndef f(x):\n    global n\n    n += 1\n    return [4, 9][n - 1]\n", check)
    )
    assert honest.passed and counter.passed is False and counter.flags[0] == "order_dependent"


LITERAL_CHECK = "def check(candidate):\n" + "".join(
    f"    assert candidate({x})[0] == {w}\n" for x, w in SQUARES
)
LOOP_CHECK = CHECK.replace("candidate(x) == want", "candidate(x)[0] == want")


@pytest.mark.parametrize("check", [LOOP_CHECK, LITERAL_CHECK], ids=["loop", "sent ahead"])
def test_the_request_pipe_looks_the_same_to_the_replay_as_to_the_first_pass(grader, check):
    """Whether calls wait on the request pipe when a session's first call comes tells the old
    replay (sent all at once) from a first pass that sends one call at a time. A program reports
    it with every answer; the replay sends its calls as the first pass did (ahead together, or
    one by one), so the report is the same and the grade passes."""
    program = DISTINGUISHERS["bytes waiting on the request pipe"] + (
        "seen = None\n"
        "def f(x):\n"
        "    global seen\n"
        "    if seen is None:\n"
        "        seen = replayed()\n"
        "    return [x * x, seen]\n"
    )
    assert grader.grade(_row(program, check)).passed
