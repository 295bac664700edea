"""The real problem packages of ``tests/data/packages`` and what checking them must give: each
package's labelled submissions (Java left to the audit's own tests, to keep the suite's time)
get their label's verdict, but the one the docs explain (a 2018 submission calls
``fractions.gcd``, which Python removed in 3.9). With the audit's tests of hello, different,
fltcmp and testexpectations, every package of the corpus is checked: 88 of 89 labelled
submissions agree (docs/code.md)."""

from __future__ import annotations

from pathlib import Path

from truegrade.audit._package import PackageCheck, check_package
from truegrade.graders.code._package import read_package

PACKAGES = Path(__file__).parent / "packages"
LANGUAGES = frozenset({"c", "cpp", "pypy", "go", "rust", "javascript"})
JUDGED = {
    "bapctools-different": 8,
    "bapctools-fltcmp": 3,
    "rmrc2018-forestforthetrees": 4,
    "rmrc2018-qaly": 4,
    "rmrc2018-smallschedule": 5,
    "rmrc2020-stopwatch": 3,
    "rmrc2022-blueberrywaffle": 6,
    "rmrc2022-champernownecount": 7,
    "rmrc2022-profitabletrip": 7,
}
"""The packages these tests check, with the submissions each judges (with an expectation)."""
IN_THE_AUDITS_TESTS = {  # each with the submissions it judges there (every language)
    "problemtools-hello": 7,
    "problemtools-different": 11,
    "domjudge-fltcmp": 3,
    "bapctools-testexpectations": 10,
}
REFUSED = {"problemtools-oddecho", "domjudge-addone"}  # scoring problems
EXPLAINED = {
    "rmrc2018-forestforthetrees/submissions/accepted/trees-db.py": (
        "cannot import name 'gcd' from 'fractions'"
    )
}


def checked(name: str) -> PackageCheck:
    """The package checked as the corpus test checks it, with its expectations asserted."""
    check = check_package(read_package(PACKAGES / name), languages=LANGUAGES)
    assert len(check.submissions) == JUDGED[name]
    wrong = {s.id: s.reason for s in check.disagreements}
    explained = {sid: why for sid, why in EXPLAINED.items() if sid.startswith(f"{name}/")}
    assert set(wrong) == set(explained), wrong
    for sid, why in explained.items():
        assert why in wrong[sid]
    assert check.validator == []
    return check
