"""Problem packages read as they are published (``tests/data/packages``, real packages of
problemtools, DOMjudge, BAPCtools and the Rocky Mountain regional, with their licences)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from truegrade.graders.code import parse_spec
from truegrade.graders.code._package import (
    LABEL_VERDICTS,
    PackageProblem,
    read_package,
    time_limit_from,
)

PACKAGES = Path(__file__).parents[2] / "data" / "packages"


def test_a_legacy_package_with_the_default_validator():
    hello = read_package(PACKAGES / "problemtools-hello")
    assert hello.time_limit_s is None  # derived by judges from the accepted submissions
    assert (hello.time_multiplier, hello.safety_margin) == (5.0, 2.0)
    assert hello.memory_mb == 512 and hello.output_mb == 8
    assert hello.checker is None
    assert [t["stdout"] for t in hello.tests] == ["Hello World!\n"]
    spec = hello.spec(2.0)
    assert spec["compare"] == "kattis" and spec["time_limit_s"] == 2.0
    parse_spec({**spec, "language": "cpp"})  # the grader reads it
    labels = {(s.label, s.language) for s in hello.submissions}
    assert ("run_time_error", "cpp") in labels and ("accepted", "rust") in labels
    assert ("accepted", "pypy") in labels  # Python 3 runs in PyPy, as on Kattis
    cpython = read_package(PACKAGES / "problemtools-hello", python="python")
    assert ("accepted", "python") in {(s.label, s.language) for s in cpython.submissions}


def test_a_custom_validator_becomes_a_kattis_protocol_checker_with_its_header():
    different = read_package(PACKAGES / "problemtools-different")
    checker = different.checker
    assert checker is not None and checker["protocol"] == "kattis"
    assert checker["language"] == "cpp" and "validate.h" in checker["files"]
    assert different.safety_margin == 4.0  # the package's own
    samples = [t for t in different.tests if t["visible"]]
    assert samples and different.tests[: len(samples)] == samples  # samples first
    py2 = [s for s in different.left_out if s.path.endswith("different_py2.py")]
    assert py2 and "Python 2" in py2[0].note


def test_stated_limits_and_flags_are_read():
    fltcmp = read_package(PACKAGES / "domjudge-fltcmp")
    assert fltcmp.time_limit_s == 5.0  # its .timelimit file
    assert "float" in fltcmp.validator_flags


@pytest.mark.parametrize("name", ["problemtools-oddecho", "domjudge-addone"])
def test_scoring_problems_are_refused_with_the_reason(name):
    with pytest.raises(PackageProblem, match="scoring"):
        read_package(PACKAGES / name)


def test_an_interactive_problem_and_a_directory_that_is_none_are_refused(tmp_path):
    shutil.copytree(PACKAGES / "problemtools-hello", tmp_path / "guess")
    (tmp_path / "guess" / "problem.yaml").write_text("validation: custom interactive\n")
    with pytest.raises(PackageProblem, match="interactive"):
        read_package(tmp_path / "guess")
    with pytest.raises(PackageProblem, match=r"problem\.yaml"):
        read_package(tmp_path)
    (tmp_path / "guess" / "problem.yaml").write_text("limits: [1\n")
    with pytest.raises(PackageProblem, match="not YAML"):
        read_package(tmp_path / "guess")


def test_submissions_yaml_says_what_each_submission_may_get():
    package = read_package(PACKAGES / "bapctools-testexpectations")
    by_path = {s.path.removeprefix("submissions/"): s.verdicts for s in package.submissions}
    assert by_path["accepted/wa.py"] == {"wrong_answer"}  # the file overrides the label
    assert by_path["ac_or_wa/wa.py"] == {"wrong_answer"}  # a file's key narrows its folder's
    assert by_path["ac_or_wa/ac.py"] == {"accepted"}
    assert by_path["expansion/ac.cpp"] == {"accepted"}  # brace expansion
    assert by_path["match/match_wa.py"] == {"accepted"}  # keys match whole names only
    assert by_path["wa/odd.py"] == frozenset()  # said per test group: not counted


def test_a_test_groups_flags_are_read_as_judges_read_them(tmp_path):
    """The 2025-09 format sets the validator's flags in ``data/test_group.yaml``
    (``output_validator_args``, a list), the legacy one may add some in a group's
    ``testdata.yaml`` (``output_validator_flags``, after ``problem.yaml``'s, as problemtools
    passes them); a group inherits its parent's unless it sets its own."""
    fltcmp = read_package(PACKAGES / "bapctools-fltcmp")
    assert fltcmp.validator_flags == "float_tolerance 1E-6"
    assert all("validator_flags" not in t for t in fltcmp.spec(1.0)["stdio"])  # all the same
    package = tmp_path / "groups"
    shutil.copytree(PACKAGES / "problemtools-hello", package)
    (package / "problem.yaml").write_text("name: groups\nvalidator_flags: case_sensitive\n")
    secret = package / "data" / "secret"
    (secret / "hello.in").rename(secret / "a.in")
    (secret / "hello.ans").rename(secret / "a.ans")
    for group in ("g1", "g1/inner", "g2"):
        (secret / group).mkdir()
        (secret / group / "t.in").write_text("")
        (secret / group / "t.ans").write_text("Hello World!\n")
    (package / "data" / "testdata.yaml").write_text("output_validator_flags: float_tolerance 1\n")
    (secret / "g2" / "testdata.yaml").write_text("output_validator_flags: ''\n")
    flags = {t["name"]: t["validator_flags"] for t in read_package(package).tests}
    assert flags == {
        "secret/a": "case_sensitive float_tolerance 1",
        "secret/g1/inner/t": "case_sensitive float_tolerance 1",  # inherited from data/
        "secret/g1/t": "case_sensitive float_tolerance 1",
        "secret/g2/t": "case_sensitive",  # its own: none
    }
    spec = read_package(package).spec(1.0)
    assert spec["validator_flags"] == "case_sensitive"
    assert [t.get("validator_flags") for t in spec["stdio"]] == [
        "case_sensitive float_tolerance 1",
        "case_sensitive float_tolerance 1",
        "case_sensitive float_tolerance 1",
        None,
    ]
    parse_spec({**spec, "language": "c"})
    assert spec["stack_mb"] == "unlimited"  # as problemtools and BAPCtools run programs


def test_the_time_limit_judges_derive():
    assert time_limit_from(0.09, 5.0) == 1.0
    assert time_limit_from(0.98, 5.0) == 5.0
    assert time_limit_from(1.01, 2.0) == 3.0


def test_labels_stand_for_the_verdicts_judges_give_them():
    names = LABEL_VERDICTS
    assert names["time_limit_exceeded"] >= {"time_limit", "idle_limit"}
    assert "memory_limit" in names["run_time_error"]
