"""The equivalence-test extractors read assertions and tables from source, never running it."""

from __future__ import annotations

import textwrap

from tests.external.extract_equivalence_tests import cases_of
from tests.external.extract_lighteval import select
from tests.external.extract_math_verify import cases_of as compare_cases

UNITTEST = textwrap.dedent(
    """
    class TestIsEquiv(unittest.TestCase):
        def test_pairs(self):
            verbose = False
            test_in = "1/2"
            test_out = "\\\\frac12"
            self.assertTrue(_test_is_equiv(test_in, test_out, verbose=verbose))
            test_out = "0.4"
            self.assertFalse(is_equiv(test_in, test_out))
            pairs = [("10cm", "10"), ("10m", "10")]
            for test_in, test_out in pairs:
                self.assertFalse(_test_is_not_equiv(test_in, test_out))
            self.assertTrue(other_check(test_in, test_out))

        def helper(self):
            self.assertTrue(is_equiv("1", "1"))
    """
)

TABLE = textwrap.dedent(
    """
    @pytest.mark.parametrize("output_pair", [(5, 5.0), (5 / 2, "\\\\frac{5}{2}"), (0, None)])
    def test_correct(output_pair):
        assert math_equal(output_pair[0], output_pair[1]) is True
        assert math_equal(output_pair[1], output_pair[0]) is True

    @pytest.mark.parametrize("raw, expected", [("033", "33")])
    def test_not_a_verdict(raw, expected):
        assert canonical(raw) == expected
    """
)


def test_unittest_assertions_follow_the_names_bound_before_them():
    cases = cases_of(UNITTEST, "t.py", "o/r", "0" * 40, ("is_equiv", "_test_is_equiv"))
    got = [(c["gold"], c["pred"], c["expected"], c["source"]["check"]) for c in cases]
    assert got == [("1/2", "\\frac12", True, "_test_is_equiv"), ("1/2", "0.4", False, "is_equiv")]
    cases = cases_of(UNITTEST, "t.py", "o/r", "0" * 40, ("is_equiv", "_test_is_not_equiv"))
    assert [(c["gold"], c["expected"]) for c in cases] == [
        ("1/2", False),
        ("10cm", False),
        ("10m", False),
    ]


def test_table_rows_become_cases_in_both_orders_and_none_is_left_out():
    cases = cases_of(TABLE, "t.py", "o/r", "0" * 40, ())
    got = [(c["gold"], c["pred"], c["expected"], c["source"]["order"]) for c in cases]
    assert got == [
        ("5", "5.0", True, "as written"),
        ("5.0", "5", True, "reversed"),
        ("2.5", "\\frac{5}{2}", True, "as written"),
        ("\\frac{5}{2}", "2.5", True, "reversed"),
    ]


def test_lighteval_languages_are_names_and_known_or_letter_cases_are_left_out():
    source = textwrap.dedent(
        """
        @pytest.mark.parametrize(
            "gold,pred,language,expected",
            [("1", "réponse 1", Language.FRENCH, 1), ("2", "2", Language.ENGLISH, 1)],
        )
        def test_lang(gold, pred, language, expected):
            assert compare_strings(gold, pred, language, match_types=["latex"]) == expected

        @pytest.mark.parametrize("gold,pred,expected", [("C", "C", 1)])
        def test_letters(gold, pred, expected):
            assert compare_strings(gold, pred, match_types=["NativeLetters"]) == expected
        """
    )
    cases = compare_cases(source, "t.py", "0" * 40, "huggingface/lighteval")
    assert [c["options"].get("language") for c in cases] == ["FRENCH", "ENGLISH", None]
    kept, letters, shared = select(cases, {("2", "2", True)})
    assert [c["pred"] for c in kept] == ["réponse 1"] and (letters, shared) == (1, 1)
    assert kept[0]["source"]["repo"] == "huggingface/lighteval"
