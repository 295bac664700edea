"""The ``code`` grader: tests in three forms, scored per test, every failure with a reason, every
grader problem an error, and hostile programs contained without harm to the rest of the batch."""

from __future__ import annotations

import json
import textwrap

import pytest

from truegrade import load_grader
from truegrade.core import Flag, SpecError
from truegrade.graders.code import _harness
from truegrade.graders.code._harness import CodeKernel, values_match
from truegrade.sandbox import SandboxConfig, _launch

ADD_CASES = {
    "entry_point": "add",
    "cases": [
        {"args": [1, 2], "expected": 3},
        {"args": [-1, 1], "expected": 0},
        {"args": [], "kwargs": {"a": 5, "b": 5}, "expected": 10},
    ],
}


@pytest.fixture(scope="module")
def grader():
    # every failure's detail: the tests here are about what it says (``feedback``)
    return load_grader("code", call_timeout_s=2, program_timeout_s=15, feedback="full")


def grade(grader, response, tests, **row):
    return grader.grade({"id": 1, "response": response, "reference": tests, **row})


# -- call cases ----------------------------------------------------------------------------------


def test_a_correct_function_passes_every_case(grader):
    result = grade(grader, "def add(a, b):\n    return a + b\n", ADD_CASES)
    assert (result.passed, result.score, result.error) == (True, 1.0, None)
    assert result.subscores == {"case_0": 1.0, "case_1": 1.0, "case_2": 1.0}
    assert "sandbox: " in result.explanation


def test_the_score_is_the_fraction_of_cases_passed(grader):
    result = grade(grader, "def add(a, b):\n    return a + b if a > 0 else 99\n", ADD_CASES)
    assert result.passed is False
    assert result.score == pytest.approx(2 / 3)
    assert result.subscores["case_1"] == 0.0
    assert result.flags == ["wrong_answer"]
    assert "case_1: expected 0, got 99" in result.explanation


def test_the_program_may_come_in_a_fenced_block(grader):
    response = "Here you go:\n```python\ndef add(a, b):\n    return a + b\n```\nDone."
    assert grade(grader, response, ADD_CASES).passed


def test_tests_may_come_as_a_json_string_or_in_a_tests_column(grader):
    assert grade(grader, "def add(a, b):\n    return a + b\n", json.dumps(ADD_CASES)).passed
    row = {"id": 1, "response": "def add(a, b):\n    return a + b\n", "tests": ADD_CASES}
    assert grader.grade(row).passed


@pytest.mark.parametrize(
    ("actual", "expected", "match"),
    [
        ((1, 2), [1, 2], True),
        ([1, [2, (3,)]], [1, [2, [3]]], True),
        (True, 1, False),
        (1, True, False),
        (1, 1.0, True),
        ("1", 1, False),
        ({"a": (1,)}, {"a": [1]}, True),
        ({1: 2}, {"1": 2}, False),
        (0.1 + 0.2, 0.3, False),
        (float("nan"), float("nan"), True),
        (None, None, True),
        ({1, 2}, [1, 2], False),
    ],
)
def test_answers_compare_strictly(actual, expected, match):
    assert values_match(actual, expected) is match


@pytest.mark.parametrize(
    "expected", [1, 0.5, [1], 2**20000 + 1], ids=["int", "float", "list", "long_int"]
)
def test_an_integer_too_long_to_write_out_is_a_fail_with_a_reason(grader, expected):
    # past 4,300 decimal digits, repr() raises; past about 1,024 bits, float() does
    tests = {"entry_point": "f", "cases": [{"args": [], "expected": expected}]}
    for answer in ("2**20000", "[2**400000]"):
        result = grade(grader, f"def f():\n    return {answer}\n", tests)
        assert (result.passed, result.error, result.flags) == (False, None, ["wrong_answer"])
        assert "int of" in result.explanation or "too long to write out" in result.explanation
    assert grade(grader, "def f():\n    return 2**20000 + 1\n", tests).passed is (
        expected == 2**20000 + 1
    )


