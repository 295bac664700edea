"""Conventions judges share for stdin/stdout tests: an output past the cap is its own verdict,
tokens may be compared without case, as the Kattis and DOMjudge default validators do, a test
may carry its own validator flags, Python runs as ``python main.py`` does (``exit()`` is there),
PyPy may raise its recursion limit, and a row may give the stack judges give."""

from __future__ import annotations

import pytest

from truegrade.graders.code import CodeGrader
from truegrade.graders.code._stdio import outputs_match

NAN = "import math\nprint(math.nan, 'YES')\n"


def _row(code: str, stdout: str, language: str | None = "python", **spec) -> dict:
    reference = {"stdio": [{"stdin": "", "stdout": stdout}], **spec}
    if language is not None:
        reference["language"] = language
    return {"response": f"```python\n{code}```\n", "reference": reference}


def test_tokens_ci_matches_tokens_without_case_and_nothing_else():
    assert outputs_match("NaN YES\n", "nan yes", "tokens_ci")
    assert not outputs_match("NaN YES\n", "nan yes", "tokens")
    assert not outputs_match("nan yes no", "nan yes", "tokens_ci")  # one token more
    assert not outputs_match("nan ye s", "nan yes", "tokens_ci")  # tokens, not letters
    assert outputs_match("0.33333334 NAN", "0.3333333 nan", "tokens_ci", abs_tol=1e-6)


@pytest.mark.parametrize("language", ["python", None], ids=["built", "plain"])
def test_a_grader_or_a_row_may_ask_for_tokens_without_case(language):
    strict = CodeGrader.from_options({"call_timeout_s": 5})
    loose = CodeGrader.from_options({"call_timeout_s": 5, "stdio_compare": "tokens_ci"})
    row = _row(NAN, "nan yes\n", language)
    assert strict.grade(row).passed is False
    assert loose.grade(row).passed
    assert strict.grade(_row(NAN, "nan yes\n", language, compare="tokens_ci")).passed


def test_an_unknown_comparison_names_the_ones_there_are():
    grade = CodeGrader.from_options({}).grade(_row(NAN, "x\n", compare="case"))
    assert grade.error and "tokens_ci" in grade.error


def test_output_past_the_cap_is_output_limit_not_a_crash():
    grader = CodeGrader.from_options(
        {"call_timeout_s": 5, "stdout_bytes": 65536, "feedback": "full"}
    )
    flood = "import sys\nsys.stdout.write('x' * 200000)\n"
    grade = grader.grade(_row(flood, "x\n"))
    assert grade.error is None and grade.passed is False
    assert grade.subscores.get("output_limit") == 1.0, grade.subscores
    assert "output_limit" in grade.flags


def test_a_program_that_writes_past_the_cap_forever_reaches_its_time_limit():
    """Judges let a program that writes too much run on, its output cut (DOMjudge truncates
    it, problemtools writes it to a file) and check the time first: one that floods stdout
    forever is a time limit, as BAPCtools' ``test-fill-stdout.cc`` is labelled, never an
    ``output_limit`` after a few milliseconds; one that stops by itself is ``output_limit``."""
    grader = CodeGrader.from_options({"stdout_bytes": 65536, "feedback": "full"})
    forever = "while True:\n    print('x' * 1000)\n"
    grade = grader.grade(_row(forever, "x\n", time_limit_s=1))
    assert grade.error is None and grade.subscores.get("time_limit") == 1.0, grade.subscores
    ends = "import sys\nsys.stdout.write('x' * 200000)\n"
    grade = grader.grade(_row(ends, "x\n", time_limit_s=1))
    assert grade.subscores.get("output_limit") == 1.0, grade.subscores


def test_a_test_the_budget_leaves_no_time_for_is_budget_exhausted_not_time_limit():
    """Two tests with a 3 s limit each and a 1 s budget for the whole response: the first is
    stopped when the budget runs out, short of its limit, the second is never run. Neither
    reached its own limit, so neither is ``time_limit``."""
    grader = CodeGrader.from_options({"program_timeout_s": 1.0, "feedback": "full"})
    loop = "while True:\n    pass\n"
    tests = [{"stdin": "", "stdout": "1\n"}, {"stdin": "", "stdout": "1\n"}]
    row = {
        "response": f"```python\n{loop}```\n",
        "reference": {"language": "python", "time_limit_s": 3, "stdio": tests},
    }
    grade = grader.grade(row)
    assert grade.error is None and grade.passed is False
    assert grade.subscores.get("budget_exhausted") == 2.0, grade.subscores
    assert "time_limit" not in grade.subscores
    assert "program_timeout_s" in grade.explanation
    within = CodeGrader.from_options({"program_timeout_s": 30.0})
    assert within.grade(row).subscores.get("time_limit") == 2.0  # its own limit, reached


