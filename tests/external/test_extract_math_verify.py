"""The case extractor reads test tables and assertions from source, never running it."""

from __future__ import annotations

import textwrap

import pytest

from tests.external.extract_math_verify import cases_of

SOURCE = textwrap.dedent(
    """
    import math
    import pytest

    @pytest.mark.parametrize(
        "gold,pred,expected,precision",
        [("$1$", "$1.0$", 1, 6), (f"{math.sqrt(4):.1f}", "$2$", 0, 2)],
    )
    def test_table(gold, pred, expected, precision):
        assert compare_strings(gold, pred, match_types=["latex"], precision=precision) == expected

    def test_body():
        assert compare_strings("$\\\\frac{1}{3}$", "0.3333$", precision=4) == 1
        assert sympy_expr_eq(1, 1)

    @pytest.mark.parametrize("pred,expected", [("A", ["a"])])
    def test_not_a_pair(pred, expected):
        pass

    def helper():
        assert compare_strings("$9$", "$9$") == 1
    """
)


def test_tables_and_literal_assertions_become_cases():
    cases = cases_of(SOURCE, "tests/test_x.py", "0" * 40)
    got = [(c["gold"], c["pred"], c["expected"], c["source"]["test"]) for c in cases]
    assert got == [
        ("$1$", "$1.0$", True, "test_table"),
        ("2.0", "$2$", False, "test_table"),  # an f-string over math, computed
        ("$\\frac{1}{3}$", "0.3333$", True, "test_body"),
    ]
    assert cases[0]["options"] == {"match_types": ["latex"], "precision": 6}
    assert cases[1]["options"]["precision"] == 2
    assert cases[2]["options"] == {"precision": 4}
    assert cases[0]["source"]["param_index"] == 0 and cases[2]["source"]["param_index"] is None


def test_anything_but_literals_is_refused():
    source = SOURCE.replace('"$1.0$"', "make_pred()")
    with pytest.raises(ValueError, match=r"^tests/test_x.py:7: not a literal case"):
        cases_of(source, "tests/test_x.py", "0" * 40)
