from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from truegrade.core import Flag, SpecError, load_grader

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ROWS = [
    json.loads(line)
    for line in (EXAMPLES / "data" / "instructions.jsonl").read_text("utf-8").splitlines()
]
NO_COMMA = {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
PROMPT = "Describe a lighthouse at night in one sentence without commas."


def grader(**options):
    options.setdefault("execution", "inline")
    return load_grader("instructions", **options)


def test_loaded_by_name_and_rebuilt_from_its_spec():
    g = grader(mode="loose", score="fraction")
    assert g.kind == "instructions"
    again = load_grader(g.spec)
    assert again.options == g.options


def test_unknown_option_is_a_clear_error():
    with pytest.raises(SpecError, match="unknown option 'strict'"):
        load_grader("instructions", strict=True)


@pytest.mark.parametrize(
    "row",
    [
        {"reference": NO_COMMA},
        {"reference": json.dumps(NO_COMMA)},
        NO_COMMA,  # IFEval's own rows: the constraints are columns
        {"metadata": NO_COMMA},
    ],
    ids=["reference", "json_text", "columns", "metadata"],
)
def test_constraints_are_read_where_rows_keep_them(row):
    grade = grader().grade(
        {"prompt": PROMPT, "response": "The beam sweeps the black sea all night long.", **row}
    )
    assert grade.passed is True and grade.subscores == {"punctuation:no_comma": 1.0}


def test_a_row_without_constraints_or_with_broken_ones_is_an_error_not_a_zero():
    missing = grader().grade({"prompt": PROMPT, "response": "text"})
    assert missing.error and missing.flags == [Flag.NO_REFERENCE]
    broken = grader().grade(
        {"response": "text", "instruction_id_list": ["nope:none"], "kwargs": [{}]}
    )
    assert broken.error and "unknown instruction id" in broken.error
    assert broken.flags == ["bad_reference"] and broken.passed is None
    not_a_spec = grader().grade({"response": "text", "reference": "just words"})
    assert not_a_spec.error and not_a_spec.flags == ["bad_reference"]


def test_each_constraint_has_its_verdict_and_the_score_is_all_or_a_fraction():
    row = {
        "prompt": "Write about autumn leaves in lowercase without commas, at least 50 words.",
        "response": "the autumn leaves fall slowly from the old oak trees in the park",
        "instruction_id_list": [
            "punctuation:no_comma",
            "change_case:english_lowercase",
            "length_constraints:number_words",
        ],
        "kwargs": [{}, {}, {"relation": "at least", "num_words": 50}],
    }
    everything = grader().grade(row)
    assert everything.subscores == {
        "punctuation:no_comma": 1.0,
        "change_case:english_lowercase": 1.0,
        "length_constraints:number_words": 0.0,
    }
    assert everything.passed is False and everything.score == 0.0
    assert "constraint_not_followed" in everything.flags
    assert "number_words" in everything.explanation
    part = grader(score="fraction").grade(row)
    assert part.score == pytest.approx(2 / 3) and part.passed is False


def test_loose_mode_forgives_a_chatty_first_line():
    row = {
        "prompt": PROMPT,
        "response": "Sure, here it is:\nThe beam sweeps the black sea all night long.",
        **NO_COMMA,
    }
    assert grader().grade(row).passed is False
    assert grader(mode="loose").grade(row).passed is True


def test_chat_message_responses_are_graded_on_the_assistant_text():
    row = {
        "prompt": [{"role": "user", "content": PROMPT}],
        "response": [
            {"role": "assistant", "content": "The beam sweeps the black sea all night long."}
        ],
        **NO_COMMA,
    }
    assert grader().grade(row).passed is True


def test_every_example_row_gets_the_verdict_its_label_says_when_hardened():
    grades = grader().grade_batch(ROWS)
    assert [g.passed for g in grades] == [r["label"] for r in ROWS]
    assert all(g.error is None for g in grades)


def test_plain_ifeval_passes_the_gamed_rows_and_agrees_on_the_rest():
    plain = grader(hardened=False).grade_batch(ROWS)
    outcome = Counter((r["metadata"]["kind"], g.passed) for r, g in zip(ROWS, plain, strict=True))
    assert outcome[("honest", True)] == 16 and outcome[("slip", False)] == 16
    assert outcome[("gamed", True)] >= 14  # what hardening is for
    # plain mode still reports what it saw
    gamed = [g for r, g in zip(ROWS, plain, strict=True) if r["metadata"]["kind"] == "gamed"]
    assert sum(1 for g in gamed if g.passed and g.flags) >= 14


def test_grading_runs_in_killable_workers_by_default():
    g = load_grader("instructions")
    assert g.execution == "process"
    grades = g.grade_batch(ROWS[:6])
    assert [gr.passed for gr in grades] == [r["label"] for r in ROWS[:6]]
