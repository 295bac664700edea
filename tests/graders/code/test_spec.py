"""Test specs: three forms, JSON strings accepted, every malformed one refused with a reason."""

from __future__ import annotations

import json

import pytest

from truegrade.graders.code import SpecProblem, parse_spec


def test_call_cases_may_leave_their_expected_values_to_a_reference_program():
    reference = "def f(x):\n    return x\n"
    spec = parse_spec(
        {
            "entry_point": "f",
            "expected_from": reference,
            "cases": [{"args": [1]}, {"args": [2], "also": [3]}],
            "compare": "set",
            "abs_tol": 1e-6,
            "rel_tol": 0,
        }
    )
    assert spec.expected_from == (reference,)
    assert [c.expected for c in spec.cases] == [None, None]
    assert (spec.compare, spec.abs_tol, spec.rel_tol) == ("set", 1e-6, 0.0)
    several = parse_spec({"entry_point": "f", "expected_from": [reference] * 2, "cases": [{}]})
    assert several.expected_from == (reference, reference)
    plain = parse_spec({"entry_point": "f", "cases": [{"expected": 1}]})
    assert (plain.expected_from, plain.abs_tol, plain.compare) == ((), None, None)


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
        (
            {
                "entry_point": "f",
                "expected_from": "def f():\n    return 1\n",
                "cases": [{"args": [], "expected": 1}],
            },
            "'expected_from' computes them all",
        ),
        ({"entry_point": "f", "expected_from": ["", 1], "cases": [{}]}, "'expected_from' must be"),
        (
            {"entry_point": "f", "compare": "lines", "cases": [{"expected": 1}]},
            "equal, set, not_none",
        ),
        ({"entry_point": "f", "abs_tol": -1, "cases": [{"expected": 1}]}, "'abs_tol' must be"),
        ({"entry_point": "f", "rel_tol": "0.1", "cases": [{"expected": 1}]}, "'rel_tol' must be"),
        ({"stdio": [{"stdin": "x"}]}, "'stdout' must be a string"),
        ({"stdio": "x"}, "non-empty list"),
    ],
)
def test_malformed_specs_are_refused_with_a_reason(spec, message):
    with pytest.raises(SpecProblem, match=message):
        parse_spec(spec)