def test_float_tolerance_is_an_option_and_off_by_default(grader):
    tests = {"entry_point": "f", "cases": [{"args": [], "expected": 0.3}]}
    assert not grade(grader, "def f():\n    return 0.1 + 0.2\n", tests).passed
    tolerant = load_grader("code", rel_tol=1e-9)
    assert grade(tolerant, "def f():\n    return 0.1 + 0.2\n", tests).passed


def test_a_program_that_fails_to_load_fails_every_case_once(grader):
    result = grade(
        grader, "raise RuntimeError('broken')\ndef add(a, b):\n    return 1\n", ADD_CASES
    )
    assert result.score == 0.0
    assert result.flags == ["exception"]
    assert "while loading the program" in result.explanation
    missing = grade(grader, "def plus(a, b):\n    return a + b\n", ADD_CASES)
    assert missing.flags == ["missing_entry_point"]
    broken = grade(grader, "def add(a, b)\n    return a + b\n", ADD_CASES)
    assert broken.flags == ["syntax_error"]
    assert broken.passed is False
    assert broken.error is None


def test_a_case_that_raises_fails_alone(grader):
    code = "def add(a, b):\n    if a < 0:\n        raise ValueError('negative')\n    return a + b\n"
    result = grade(grader, code, ADD_CASES)
    assert result.subscores == {"case_0": 1.0, "case_1": 0.0, "case_2": 1.0}
    assert result.flags == ["exception"]
    assert "ValueError: negative" in result.explanation


def test_a_hung_case_times_out_and_the_other_cases_still_run(grader):
    code = "def add(a, b):\n    while a < 0:\n        pass\n    return a + b\n"
    result = grade(grader, code, ADD_CASES)
    assert result.subscores == {"case_0": 1.0, "case_1": 0.0, "case_2": 1.0}
    assert "timeout" in result.flags


# -- stdin / stdout ------------------------------------------------------------------------------

SUM_STDIO = {
    "stdio": [
        {"stdin": "1 2\n", "stdout": "3\n"},
        {"stdin": "10 -4\n", "stdout": "6"},
    ]
}


def test_a_correct_program_passes_its_stdio_tests(grader):
    result = grade(grader, "a, b = map(int, input().split())\nprint(a + b)\n", SUM_STDIO)
    assert (result.passed, result.subscores) == (True, {"stdio_0": 1.0, "stdio_1": 1.0})


@pytest.mark.parametrize(
    ("printed", "compare", "passes"),
    [
        ("3  \r\n\n\n", "lines", True),  # trailing whitespace and empty lines do not matter
        (" 3\n", "lines", False),  # leading whitespace does
        ("3 4\n", "lines", False),
        ("1\n2\n", "tokens", True),  # expected "1 2": tokens ignore how they are spread
        ("3\n", "exact", False),  # exact: expected "3" without the newline
    ],
)
def test_stdout_whitespace_rules(printed, compare, passes):
    expected = {"lines": "3\n", "tokens": "1 2", "exact": "3"}[compare]
    grader = load_grader("code", stdio_compare=compare)
    tests = {"stdio": [{"stdin": "", "stdout": expected}]}
    assert grade(grader, f"print({printed!r}, end='')\n", tests).passed is passes


def test_exit_status_counts_and_an_early_exit_after_the_answer_is_fine(grader):
    tests = {"stdio": [{"stdin": "", "stdout": "ok\n"}]}
    assert grade(grader, "import sys\nprint('ok')\nsys.exit(0)\nprint('unreached')\n", tests).passed
    failed = grade(grader, "import sys\nprint('ok')\nsys.exit(2)\n", tests)
    assert failed.flags == ["exit_status", "tell_exit"]
    assert "exited with status 2" in failed.explanation


# -- HumanEval-style checks ----------------------------------------------------------------------

