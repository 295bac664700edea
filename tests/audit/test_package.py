"""The audit of problem packages: labelled submissions judged as a judge judges them, on real
packages, a package planted with a wrong label and a validator that accepts anything, and one
whose Python submission holds only in the interpreter it was made with."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.data.packages_cases import IN_THE_AUDITS_TESTS
from truegrade.audit._package import check_package
from truegrade.graders.code._package import read_package

PACKAGES = Path(__file__).parents[1] / "data" / "packages"


@pytest.mark.parametrize(
    "name", ["problemtools-hello", "problemtools-different", "domjudge-fltcmp"]
)
def test_every_labelled_submission_of_a_real_package_gets_its_verdict(name):
    check = check_package(read_package(PACKAGES / name))
    assert check.disagreements == [], [(c.id, c.verdict, c.reason) for c in check.disagreements]
    assert check.agreed == len(check.submissions) == IN_THE_AUDITS_TESTS[name]
    assert check.validator == []


def test_a_package_without_a_time_limit_gets_the_judges_derived_one():
    check = check_package(read_package(PACKAGES / "problemtools-hello"))
    # hello_alarm.c spins until a wall-clock alarm at 1 s: its CPU time is about a second on an
    # idle machine and whatever share of that second it got on a busy one (a package's own
    # submission; problemtools derives the same way). The rule is what is checked: times 5,
    # rounded up to whole seconds
    assert check.derived_from_s is not None and 0.05 < check.derived_from_s < 1.6
    assert check.time_limit_s == max(1.0, float(int(check.derived_from_s * 5 + 0.999999)))


def test_submissions_yaml_expectations_are_what_is_checked():
    check = check_package(read_package(PACKAGES / "bapctools-testexpectations"))
    verdicts = {c.id.split("submissions/")[1]: (c.verdict, c.agrees) for c in check.submissions}
    assert verdicts["accepted/wa.py"] == ("wrong_answer", True)
    assert verdicts["match/match_wa.py"] == ("accepted", True)
    assert check.disagreements == []
    assert {c.id.split("submissions/")[1] for c in check.unknown_labels} >= {"wa/odd.py"}


LENIENT = """\
import sys
sys.exit(42)
"""


def test_a_wrong_label_and_a_validator_that_accepts_anything_are_found(tmp_path):
    package = tmp_path / "planted"
    shutil.copytree(PACKAGES / "problemtools-hello", package)
    (package / "submissions" / "accepted" / "liar.py").write_text("print('Hello World')\n")
    found = check_package(read_package(package), time_limit_s=2)
    liar = [c for c in found.disagreements if c.id.endswith("liar.py")]
    assert liar and liar[0].verdict == "wrong_answer" and liar[0].label == "accepted"
    assert found.validator == []
    validator = package / "output_validators" / "lenient"
    validator.mkdir(parents=True)
    (validator / "validate.py").write_text(LENIENT)
    (package / "problem.yaml").write_text("name: planted\nvalidation: custom\n")
    lenient = check_package(read_package(package), time_limit_s=2)
    assert {flag for flag, _ in lenient.validator} >= {"accepts_any_output"}
    wrong = [c for c in lenient.submissions if c.label == "wrong_answer"]
    assert wrong and not wrong[0].agrees and wrong[0].verdict == "accepted"


LOOP = """\
total = 0
for i in range(60_000_000):
    total += i & 7
print(total % 10)
"""


def test_a_python_submission_may_hold_in_the_interpreter_the_package_was_made_with(tmp_path):
    """A package made when judges ran Python 3 in CPython labels a pure-Python loop
    ``time_limit_exceeded``; PyPy runs it in a fraction of the limit. It agrees "under CPython",
    where it runs past the limit; one that fails in both interpreters still disagrees."""
    package = tmp_path / "loop"
    (package / "data" / "secret").mkdir(parents=True)
    (package / "data" / "secret" / "1.in").write_text("")
    (package / "data" / "secret" / "1.ans").write_text("4\n")
    (package / "problem.yaml").write_text("name: loop\n")
    (package / ".timelimit").write_text("1\n")
    for label, name, source in (
        ("accepted", "fast.py", "print(4)\n"),
        ("time_limit_exceeded", "loop.py", LOOP),
        ("time_limit_exceeded", "wrong.py", "print(5)\n"),
    ):
        (package / "submissions" / label).mkdir(parents=True, exist_ok=True)
        (package / "submissions" / label / name).write_text(source)
    check = check_package(read_package(package))
    how = {c.id.split("submissions/")[1]: (c.verdict, c.agrees, c.how) for c in check.submissions}
    assert how["accepted/fast.py"] == ("accepted", True, "")
    assert how["time_limit_exceeded/loop.py"] == ("time_limit", True, "under CPython")
    assert how["time_limit_exceeded/wrong.py"] == ("wrong_answer", False, "")
