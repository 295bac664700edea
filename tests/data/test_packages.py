"""Real problem packages checked as a judge checks them (``packages_cases``): the BAPCtools and
Rocky Mountain 2018-2020 ones (BAPCtools' ``fltcmp`` sets its float tolerance in
``data/test_group.yaml``); the corpus is covered whole, and agrees at 98% or more."""

from __future__ import annotations

import pytest

from tests.data.packages_cases import (
    EXPLAINED,
    IN_THE_AUDITS_TESTS,
    JUDGED,
    PACKAGES,
    REFUSED,
    checked,
)

NAMES = sorted(n for n in JUDGED if not n.startswith("rmrc2022"))


def test_every_package_of_the_corpus_is_checked_somewhere():
    present = {p.name for p in PACKAGES.iterdir() if (p / "problem.yaml").is_file()}
    assert present == set(JUDGED) | set(IN_THE_AUDITS_TESTS) | REFUSED
    # each package's test asserts how many it judges and that only the explained ones disagree
    judged = sum(JUDGED.values()) + sum(IN_THE_AUDITS_TESTS.values())
    assert (judged - len(EXPLAINED)) / judged >= 0.98


@pytest.mark.parametrize("name", NAMES)
def test_a_package_agrees_with_its_labels(name):
    checked(name)
