"""reasoning-gym's generated items through ``math``: every disagreement with the dataset's own
scorer is a documented choice, and no changed value is accepted.

The items, keys and scores are reasoning-gym's (``extract_reasoning_gym.py`` generates them, seed
42, into ``data/reasoning_gym_cases.jsonl``); each candidate answer is boxed in a one-line
response and graded against the item's key unchanged. Two checks do not depend on
reasoning-gym's scorer at all: a candidate whose value differs from the key's by construction is
never accepted, and one that writes the key's value in another notation always is (save the
documented exceptions). The rest compares with the scorer, as the Math-Verify suite test does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.external._suite import DOCS, design_rows
from truegrade.core import load_grader

pytestmark = pytest.mark.slow  # grades about 1,000 candidates in worker processes

DATA = Path(__file__).resolve().parent / "data"
CASES = DATA / "reasoning_gym_cases.jsonl"
DISAGREEMENTS = DATA / "reasoning_gym_disagreements.yaml"
# candidates whose value differs from the key's, by how they are made
CHANGED = {"plus_one", "negated", "wrong", "one_root", "product", "rounded_3sig", "sci_3sig"}
# the key's value in another notation; python_j is the documented exception ("The imaginary
# unit is i")
SAME = {
    "gold", "float", "spaced", "grouped", "doubled", "trailing0", "latex", "factored",
    "reordered", "no_constant", "constant_K", "short", "set", "reversed", "powers", "star",
    "no_degree", "latex_degree", "decimal",
}  # fmt: skip


def _items() -> list[dict]:
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


def _flat(items: list[dict]) -> list[tuple[dict, dict]]:
    return [(item, candidate) for item in items for candidate in item["candidates"]]


def _sample(i: int, item: dict, candidate: dict) -> dict:
    response = f"The answer is $\\boxed{{{candidate['answer']}}}$."
    return {"id": str(i), "response": response, "reference": item["gold"]}


@pytest.fixture(scope="module")
def outcomes():
    flat = _flat(_items())
    grades = load_grader("math").grade_batch([_sample(i, *pair) for i, pair in enumerate(flat)])
    return [(item, c, g) for (item, c), g in zip(flat, grades, strict=True)]


def _pair(item: dict, candidate: dict) -> str:
    return f"{item['source']['dataset']}/{candidate['kind']}"


def test_the_items_are_reasoning_gyms_with_sources():
    items = _items()
    assert len(items) >= 200
    datasets = {item["source"]["dataset"] for item in items}
    assert len(datasets) >= 25
    for item in items:
        source = item["source"]
        assert source["package"] == "reasoning-gym" and source["seed"] == 42
        assert item["question"] and item["gold"]
        kinds = [c["kind"] for c in item["candidates"]]
        assert kinds[0] == "gold" and set(kinds) <= CHANGED | SAME | {"python_j"}
    assert {c["kind"] for _, c in _flat(items)} >= {"latex", "no_constant", "product", "wrong"}


def test_no_changed_value_is_accepted(outcomes):
    accepted = [
        (_pair(item, c), item["gold"][:40], c["answer"][:40], g.flags)
        for item, c, g in outcomes
        if c["kind"] in CHANGED and g.passed
    ]
    assert accepted == []


def test_every_other_notation_of_the_value_is_accepted(outcomes):
    rejected = [
        (_pair(item, c), item["gold"][:40], c["answer"][:40], g.flags, g.explanation)
        for item, c, g in outcomes
        if c["kind"] in SAME and not g.passed
    ]
    assert rejected == []


def test_every_disagreement_with_the_scorer_is_a_documented_choice(outcomes):
    data = yaml.safe_load(DISAGREEMENTS.read_text())
    choices, listed = data["choices"], data["cases"]
    rows = design_rows()
    for name, rule in choices.items():
        assert rule in rows, f"choice {name!r}: no row {rule!r} in {DOCS}'s Design choices table"
    assert set(listed.values()) <= set(choices)
    disagreeing = {
        _pair(item, c) for item, c, g in outcomes if bool(g.passed) != (c["score"] == 1.0)
    }
    assert sorted(disagreeing - set(listed)) == []
    assert sorted(set(listed) - disagreeing) == [], "these agree now: remove them from the list"


def test_rounded_answers_pass_once_a_tolerance_is_asked_for():
    """The tolerance choice in practice: the task asks for three significant figures, so the
    row's grader is given ``rel_tol`` (half a unit in the third figure is at most 5e-3)."""
    flat = [(t, c) for t, c in _flat(_items()) if c["kind"] in ("rounded_3sig", "sci_3sig")]
    assert len(flat) >= 30
    grader = load_grader("math", rel_tol=5e-3)
    grades = grader.grade_batch([_sample(i, *pair) for i, pair in enumerate(flat)])
    assert [g.flags for g in grades if not g.passed] == []
    assert "within_rel_tol" in {f for g in grades for f in g.flags}
