"""Real problem packages checked as a judge checks them (``packages_cases``): the Rocky
Mountain 2022 ones (a file of their own, so the two halves of the corpus run side by side).
``profitabletrip`` has an 8 s limit that its Python submissions only meet under PyPy, as Kattis
runs them."""

from __future__ import annotations

import pytest

from tests.data.packages_cases import JUDGED, checked


@pytest.mark.parametrize("name", sorted(n for n in JUDGED if n.startswith("rmrc2022")))
def test_a_package_agrees_with_its_labels(name):
    checked(name)