PROMPT = '''
def double(x):
    return 2 * x


def quadruple(x: int) -> int:
    """Four times x."""
'''
CHECK = {
    "entry_point": "quadruple",
    "check": textwrap.dedent(
        """
        def check(candidate):
            assert candidate(1) == double(2)
            assert quadruple(3) == 12  # called by name: the same candidate
            for x in range(5):
                assert candidate(x) == 4 * x
        """
    ),
}


def test_a_check_runs_outside_the_sandbox_with_the_prompts_helpers(grader):
    completion = "    return double(double(x))\n"
    result = grade(grader, completion, CHECK, prompt=PROMPT)
    assert result.passed, result.explanation
    assert result.subscores == {"check": 1.0}


def test_a_failed_assertion_names_its_line(grader):
    result = grade(grader, "def quadruple(x):\n    return 4 * x + (x == 4)\n", CHECK, prompt=PROMPT)
    assert result.flags == ["wrong_answer"]
    assert "assertion failed at check line" in result.explanation


HISTOGRAM = {
    "entry_point": "histogram",
    "check": textwrap.dedent(
        """
        def check(candidate):
            assert candidate("a b b a") == {"a": 2, "b": 2}
            assert candidate("b b b a") == {"b": 3}
            assert candidate("") == {}
        """
    ),
}


@pytest.mark.parametrize(
    ("program", "passes", "flags"),
    [
        ("from collections import Counter\n"  # a Counter is a dict: judged by what it holds
         "def histogram(s):\n    c = Counter(s.split())\n    m = max(c.values(), default=0)\n"
         "    return Counter({k: v for k, v in c.items() if v == m})\n", True, []),
        ("class Yes(dict):\n    def __eq__(self, other):\n        return True\n"  # holds {}
         "def histogram(s):\n    return Yes()\n", False, ["wrong_answer", "tell_eq_override"]),
        ("from fractions import Fraction\ndef histogram(s):\n    return Fraction(1, 2)\n",
         False, ["not_plain_data"]),
    ],
)  # fmt: skip
def test_an_answer_is_judged_by_the_plain_value_it_holds(grader, program, passes, flags):
    result = grade(grader, program, HISTOGRAM)
    assert result.passed is passes, result.explanation
    assert sorted(result.flags) == sorted(flags)


@pytest.mark.parametrize(
    ("argument", "program", "flag", "is_error"),
    [
        ("", "import os\ndef f(*a):\n    os._exit(0)\n", "early_exit", False),  # a fail
        ("lambda: 1", "def f(*a):\n    return 1\n", "bad_reference", True),  # not gradable
    ],
)
def test_what_a_check_swallows_still_counts(grader, argument, program, flag, is_error):
    tests = {
        "entry_point": "f",
        "check": f"def check(candidate):\n    try:\n        candidate({argument})\n"
        "    except:\n        pass\n    assert candidate(1) == 1\n",
    }
    result = grade(grader, program, tests)
    assert result.passed is not True
    assert result.flags[0] == flag
    assert (result.error is not None) is is_error


def test_a_check_that_expects_an_exception_gets_it(grader):
    tests = {
        "entry_point": "f",
        "check": textwrap.dedent(
            """
            def check(candidate):
                try:
                    candidate(-1)
                except ValueError:
                    pass
                else:
                    raise AssertionError("no ValueError")
                assert candidate(2) == 2
            """
        ),
    }
    code = "def f(x):\n    if x < 0:\n        raise ValueError('no')\n    return x\n"
    assert grade(grader, code, tests).passed