def test_the_default_output_cap_is_a_judges_8_mib_and_a_row_may_set_its_own():
    """Kattis allows 8 MiB of output: a correct 2 MB answer passes at the grader's defaults,
    and a row's ``output_mb`` (a package's output limit) takes the default's place."""
    big = "print('x' * 2_000_000)\n"
    row = _row(big, "x" * 2_000_000 + "\n")
    grader = CodeGrader.from_options({"feedback": "full"})
    assert grader.grade(row).passed, grader.grade(row).explanation
    capped = _row(big, "x" * 2_000_000 + "\n", output_mb=1)
    grade = grader.grade(capped)
    assert grade.passed is False and grade.subscores.get("output_limit") == 1.0
    assert "1048576 bytes" in grade.explanation


@pytest.mark.parametrize(
    ("names", "accepted", "time"),
    [
        ("truegrade", "accepted", "time_limit"),
        ("kattis", "AC", "TLE"),
        ("domjudge", "correct", "timelimit"),
    ],
)
def test_verdicts_may_carry_a_judges_names(names, accepted, time):
    grader = CodeGrader.from_options({"verdict_names": names, "call_timeout_s": 1})
    code = "s = input()\nwhile s == 'spin':\n    pass\nprint(s)\n"
    tests = [{"stdin": "a\n", "stdout": "a\n"}, {"stdin": "spin\n", "stdout": "spin\n"}]
    grade = grader.grade(
        {"response": f"```python\n{code}```", "reference": {"language": "python", "stdio": tests}}
    )
    assert grade.subscores.get(accepted) == 1.0 and grade.subscores.get(time) == 1.0, (
        grade.subscores
    )
    assert f"stdio_1 {time}" in grade.explanation
    assert grade.score == 0.5  # the names change, the grade does not


def test_a_row_may_ask_for_the_kattis_default_validator_with_its_flags():
    code = "print('1.0004', 'NaN', 'Yes')\n"
    row = _row(code, "1 nan YES\n", compare="kattis", validator_flags="float_tolerance 1e-3")
    assert CodeGrader.from_options({}).grade(row).passed
    tight = _row(code, "1 nan YES\n", compare="kattis", validator_flags="float_tolerance 1e-5")
    full = CodeGrader.from_options({"feedback": "full"})
    grade = full.grade(tight)
    assert grade.passed is False and "too far" in grade.explanation
    cased = _row(
        code, "1 nan YES\n", compare="kattis", validator_flags="case_sensitive float_tolerance 1"
    )
    assert "expected 'nan', got 'NaN'" in full.grade(cased).explanation


def test_a_test_may_carry_its_own_validator_flags():
    """A problem package's test group may set flags of its own (``testdata.yaml``,
    ``test_group.yaml``): that test is judged with them, the others with the row's."""
    code = "print('0.3333333')\n"
    tests = [
        {"stdin": "", "stdout": "0.333333333\n", "validator_flags": "float_tolerance 1e-6"},
        {"stdin": "", "stdout": "0.333333333\n"},
    ]
    row = {
        "response": f"```python\n{code}```\n",
        "reference": {"language": "python", "compare": "kattis", "stdio": tests},
    }
    grade = CodeGrader.from_options({"feedback": "full"}).grade(row)
    assert "stdio_0 accepted" in grade.explanation and "stdio_1 wrong_answer" in grade.explanation
    tests[1]["validator_flags"] = "float_tolerance x"
    assert "float_tolerance" in (CodeGrader.from_options({}).grade(row).error or "")


@pytest.mark.parametrize("language", ["python", "pypy"])
@pytest.mark.parametrize("ending", ["exit()", "quit()", "exit(0)"])
def test_a_python_program_may_end_with_exit_as_it_may_on_a_judge(language, ending):
    """Judges run ``python main.py``, where ``site`` gives a script ``exit()`` and ``quit()``:
    a correct program that ends with one passes (run without ``site``, it was a
    ``NameError``, a run-time error on its exit status)."""
    row = _row(f"print(1)\n{ending}\n", "1\n", language)
    grade = CodeGrader.from_options({"feedback": "full"}).grade(row)
    assert grade.passed, grade.explanation


RECURSION = """\
import sys
sys.setrecursionlimit(10**6)
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
print(depth(200000))
"""


