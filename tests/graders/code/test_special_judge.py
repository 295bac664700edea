"""Special judges that a program's output crashes or stalls: a fail of the program, flagged
``checker_failed``, never an error a trainer would skip. A judge that fails on a test's own
expected output is the dataset's fault: ``bad_reference``."""

from __future__ import annotations

import pytest

from truegrade.graders.code import CodeGrader, _stdio
from truegrade.graders.code._harness import CodeKernel
from truegrade.sandbox import Executable, SandboxConfig

# "Print a proper divisor of n." The checker divides by the program's number before it looks at
# it (SIGFPE on 0, or on output that is no number), and by the expected one (exit 3, testlib's
# "the jury is wrong", when it does not divide n).
DIVIDES = r"""#include <stdio.h>
int main(int argc, char **argv) {
    long n = 0, x = 0, a = 0;
    FILE *in = fopen(argv[1], "r"), *out = fopen(argv[2], "r"), *ans = fopen(argv[3], "r");
    if (fscanf(in, "%ld", &n) != 1) return 3;
    if (fscanf(out, "%ld", &x) != 1) x = 0;
    if (fscanf(ans, "%ld", &a) != 1) a = 0;
    if (n % a != 0) return 3;
    return n % x == 0 && x > 1 && x < n ? 0 : 1;
}
"""
TESTS = [{"stdin": "6\n", "stdout": "2\n"}, {"stdin": "15\n", "stdout": "3\n"}]
SMALLEST = "n = int(input())\nprint(next(d for d in range(2, n) if n % d == 0))\n"
needs_gcc = pytest.mark.system_tool("gcc", package="gcc")
needs_python = pytest.mark.system_tool("python3", package="python3")


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options(
        {"call_timeout_s": 2, "program_timeout_s": 60, "feedback": "full"}
    )


def _spec(tests=TESTS, source: str = DIVIDES, language: str = "c") -> dict:
    return {
        "language": "python",
        "stdio": tests,
        "checker": {"language": language, "source": source},
    }


def _grade(grader: CodeGrader, program: str, spec: dict):
    return grader.grade({"response": f"```python\n{program}```\n", "reference": spec})


@needs_gcc
@needs_python
def test_output_that_crashes_the_checker_fails_the_program_and_is_no_error(grader):
    honest = _grade(grader, SMALLEST, _spec())
    assert honest.passed and honest.error is None, honest.explanation
    for hostile in ("print(0)\n", "print('not a number')\n"):
        grade = _grade(grader, hostile, _spec())
        assert grade.passed is False and grade.error is None, grade.error
        assert grade.flags == ["checker_failed"]
        assert grade.subscores["wrong_answer"] == 2.0
        assert "SIGFPE" in grade.explanation
    # a test it crashes fails alone: the other tests are judged as ever
    mixed = _grade(grader, "n = int(input())\nprint(0 if n == 6 else 5)\n", _spec())
    assert mixed.error is None and mixed.score == 0.5
    assert mixed.subscores["stdio_0"] == 0.0 and mixed.subscores["stdio_1"] == 1.0


@needs_python
def test_output_that_stalls_the_checker_fails_the_program_and_is_no_error(grader):
    stalls = (
        "import sys\nout = open(sys.argv[2]).read().split()\n"
        "ans = open(sys.argv[3]).read().split()\n"
        "while out == ['-1']:\n    pass\n"
        "sys.exit(0 if out == ans else 1)\n"
    )
    spec = _spec([{"stdin": "4\n", "stdout": "4\n"}], stalls, "python")
    assert _grade(grader, "print(input())\n", spec).passed
    grade = _grade(grader, "print(-1)\n", spec)
    assert grade.passed is False and grade.error is None, grade.error
    assert grade.flags == ["checker_failed"]
    assert "CPU-time limit" in grade.explanation


@needs_gcc
@needs_python
def test_a_checker_that_fails_on_the_expected_output_is_a_bad_reference(grader):
    # its own expected output crashes it (it divides by 0), whatever the program prints
    zero = _spec([*TESTS, {"stdin": "8\n", "stdout": "0\n"}])
    # the spec requires every test's expected output; an empty one is the answer file as it is
    empty = _spec([*TESTS, {"stdin": "9\n", "stdout": ""}])
    for spec in (zero, empty):
        for program in (SMALLEST, "print(0)\n"):
            grade = _grade(grader, program, spec)
            assert grade.passed is None, grade.explanation
            assert set(grade.flags) == {"bad_reference", "checker_error"}
            assert "expected output of stdio_2" in grade.error and "SIGFPE" in grade.error
    broken = _grade(grader, SMALLEST, _spec(source="int main( {\n"))
    assert broken.passed is None and "bad_reference" in broken.flags
    assert "does not build" in broken.error


@needs_gcc
@needs_python
def test_the_expected_output_is_judged_once_per_checker_and_test(monkeypatch):
    kernel = CodeKernel(SandboxConfig(), call_timeout_s=2, program_timeout_s=30)
    judged: list[bytes] = []
    run = Executable.exec

    def counting(self, argv, stdin=b"", **kwargs):
        files = kwargs.get("files") or {}
        if files.get("output.txt") is not None and files["output.txt"] == files["answer.txt"]:
            judged.append(files["answer.txt"])
        return run(self, argv, stdin, **kwargs)

    monkeypatch.setattr(Executable, "exec", counting)
    monkeypatch.setattr(_stdio, "_JUDGED", type(_stdio._JUDGED)())
    payload = {"response": "```python\nprint(0)\n```", "prompt": None, "tests": _spec()}
    for _ in range(3):
        grade = kernel(payload)
        assert grade["passed"] is False and grade.get("error") is None
        assert grade["flags"] == ["checker_failed"]
    assert judged == [b"2\n", b"3\n"]  # each test's expected output, the first time only