def test_a_check_that_cannot_run_here_is_the_references_fault(grader):
    lambda_arg = {"entry_point": "f", "check": "def check(candidate):\n    candidate(lambda: 1)\n"}
    result = grade(grader, "def f(g):\n    return 1\n", lambda_arg)
    assert result.error is not None
    assert result.flags == ["bad_reference"]
    assert "not plain builtin data" in result.error
    never = {"entry_point": "f", "check": "def check(candidate):\n    pass\n"}
    assert grade(grader, "def f():\n    return 1\n", never).flags == ["bad_reference"]
    broken = {"entry_point": "f", "check": "def check(candidate:\n"}
    assert grade(grader, "def f():\n    return 1\n", broken).flags == ["bad_reference"]


# -- what the grader refuses, and errors ---------------------------------------------------------


def test_rows_without_tests_and_bad_specs_are_errors_not_fails(grader):
    none = grader.grade({"id": 1, "response": "x = 1"})
    assert none.error is not None
    assert none.flags == [Flag.NO_REFERENCE]
    bad = grade(grader, "x = 1", {"entry_point": "f"})
    assert bad.error is not None
    assert bad.flags == ["bad_reference"]


def test_no_isolation_needs_an_explicit_opt_in_and_is_flagged():
    with pytest.raises(SpecError, match="unsafe_no_sandbox"):
        load_grader("code", isolation="none")
    with pytest.raises(SpecError, match="killable worker"):
        load_grader("code", execution="inline")
    unsafe = load_grader("code", isolation="none", unsafe_no_sandbox=True)
    result = grade(unsafe, "def add(a, b):\n    return a + b\n", ADD_CASES)
    assert result.passed
    assert result.flags == ["unsandboxed"]
    assert "UNSANDBOXED" in result.explanation


def test_without_any_sandbox_the_grade_is_an_error_with_the_reason(monkeypatch):
    # the kernel runs here (not in a worker) so that bubblewrap can be made to disappear
    monkeypatch.setattr(_launch, "bwrap_path", lambda: None)
    monkeypatch.setattr(_harness, "_UNAVAILABLE", {})  # this process's memory of the failure
    kernel = CodeKernel(SandboxConfig(isolation="bwrap"), call_timeout_s=2, program_timeout_s=5)
    verdict = kernel(
        {"response": "def add(a, b):\n    return a + b\n", "prompt": None, "tests": ADD_CASES}
    )
    assert verdict["error"] is not None
    assert "bubblewrap" in verdict["error"]
    assert verdict["flags"] == ["sandbox_unavailable"]


def test_fresh_sandboxes_and_fresh_processes_are_options():
    strongest = load_grader("code", fresh_sandbox=True, fresh_process_per_call=True)
    assert grade(strongest, "def add(a, b):\n    return a + b\n", ADD_CASES).passed


@pytest.mark.parametrize(
    ("response", "tests"),
    [
        ("def add(a, b):\n    return a + b\n", ADD_CASES),
        ("print(sum(map(int, input().split())))\n", {"stdio": [{"stdin": "1 2\n", "stdout": "3"}]}),
        (
            "print(sum(map(int, input().split())))\n",
            {"language": "python", "stdio": [{"stdin": "1 2\n", "stdout": "3"}]},
        ),
    ],
    ids=["function", "stdio", "stdio with a language"],
)
def test_a_fresh_sandbox_grade_says_its_isolation_and_is_not_flagged_unsandboxed(response, tests):
    """The sandbox was closed before the grade read how it isolated: every honest row was
    flagged ``unsandboxed``, though it ran under bubblewrap."""
    fresh = load_grader("code", fresh_sandbox=True)
    result = grade(fresh, response, tests)
    assert result.passed, result.explanation
    assert "unsandboxed" not in result.flags and "UNSANDBOXED" not in result.explanation
    assert result.explanation.endswith(("sandbox: bwrap", "sandbox: native")), result.explanation


# -- hostile programs, at the grader level --------------------------------------------------------


