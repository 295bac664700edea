from __future__ import annotations

import pytest

from truegrade.core import Flag, SpecError, load_grader


def test_modes_and_flags():
    g = load_grader("regex", pattern="^<think>.*</think>", dotall=True)
    assert g.grade({"id": 1, "response": "<think>\nhm\n</think> 4"}).passed is True
    assert g.grade({"id": 1, "response": "4"}).flags == ["no_match"]
    full = load_grader("regex", pattern="[0-9]+", mode="fullmatch")
    assert full.grade({"id": 1, "response": "42x"}).passed is False


def test_negate_for_must_not_contain_gates():
    g = load_grader("regex", pattern="as an ai", ignore_case=True, negate=True)
    assert g.grade({"id": 1, "response": "As an AI, I..."}).flags == ["forbidden_match"]
    assert g.grade({"id": 1, "response": "Sure."}).passed is True


def test_pattern_from_reference_needs_a_reference():
    g = load_grader("regex", pattern_from_reference=True)
    assert g.grade({"id": 1, "response": "x=5", "reference": r"x\s*=\s*5"}).passed is True
    assert g.grade({"id": 1, "response": "x"}).flags == [Flag.NO_REFERENCE]
    assert "bad_reference" in g.grade({"id": 1, "response": "x", "reference": "("}).flags
    for blank in ("", "  ", 5):  # an empty pattern matches everything: no check at all
        g_blank = g.grade({"id": 1, "response": "x", "reference": blank})
        assert g_blank.error and g_blank.passed is None and "bad_reference" in g_blank.flags


def test_catastrophic_backtracking_is_killed_not_waited_for():
    g = load_grader("regex", pattern="^(a+)+$", timeout_s=0.5)
    evil, fine = g.grade_batch(
        [{"id": 1, "response": "a" * 64 + "b"}, {"id": 2, "response": "aaa"}]
    )
    assert evil.flags == [Flag.TIMEOUT] and evil.error
    assert fine.passed is True


def test_exactly_one_pattern_source():
    with pytest.raises(SpecError, match="exactly one"):
        load_grader("regex")
    with pytest.raises(SpecError, match="exactly one"):
        load_grader("regex", pattern="x", pattern_from_reference=True)
    with pytest.raises(SpecError, match="empty or blank pattern"):
        load_grader("regex", pattern=" ")
