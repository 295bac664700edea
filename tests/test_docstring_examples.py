"""The examples in the docstrings run, and say what the code does."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "truegrade.goodhart._adapters",
    "truegrade.goodhart._bon",
    "truegrade.goodhart._fit",
    "truegrade.goodhart._monitor",
    "truegrade.goodhart._overopt",
    "truegrade.goodhart._synthetic",
    "truegrade.graders.match._json",
    "truegrade.graders.repo._audit",
    "truegrade.graders.repo._patch",
    "truegrade.graders.repo._task",
    "truegrade.graders.reward_model._scale",
    "truegrade.graders.rubric._format",
    "truegrade.graders.rubric._grader",
    "truegrade.integrations.verl",
    "truegrade.rubric._aggregate",
    "truegrade.stats._agreement",
    "truegrade.stats._bootstrap",
    "truegrade.stats._inference",
    "truegrade.stats._mean",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