def test_hostile_programs_are_contained_with_a_reason_and_the_batch_goes_on(grader):
    tests = {"stdio": [{"stdin": "1 2\n", "stdout": "3\n"}]}
    honest = "a, b = map(int, input().split())\nprint(a + b)\n"
    hostile = {
        "fork bomb": "import os\nwhile True:\n"
        "    try:\n        os.fork()\n    except OSError:\n        pass\n",
        "memory bomb": "x = bytearray(16 * 1024 ** 3)\n",
        "output flood": "while True:\n    print('x' * 10000)\n",
        "loop": "while True:\n    pass\n",
        "network": "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)\n",
        "kill the parent": "import os\nfor pid in (os.getppid(), 1, -1):\n    try:\n"
        "        os.kill(pid, 9)\n    except OSError:\n        pass\n",
    }
    expected_flag = {
        "fork bomb": "timeout",
        "memory bomb": "memory_limit",
        "output flood": "output_limit",
        "loop": "timeout",
        "network": "sandbox_violation",
        "kill the parent": "wrong_answer",
    }
    rows = [{"id": name, "response": code, "reference": tests} for name, code in hostile.items()]
    rows.append({"id": "honest", "response": honest, "reference": tests})
    grades = dict(zip([r["id"] for r in rows], grader.grade_batch(rows), strict=True))
    for name, flag in expected_flag.items():
        assert grades[name].passed is False, name
        assert grades[name].error is None, (name, grades[name].error)
        assert flag in grades[name].flags, (name, grades[name].flags)
    assert grades["honest"].passed
    assert grade(grader, honest, tests).passed  # and afterwards


def test_a_result_record_the_program_writes_itself_is_a_failure(grader):
    # correct answers, plus a record written straight to the result pipe before each: even with
    # the right index guessed, the genuine record repeats it and the case fails
    forger = (
        "import os\n"
        "calls = 0\n"
        "def add(a, b):\n"
        "    global calls\n"
        '    rec = (\'{"status":"ok","value":%d,"call":%d}\' % (a + b, calls)).encode()\n'
        "    calls += 1\n"
        "    os.write(4, len(rec).to_bytes(4, 'big') + rec)\n"
        "    return a + b\n"
    )
    result = grade(grader, forger, ADD_CASES)
    assert result.passed is False and "bad_result_record" in result.flags, result


SPIN = """
import time
def f(x):
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    return x
"""


def test_the_program_budget_covers_all_its_tests_in_cpu_time():
    # 0.3 s of CPU a case against a budget of 1.0 s: the first few answered, the others not,
    # for want of time, which is not a wrong answer; the machine's load does not move it
    grader = load_grader("code", call_timeout_s=5, program_timeout_s=1.0, feedback="full")
    tests = {"entry_point": "f", "cases": [{"args": [i], "expected": i} for i in range(6)]}
    result = grade(grader, SPIN, tests)
    assert result.score < 1.0 and result.flags == ["timeout"], result.explanation
    assert "time budget ran out" in result.explanation


def test_a_sandbox_that_fails_under_a_sample_gets_one_more_try_in_a_fresh_one(monkeypatch):
    from truegrade.core import Sample
    from truegrade.graders.code import CodeGrader
    from truegrade.graders.code._calls import SandboxBroke as _SandboxBroke
    from truegrade.graders.code._harness import CodeKernel

    grader = CodeGrader.from_options({})
    kernel = grader.kernel()
    sample = Sample(
        id=0,
        response="```python\ndef f(x):\n    return x + 1\n```",
        reference={"cases": [{"args": [1], "expected": 2}], "entry_point": "f"},
    )
    real_run = CodeKernel._run
    failures = []

    def flaky(self, *args, **kwargs):
        if len(failures) < 1:
            failures.append(1)
            raise _SandboxBroke("the call session did not start")
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(CodeKernel, "_run", flaky)
    verdict = kernel(grader.payload(sample))
    assert failures == [1] and verdict["passed"] is True

    def always(self, *args, **kwargs):
        raise _SandboxBroke("the call session did not start")

    monkeypatch.setattr(CodeKernel, "_run", always)
    verdict = kernel(grader.payload(sample))
    assert verdict["passed"] is None and "failed twice" in verdict["error"]


