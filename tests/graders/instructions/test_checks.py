"""The 25 IFEval checkers against IFEval's own verdicts.

``data/ifeval_sample.jsonl`` holds IFEval-format rows (``prompt``, ``instruction_id_list``,
``kwargs``) with a response each and the ``strict`` and ``loose`` verdicts that IFEval's rules
give, derived by hand from IFEval's source (google-research ``instruction_following_eval``:
``instructions.py`` for each checker, ``evaluation_lib.py`` for strict and loose); ``why`` says
which rule decides. The rows cover every instruction id, the cases where strict and loose
differ, and the quirks (substring keywords, ``don't`` as two words, ``I`` as a capital word).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from truegrade.graders.instructions import parse_constraints
from truegrade.graders.instructions._checks import CHECKERS, check, loose_variants
from truegrade.graders.instructions._text import (
    LanguageUnknown,
    capital_tokens,
    count_sentences,
    detect_language,
)

SAMPLE = Path(__file__).with_name("data") / "ifeval_sample.jsonl"
ROWS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def test_the_sample_covers_every_instruction_id_and_both_modes_differ_somewhere():
    used = {i for r in ROWS for i in r["instruction_id_list"]}
    assert used == set(CHECKERS) and len(CHECKERS) == 25
    assert any(r["strict"] != r["loose"] for r in ROWS)
    assert any(not all(r["strict"]) for r in ROWS) and any(all(r["strict"]) for r in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['key']}" for r in ROWS])
@pytest.mark.parametrize("mode", ["strict", "loose"])
def test_verdicts_agree_with_ifeval(row, mode):
    constraints = parse_constraints(row["instruction_id_list"], row["kwargs"])
    got = [check(c, row["response"], mode) for c in constraints]
    assert got == row[mode], row["why"]


def test_loose_variants_are_ifevals_eight():
    variants = loose_variants("*a*\nb\n*c*")
    assert variants == ["*a*\nb\n*c*", "a\nb\nc", "b\n*c*", "*a*\nb", "b", "b\nc", "a\nb", "b"]


def test_huggingface_rows_with_null_arguments_and_float_integers_are_read():
    # HF's IFEval fills every argument slot with null; Parquet turns gappy ints into floats
    kwargs = [{"num_words": 3.0, "relation": "at least", "keyword": None, "frequency": None}]
    (c,) = parse_constraints(["length_constraints:number_words"], kwargs)
    assert c.kwargs == {"num_words": 3, "relation": "at least"}
    assert check(c, "one two three") and not check(c, "one two")


@pytest.mark.parametrize(
    ("ids", "kwargs", "message"),
    [
        (["punctuation:no_coma"], [{}], "did you mean 'punctuation:no_comma'"),
        (
            ["length_constraints:number_words"],
            [{"num_words": 5}],
            "missing argument(s) ['relation']",
        ),
        (
            ["length_constraints:number_words"],
            [{"num_words": 5, "relation": "at most"}],
            "'less than' or 'at least'",
        ),
        (["punctuation:no_comma"], [{"x": 1}], "unknown argument(s) ['x']"),
        (
            ["keywords:letter_frequency"],
            [{"letter": "ab", "let_frequency": 1, "let_relation": "at least"}],
            "single character",
        ),
        (
            ["punctuation:no_comma", "detectable_format:title"],
            [{}],
            "one object per instruction id",
        ),
        ([], [], "non-empty list"),
        (
            ["length_constraints:number_words"],
            [{"num_words": True, "relation": "at least"}],
            "boolean",
        ),
        (
            ["length_constraints:nth_paragraph_first_word"],
            [{"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "so"}],
            "between 1 and num_paragraphs",
        ),
    ],
)
def test_malformed_constraints_name_the_problem(ids, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_constraints(ids, kwargs)


def test_repeated_ids_get_distinct_labels():
    cs = parse_constraints(
        ["change_case:capital_word_frequency"] * 2,
        [
            {"capital_relation": "less than", "capital_frequency": 10},
            {"capital_relation": "at least", "capital_frequency": 1},
        ],
    )
    assert [c.label for c in cs] == [
        "change_case:capital_word_frequency",
        "change_case:capital_word_frequency#2",
    ]


def test_keywords_are_literal_text_not_patterns():
    (c,) = parse_constraints(["keywords:existence"], [{"keywords": ["c++"]}])
    assert check(c, "I write c++ daily.") and not check(c, "I write cc daily.")


def test_capital_tokens_follow_the_treebank_rules():
    assert capital_tokens("DON'T") == 2  # DO + N'T
    assert capital_tokens("I CANNOT") == 3  # I + CAN + NOT
    assert capital_tokens("WELL-KNOWN, team-LEAD") == 1  # hyphenated words stay whole
    assert capital_tokens('"HELLO," said NASA.') == 2
    assert capital_tokens("2023 !!! ...") == 0


def test_sentences_are_counted_with_the_english_punkt_model():
    assert count_sentences("Dr. Smith went home. He was tired.") == 2
    assert count_sentences("no full stop at all") == 1


def test_language_detection_is_repeatable_and_says_when_it_cannot_tell():
    text = "Ceci est une phrase en français sur la mer et les bateaux."
    assert {detect_language(text) for _ in range(5)} == {"fr"}
    with pytest.raises(LanguageUnknown):
        detect_language("12345 !!!")
