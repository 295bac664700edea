"""Per-test limits are CPU time, as judges measure it, so a loaded machine does not change a
verdict: the same programs get the same verdicts on an idle machine and on one running twice its
cores in other work (a load generator started here; no timing is asserted). A program that
waits instead of computing is stopped by the wall-clock backstop and named ``idle_limit``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.graders.code.test_languages import DISPATCH
from tests.graders.code.toolchains import each_language
from truegrade.graders.code import CodeGrader

PYTHON = """\
import sys, time
what = sys.stdin.read().split()[0]
if what == "work":  # about a fifth of a second of CPU time
    print(sum(range(5_000_000)) % 7)
elif what == "spin":
    while True:
        pass
elif what == "sleep":
    time.sleep(600)
"""


@contextmanager
def machine_load(factor: int = 2) -> Iterator[int]:
    """``factor`` times the machine's cores in busy processes, for as long as the block runs."""
    count = factor * (os.cpu_count() or 1)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield count
    finally:
        for proc in busy:
            proc.kill()
        for proc in busy:
            proc.wait()


def _verdicts(grade) -> list[str]:
    return [v for _, v in re.findall(r"\b(stdio_\d+) ([a-z_]+)\b", grade.explanation)]


def _grade(language: str, source: str, plan: list[tuple[str, str, str]]):
    spec = {
        "language": language,
        "time_limit_s": 1.5,
        "memory_mb": 128,
        "stdio": [{"stdin": i + "\n", "stdout": o} for i, o, _ in plan],
    }
    grader = CodeGrader.from_options({"feedback": "full"})  # the reasons are tested too
    grade = grader.grade({"response": f"```{language}\n{source}```", "reference": spec})
    assert grade.error is None, grade.error
    return grade


CASES = {
    "python": (
        PYTHON,
        [
            ("work", str(sum(range(5_000_000)) % 7), "accepted"),
            ("spin", "0", "time_limit"),
            ("sleep", "0", "idle_limit"),
            ("work", str(sum(range(5_000_000)) % 7), "accepted"),
        ],
    ),
    "cpp": (
        DISPATCH["cpp"],
        [
            ("add 1 2", "3", "accepted"),
            ("slow", "0", "time_limit"),
            ("memory", "1", "memory_limit"),
        ],
    ),
    "javascript": (
        DISPATCH["javascript"],
        [
            ("add 1 2", "3", "accepted"),
            ("memory", "1", "memory_limit"),
            ("slow", "0", "time_limit"),
        ],
    ),
}


@pytest.mark.parametrize("language", each_language(*CASES))
def test_verdicts_do_not_change_with_the_machines_load(language):
    source, plan = CASES[language]
    want = [w for _, _, w in plan]
    idle = _grade(language, source, plan)
    assert _verdicts(idle) == want, idle.explanation
    with machine_load(2):
        loaded = _grade(language, source, plan)
    assert _verdicts(loaded) == want, loaded.explanation


@pytest.mark.parametrize("language", each_language("python"))
def test_a_program_that_waits_is_idle_limit_and_says_how_little_cpu_it_used(language):
    grade = _grade(language, PYTHON, [("sleep", "0", "idle_limit")])
    assert grade.flags == ["idle_limit"]
    assert "wall-clock time (the backstop)" in grade.explanation
    assert re.search(r"only 0\.\d\d s of its 1\.5 s of CPU time", grade.explanation)


@pytest.mark.parametrize("language", each_language("python"))
def test_plain_python_programs_follow_the_same_rule(language):
    """A row with no language runs in the sandbox's own interpreter: the same CPU-time limit,
    the same backstop."""
    spec = {
        "time_limit_s": 1.5,
        "stdio": [{"stdin": w + "\n", "stdout": "0"} for w in ("spin", "sleep")],
    }
    grade = CodeGrader.from_options({}).grade(
        {"response": f"```python\n{PYTHON}```", "reference": spec}
    )
    assert grade.error is None and grade.passed is False
    assert set(grade.flags) == {"timeout", "idle_limit"}, grade.explanation


# Each attack does a fixed amount of CPU work (not a number of steps, which a fast machine
# finishes inside the limit, nor a wall-clock window, which a loaded one fills with less).
SPREAD = """\
import os, time
workers = []
for _ in range(6):  # each child stays under any per-process limit; together they do not
    pid = os.fork()
    if pid == 0:
        while time.process_time() < 0.3:  # 6 x 0.3 s: 1.8 s in all, past the 1 s limit
            pass
        os._exit(0)
    workers.append(pid)
for pid in workers:
    os.waitpid(pid, 0)  # reaped here: their time is in this process's children, not its clock
print(0)
"""

DETACHED = """\
import os, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()  # leave the process group, and spin where the parent's clock cannot see
    if os.fork() == 0:
        while time.process_time() < 1.5:
            pass
        os.write(w, b"x")
        os._exit(0)
    os._exit(0)
os.close(w)
os.read(r, 1)  # the parent only waits (no CPU time) until the spinner is done
print(0)
"""


@pytest.mark.parametrize("language", each_language("python"))
def test_cpu_time_spread_over_children_or_hidden_in_a_detached_one_still_counts(language):
    """Attacks on the CPU-time limit: work spread over children that the program reaps itself
    (each one's own clock stays low; the run finishes well inside the wall-clock backstop), and
    a detached grandchild that spins while the main process only sleeps. Both used more than
    the 1 s limit; neither is accepted nor taken for a program that waited."""
    spec = {"language": language, "time_limit_s": 1, "stdio": [{"stdin": "", "stdout": "0\\n"}]}
    grader = CodeGrader.from_options({})
    for attack in (SPREAD, DETACHED):
        grade = grader.grade({"response": f"```python\n{attack}```", "reference": spec})
        assert grade.error is None and grade.passed is False, grade.explanation
        assert grade.flags == ["timeout"], grade.explanation  # time_limit, not idle_limit