# -- what a grade tells of hidden tests (``feedback``) --------------------------------------------

SECRET_CASES = {
    "entry_point": "f",
    "cases": [
        {"args": ["shown-in"], "expected": "shown-out", "visible": True},
        {"args": ["secret-in"], "expected": "secret-out"},
    ],
}
WRONG = "def f(x):\n    return 'got-' + x\n"


def _leaks(result, *secrets: str) -> list[str]:
    told = result.explanation + (result.error or "") + repr(result.subscores)
    return [secret for secret in secrets if secret in told]


@pytest.fixture(scope="module")
def by_feedback():
    return {
        name: load_grader("code", call_timeout_s=2, feedback=name)
        for name in ("full", "visible", "none")
    }


def test_by_default_a_hidden_case_is_named_with_its_kind_of_failure_only():
    """A loop that shows the explanation to the model handed it every hidden expected value."""
    hidden_first = {"entry_point": "f", "cases": SECRET_CASES["cases"][::-1]}
    result = grade(load_grader("code", call_timeout_s=2), WRONG, hidden_first)
    assert result.flags == ["wrong_answer"] and result.subscores == {"case_0": 0.0, "case_1": 0.0}
    assert "case_0: wrong_answer" in result.explanation
    assert _leaks(result, "secret-out", "got-secret-in", "secret-in") == []


def test_a_visible_case_shows_its_input_expected_value_and_answer(by_feedback):
    result = grade(by_feedback["visible"], WRONG, SECRET_CASES)
    assert "case_0: expected 'shown-out', got 'got-shown-in' (input: f('shown-in'))" in (
        result.explanation
    )
    assert _leaks(result, "secret") == []


def test_feedback_none_says_only_how_many_tests_passed(by_feedback):
    result = grade(by_feedback["none"], WRONG, SECRET_CASES)
    assert result.explanation.startswith("0/2 tests passed; sandbox: ")
    assert _leaks(result, "shown-out", "secret-out") == [] and "case_" not in result.explanation
    assert result.subscores == {"case_0": 0.0, "case_1": 0.0}  # verdicts, never values


def test_feedback_full_keeps_every_detail(by_feedback):
    hidden_first = {"entry_point": "f", "cases": SECRET_CASES["cases"][::-1]}
    result = grade(by_feedback["full"], WRONG, hidden_first)
    assert "case_0: expected 'secret-out', got 'got-secret-in'" in result.explanation


@pytest.mark.parametrize(
    ("program", "kind"),
    [
        ("def f(x):\n    raise ValueError(x)\n", "exception"),  # the input, echoed
        ("def f(x):\n    return type(x, (), {})()\n", "not_plain_data"),  # in a class's name
        ("def f(x):\n    import sys\n    print(x)\n    sys.exit(x)\n", "early_exit"),
    ],
)
def test_a_program_cannot_read_a_hidden_input_back_from_its_own_failure(by_feedback, program, kind):
    hidden = {"entry_point": "f", "cases": [{"args": ["secret-in"], "expected": 1}]}
    result = grade(by_feedback["visible"], program, hidden)
    assert result.flags[0] == kind
    assert _leaks(result, "secret-in") == []
    assert "secret-in" in grade(by_feedback["full"], program, hidden).explanation


def test_a_check_is_hidden_its_assertions_say_what_it_expects(by_feedback):
    check = "def check(c):\n    assert c(1) == 'secret-out', 'wanted secret-out'\n"
    tests = {"entry_point": "f", "check": check}
    nope = "def f(x):\n    return 'nope'\n"
    result = grade(by_feedback["visible"], nope, tests)
    assert result.flags == ["wrong_answer"] and "check: wrong_answer" in result.explanation
    assert _leaks(result, "secret-out") == []
    assert "secret-out" in grade(by_feedback["full"], nope, tests).explanation