def test_pypy_may_raise_its_recursion_limit_under_a_one_gigabyte_limit():
    """``sys.setrecursionlimit(10**6)`` makes PyPy reserve about 1.5 GB of address space it
    never touches (its stack of GC roots): under an address-space cap of 1 GB it was a
    ``MemoryError``. Capped as the runtimes that reserve address space are, it passes, and
    what it keeps resident is still held to the limit."""
    row = _row(RECURSION, "200000\n", "pypy", memory_mb=1024, time_limit_s=5)
    grade = CodeGrader.from_options({"feedback": "full"}).grade(row)
    assert grade.passed, grade.explanation
    hog = "x = bytearray(1536 * 1024 * 1024)\nprint(len(x))\n"
    grade = CodeGrader.from_options({}).grade(_row(hog, "0\n", "pypy", memory_mb=1024))
    assert grade.passed is False and grade.subscores.get("memory_limit") == 1.0, grade.subscores


DEEP_C = """\
#include <stdio.h>
static long depth(long n, volatile char *up) {
    volatile char pad[64];  /* read after the call: the frame stays, 4 million of them */
    pad[1] = 0;
    pad[0] = up[0];
    if (n == 0) return 0;
    long below = depth(n - 1, pad);
    return below + 1 + pad[1];
}
int main(void) { char top[1] = {0}; printf("%ld\\n", depth(4000000, top)); return 0; }
"""


THREAD = """\
import threading
thread = threading.Thread(target=lambda: print(1))
thread.start()
thread.join()
"""


def test_a_row_may_give_the_stack_judges_give():
    """problemtools and BAPCtools run a program with no stack limit, Kattis bounds it by the
    memory limit only; a package's row says so (``"stack_mb": "unlimited"``). A C program
    recursing 4 million deep (over 256 MB of stack, the grader's default) crashes at the
    default and passes so, and a thread still starts: a stack limit as large as the memory
    limit would make every new thread reserve that much (glibc sizes them by it)."""
    reference = {"language": "c", "stdio": [{"stdin": "", "stdout": "4000000\n"}]}
    row = {"response": f"```c\n{DEEP_C}```\n", "reference": {**reference, "memory_mb": 1024}}
    grader = CodeGrader.from_options({"feedback": "full"})
    assert grader.grade(row).subscores.get("runtime_error") == 1.0
    row["reference"]["stack_mb"] = "unlimited"
    grade = grader.grade(row)
    assert grade.passed, grade.explanation
    threads = _row(THREAD, "1\n", memory_mb=1024, stack_mb="unlimited")
    assert grader.grade(threads).passed
    threads["reference"]["stack_mb"] = 1024
    assert "can't start new thread" in grader.grade(threads).explanation


def test_unknown_validator_flags_make_the_row_an_error_not_a_zero():
    row = _row("print(1)\n", "1\n", compare="kattis", validator_flags="float_tolerance x")
    grade = CodeGrader.from_options({}).grade(row)
    assert grade.error and "float_tolerance" in grade.error and "bad_reference" in grade.flags


KATTIS_VALIDATOR = """\
import sys
answer = open(sys.argv[2]).read().split()
output = sys.stdin.read().split()
with open(sys.argv[3] + "judgemessage.txt", "w") as f:
    f.write("checked")
sys.exit(42 if sorted(output) == sorted(answer) else 43)
"""


def test_a_kattis_output_validator_reads_the_output_on_stdin_and_answers_42_or_43():
    checker = {"language": "python", "source": KATTIS_VALIDATOR, "protocol": "kattis"}
    row = _row("print(2, 1)\n", "1 2\n", checker=checker)
    grader = CodeGrader.from_options({})
    assert grader.grade(row).passed, grader.grade(row).explanation
    wrong = grader.grade(_row("print(2, 2)\n", "1 2\n", checker=checker))
    assert wrong.passed is False and wrong.error is None and "wrong_answer" in wrong.flags


def test_without_a_budget_every_test_runs_to_its_own_limit():
    """No ``program_timeout_s``: two tests that spin through their 3 s of CPU time each are
    both ``time_limit`` (a 30 s budget would have served them too, 20 such tests not), and the
    engine's hard deadline is sized from the row's limits, above what its tests can take."""
    loop = "while True:\n    pass\n"
    tests = [{"stdin": "", "stdout": "1\n"}] * 2
    row = {
        "response": f"```python\n{loop}```\n",
        "reference": {"language": "python", "time_limit_s": 3, "stdio": tests},
    }
    grader = CodeGrader.from_options({})
    grade = grader.grade(row)
    assert grade.subscores.get("time_limit") == 2.0, grade.subscores
    many = {"language": "python", "time_limit_s": 5, "stdio": [{"stdin": "", "stdout": ""}] * 20}
    kernel = grader.kernel()
    payload = {"tests": many, "response": "", "prompt": None, "language": None}
    assert grader.batch_timeout_s(kernel, [payload]) > 20 * (3 * 5 + 2)
    set_by_user = CodeGrader.from_options({"timeout_s": 50})
    assert set_by_user.batch_timeout_s(set_by_user.kernel(), [payload]) == 50
