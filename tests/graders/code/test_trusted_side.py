"""The trusted side on hostile program data: every comparison, decode and message the harness
makes of what a program sent must end in a verdict, a fail with a flag, never an exception (an
error, which a trainer skips, so a program could choose one) and never a long stall."""

from __future__ import annotations

import pytest

from truegrade.graders.code import CodeGrader


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options({"call_timeout_s": 5, "program_timeout_s": 30})


def _cases_row(response: str, cases: list, **spec) -> dict:
    return {"response": response, "reference": {"entry_point": "f", "cases": cases, **spec}}


def _failed(grade, flag: str) -> None:
    assert grade.error is None, grade.error
    assert grade.passed is False, grade.explanation
    assert grade.flags[0] == flag, (grade.flags, grade.explanation)


def _forger(value: str) -> str:
    """A program that writes its own, correctly numbered, result record on the response pipe,
    holding ``value`` (JSON text built by the program), and then returns."""
    return (
        "import json, os, struct, sys\n"
        "def f():\n"
        "    frame = sys._getframe(1)\n"
        "    while 'answered' not in frame.f_locals:\n"
        "        frame = frame.f_back\n"
        f"    value = {value}\n"
        "    record = json.dumps({'status': 'ok', 'value': value,\n"
        "                         'call': frame.f_locals['answered']})\n"
        "    data = record.encode()\n"
        "    os.write(4, struct.pack('>I', len(data)) + data)\n"
        "    return 0\n"
    )


# -- records the codec cannot rebuild -------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "{'c': [10**400, 0]}",  # complex() of an int past any float: OverflowError
        "{'c': [0, -10**400]}",
        "{'t': [1, {'c': [10**400, 0]}]}",  # nested
        "{'b': 'caf\\u00e9'}",  # not ASCII base64
        "{'i': 'xyz'}",
    ],
)
def test_a_forged_record_the_codec_cannot_rebuild_is_a_fail(grader, value):
    grade = grader.grade(_cases_row(_forger(value), [{"args": [], "expected": 1}]))
    _failed(grade, "not_plain_data")
