"""Every real problem package in ``tests/data/packages`` checked as a judge checks it: at least
98% of the labelled submissions get their label's verdict, and the one that does not is the
one the docs explain (a 2018 submission calls ``fractions.gcd``, which Python removed in 3.9).
Java submissions are judged in the audit's own tests (they would double this test's time)."""

from __future__ import annotations

from pathlib import Path

from truegrade.audit._package import check_package
from truegrade.graders.code._package import PackageProblem, read_package

PACKAGES = Path(__file__).parent / "packages"
LANGUAGES = frozenset({"c", "cpp", "pypy", "go", "rust", "javascript"})
EXPLAINED = {
    "rmrc2018-forestforthetrees/submissions/accepted/trees-db.py": (
        "cannot import name 'gcd' from 'fractions'"
    )
}


def test_the_corpus_agrees_with_its_labels():
    checks, refused = [], []
    for path in sorted(p for p in PACKAGES.iterdir() if (p / "problem.yaml").is_file()):
        try:
            package = read_package(path)
        except PackageProblem as exc:
            refused.append(str(exc))
            continue
        checks.append(check_package(package, languages=LANGUAGES))
    assert len(refused) == 2 and all("scoring" in r for r in refused)  # oddecho, addone
    judged = [s for c in checks for s in c.submissions]
    agreed = [s for s in judged if s.agrees]
    assert len(judged) >= 60 and len(agreed) / len(judged) >= 0.98
    wrong = {s.id: s.reason for s in judged if not s.agrees}
    assert set(wrong) == set(EXPLAINED), wrong
    for sid, why in EXPLAINED.items():
        assert why in wrong[sid]
    assert not [c.package for c in checks if c.validator]
