"""Test specs: three forms, JSON strings accepted, every malformed one refused with a reason."""

from __future__ import annotations

import json

import pytest

from truegrade.graders.code import SpecProblem, parse_spec


def test_the_three_forms_parse():
    check = parse_spec({"entry_point": "f", "check": "def check(candidate):\n    pass\n"})
    assert (check.kind, check.test_names) == ("check", ["check"])
    cases = parse_spec(
        {
            "entry_point": "f",
            "cases": [
                {"args": [1], "expected": 2},
                {"kwargs": {"x": 1}, "expected": 3, "visible": True},
            ],
        }
    )
    assert cases.test_names == ["case_0", "case_1"]
    assert cases.cases[1].kwargs == {"x": 1}
    assert cases.cases[1].visible
    stdio = parse_spec(json.dumps({"stdio": [{"stdin": "1", "stdout": "2"}, {"stdout": ""}]}))
    assert stdio.test_names == ["stdio_0", "stdio_1"]
    assert stdio.stdio[1].stdin == ""


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (None, "must be a mapping"),
        ("not json", "not JSON"),
        ({}, "exactly one of"),
        ({"check": "x", "cases": [], "entry_point": "f"}, "exactly one of"),
        ({"check": "x"}, "'entry_point' must be a string"),
        ({"check": "x", "entry_point": "not an identifier"}, "not a Python identifier"),
        ({"entry_point": "f", "cases": []}, "non-empty list"),
        ({"entry_point": "f", "cases": [{"args": [1]}]}, "no 'expected'"),
        ({"entry_point": "f", "cases": [{"args": 1, "expected": 1}]}, "'args' must be a list"),
        ({"entry_point": "f", "cases": [{"expected": 1, "extra": 2}]}, "unknown keys"),
        ({"stdio": [{"stdin": "x"}]}, "'stdout' must be a string"),
        ({"stdio": "x"}, "non-empty list"),
    ],
)
def test_malformed_specs_are_refused_with_a_reason(spec, message):
    with pytest.raises(SpecProblem, match=message):
        parse_spec(spec)
