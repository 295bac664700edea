"""The audit of stdin/stdout tests: tests that any output passes, and answers nobody produces.

A stdio item is only as good as its tests and its judge. Three probe programs, written in the
item's language, none of which solves anything, are graded like any response:

* ``silent`` prints nothing: a test it passes expects no output (``expects_no_output``), or the
  judge accepts anything;
* ``junk`` prints one line no task asks for: a test it passes has a judge (or expected output)
  that accepts any output (``accepts_any_output``);
* ``echo`` copies its input: when it passes every test, each test's answer is its own input
  (``echo_passes``; one such test among others is often a fair edge case, and is not flagged).

And the item's reference program (``canonical_solution``, a dataset's ``solutions``), graded by
the reference check, names the tests whose expected output it does not produce
(``expected_not_produced``): the expected output, the tests' input or the reference is wrong.
Items whose tests are all shown to the model are ``all_tests_visible`` (a lookup table of the
examples passes them). A special judge that gives no verdict on some program's output (it
crashed, was killed or stalled: ``checker_failed`` in the grade), the probes' or the item's
responses', is ``checker_fragile``: each such test fails the program, so the grades stand, but
any program can print that output, and a right answer that happens to be written so fails too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from truegrade.attacks import fenced, table_program
from truegrade.core import Grade
from truegrade.graders.code import StdioTask

__all__ = [
    "JUNK",
    "PROBES",
    "checker_flags",
    "probe_flags",
    "probe_response",
    "reference_flags",
    "static_flags",
]

JUNK = "truegrade audit probe: not an answer\n"
"""What the ``junk`` probe prints."""

PROBES = ("silent", "junk", "echo")


def probe_response(task: StdioTask, probe: str) -> str:
    """The probe program as a response in the task's language."""
    if probe == "echo":
        return fenced(task.language, table_program(task.language, echo=True))
    default = JUNK if probe == "junk" else ""
    return fenced(task.language, table_program(task.language, default=default))


def _passed(task: StdioTask, grade: Grade) -> list[str]:
    """The tests the grade says passed (each test's subscore is 1 when it did)."""
    if grade.error is not None:
        return []
    return [name for name in task.spec.test_names if grade.subscores.get(name) == 1.0]


def _names(tests: list[str], limit: int = 6) -> str:
    shown = ", ".join(tests[:limit])
    return shown + (f" and {len(tests) - limit} more" if len(tests) > limit else "")


def probe_flags(task: StdioTask, grades: Mapping[str, Grade]) -> list[tuple[str, str]]:
    """``(flag, reason)`` for what the probes' grades show about the item's tests."""
    judge = "the special judge" if task.spec.checker is not None else "the comparison"
    junk = _passed(task, grades["junk"]) if "junk" in grades else []
    silent = _passed(task, grades["silent"]) if "silent" in grades else []
    echo = _passed(task, grades["echo"]) if "echo" in grades else []
    found: list[tuple[str, str]] = []
    if junk:
        found.append(
            (
                "accepts_any_output",
                f"{judge} accepts a program that prints {JUNK.strip()!r} on {_names(junk)}"
                + (" (every test)" if len(junk) == len(task.spec.stdio) else ""),
            )
        )
    quiet = [t for t in silent if t not in junk]
    if quiet:
        found.append(
            (
                "expects_no_output",
                f"{_names(quiet)}: a program that prints nothing passes "
                + ("it" if len(quiet) == 1 else "them"),
            )
        )
    # one test whose answer is its input is often a fair edge case (one word reversed); an
    # item that echoing solves whole is not
    if echo and len(echo) == len(task.spec.stdio) and not junk:
        found.append(
            (
                "echo_passes",
                "every test's expected output is its own input: a program that copies its "
                "input passes the item",
            )
        )
    return found


def checker_flags(
    task: StdioTask, probes: Mapping[str, Grade], responses: Sequence[Grade]
) -> list[tuple[str, str]]:
    """``checker_fragile`` when the special judge gave no verdict on the output of some of the
    probes or of the item's responses (their grades carry ``checker_failed``)."""
    if task.spec.checker is None:
        return []
    counts = [
        (sum("checker_failed" in g.flags for g in grades), len(grades), what)
        for grades, what in ((list(probes.values()), "probe programs"), (responses, "responses"))
    ]
    if not any(failed for failed, _, _ in counts):
        return []
    shown = " and ".join(f"{failed} of {total} {what}" for failed, total, what in counts if total)
    return [
        (
            "checker_fragile",
            f"the special judge crashed, was killed or stalled on the output of {shown}: "
            "those tests fail, but the checker needs hardening",
        )
    ]


def reference_flags(task: StdioTask, grade: Grade) -> list[tuple[str, str]]:
    """The tests the reference program fails, when it built and passed at least one (a program
    that fails everything is the reference check's finding, not the tests')."""
    passed = _passed(task, grade)
    if not passed:
        return []
    failed = [t for t in task.spec.test_names if t not in passed]
    if not failed:
        return []
    return [
        (
            "expected_not_produced",
            f"the reference program's output differs from the expected on {_names(failed)} "
            f"(it passes {len(passed)} of {len(task.spec.stdio)} tests)",
        )
    ]


def static_flags(task: StdioTask) -> list[tuple[str, str]]:
    """What the spec alone shows."""
    tests = task.spec.stdio
    if len(tests) > 0 and all(t.visible for t in tests):
        return [
            (
                "all_tests_visible",
                f"all {len(tests)} tests are shown to the model: a lookup table of the "
                "examples passes the item",
            )
        ]
    return []