def test_a_reference_program_s_answers_stay_hidden(by_feedback):
    tests = {
        "entry_point": "f",
        "expected_from": ["def f(x):\n    return 'secret-out'\n", "def f(x):\n    return 'also'\n"],
        "cases": [{"args": ["secret-in"]}],
    }
    result = grade(by_feedback["visible"], WRONG, tests)
    assert result.flags == ["wrong_answer"]
    assert _leaks(result, "secret-out", "also", "secret-in") == []


STDIO_SECRETS = {
    "stdio": [
        {"stdin": "shown-in\n", "stdout": "shown-out\n", "visible": True},
        {"stdin": "secret-in\n", "stdout": "secret-out\n"},
    ]
}
ECHO = "print('got-' + input())\n"
CRASH = "import sys\nline = input()\nif 'secret' in line:\n    sys.exit('died on ' + line)\n"


@pytest.mark.parametrize("language", [None, "python"])
def test_a_hidden_stdin_test_hides_its_input_and_expected_output(by_feedback, language):
    tests = {**STDIO_SECRETS, "language": language} if language else STDIO_SECRETS
    wrong = grade(by_feedback["visible"], ECHO, tests)
    assert "expected stdout 'shown-out\\n', got 'got-shown-in\\n'" in wrong.explanation
    assert "(input: stdin 'shown-in\\n')" in wrong.explanation
    assert _leaks(wrong, "secret") == []
    hidden_first = {**tests, "stdio": tests["stdio"][::-1]}
    crashed = grade(by_feedback["visible"], CRASH, hidden_first)  # its stderr echoes stdin
    assert crashed.passed is False and _leaks(crashed, "secret") == []
    assert "secret-in" in grade(by_feedback["full"], CRASH, hidden_first).explanation


@pytest.mark.system_tool("python3", package="python3")
def test_a_special_judge_s_message_on_a_hidden_test_is_not_told(by_feedback):
    judge = (
        "import sys\n"
        "out, ans = open(sys.argv[2]).read(), open(sys.argv[3]).read()\n"
        "if ans.strip() == 'broken':\n    sys.exit(3)\n"
        "if out != ans:\n"
        "    print('expected', ans.strip(), file=sys.stderr)\n    sys.exit(1)\n"
    )
    checker = {"language": "python", "source": judge}
    tests = {"language": "python", "checker": checker, "stdio": STDIO_SECRETS["stdio"][1:]}
    result = grade(by_feedback["visible"], ECHO, tests)
    assert result.flags == ["wrong_answer"] and _leaks(result, "secret") == []
    assert "expected secret-out" in grade(by_feedback["full"], ECHO, tests).explanation
    broken = {**tests, "stdio": [{"stdin": "x\n", "stdout": "broken\n"}]}
    error = grade(by_feedback["visible"], "print('broken')\nprint(1)\n", broken)
    assert error.error is not None and "checker_error" in error.flags


def test_what_is_about_the_program_as_a_whole_is_told_of_hidden_tests_too(by_feedback):
    hidden = {"entry_point": "f", "cases": [{"args": ["secret-in"], "expected": "secret-out"}]}
    syntax = grade(by_feedback["visible"], "def f(x)\n    return x\n", hidden)
    assert syntax.flags == ["syntax_error"] and "does not compile" in syntax.explanation
    loading = grade(by_feedback["visible"], "raise KeyError('at load')\n", hidden)
    assert "while loading the program" in loading.explanation
    missing = grade(by_feedback["visible"], "def g(x):\n    return x\n", hidden)
    assert missing.flags == ["missing_entry_point"] and "f" in missing.explanation
    for result in (syntax, loading, missing):
        assert _leaks(result, "secret") == []


def test_feedback_is_an_option_with_three_values():
    assert load_grader("code").options.feedback == "visible"
    with pytest.raises(SpecError, match="feedback"):
        load_grader("code", feedback="some")
