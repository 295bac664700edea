"""Conventions judges share for stdin/stdout tests: an output past the cap is its own verdict,
and tokens may be compared without case, as the Kattis and DOMjudge default validators do."""

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
    grader = CodeGrader.from_options({"call_timeout_s": 5, "output_bytes": 65536})
    flood = "import sys\nsys.stdout.write('x' * 200000)\n"
    grade = grader.grade(_row(flood, "x\n"))
    assert grade.error is None and grade.passed is False
    assert grade.subscores.get("output_limit") == 1.0, grade.subscores
    assert "output_limit" in grade.flags


def test_a_test_the_budget_leaves_no_time_for_is_budget_exhausted_not_time_limit():
    """Two tests with a 3 s limit each and a 1 s budget for the whole response: the first is
    stopped when the budget runs out, short of its limit, the second is never run. Neither
    reached its own limit, so neither is ``time_limit``."""
    grader = CodeGrader.from_options({"program_timeout_s": 1.0})
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
