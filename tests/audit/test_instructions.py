"""The audit's probes of instruction-following items: constraints that "Yes." or the prompt
pasted back meet, found under IFEval's plain checks, and none under the hardened grader."""

from __future__ import annotations

from pathlib import Path

from truegrade.audit import audit_items
from truegrade.core import load_grader
from truegrade.data import read_samples

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

ITEMS = [
    # "no commas": the one-word answer and the prompt (which has none) both meet it
    {
        "id": "no_comma",
        "prompt": "Describe a harbour at dusk for a travel guide. Do not use any commas.",
        "instruction_id_list": ["punctuation:no_comma"],
        "kwargs": [{}],
    },
    # "include the word harbour twice": the prompt holds it twice, "Yes." does not
    {
        "id": "keyword",
        "prompt": "Write a paragraph about the old harbour for a travel guide. Use the word "
        "harbour at least twice.",
        "instruction_id_list": ["keywords:frequency"],
        "kwargs": [{"keyword": "harbour", "frequency": 2, "relation": "at least"}],
    },
    # "at least 40 words": neither probe is that long
    {
        "id": "long",
        "prompt": "Write about a harbour at dusk in at least 40 words.",
        "instruction_id_list": ["length_constraints:number_words"],
        "kwargs": [{"num_words": 40, "relation": "at least"}],
    },
]


def _flags(report) -> dict[str, str]:
    return {
        i.id: f.reason for i in report.items for f in i.flags if f.name == "trivially_satisfied"
    }


def test_items_a_response_that_ignores_the_request_satisfies_are_flagged_under_plain_ifeval():
    report = audit_items(load_grader("instructions", hardened=False), ITEMS, checks=["tests"])
    found = _flags(report)
    assert set(found) == {"no_comma", "keyword"}
    assert "'Yes.' and the prompt pasted back" in found["no_comma"]
    assert found["keyword"].startswith("the prompt pasted back meets")
    assert report.checks["tests"].startswith("ran")


def test_the_hardened_grader_rewards_neither_probe():
    report = audit_items(load_grader("instructions"), ITEMS, checks=["tests"])
    assert _flags(report) == {}


def test_the_bundled_items_under_both_graders():
    rows = [s for _, s in read_samples(EXAMPLES / "data" / "instructions.jsonl")]
    plain = audit_items(load_grader("instructions", hardened=False), rows, checks=["tests"])
    hardened = audit_items(load_grader(str(EXAMPLES / "graders" / "instructions.yaml")), rows,
                           checks=["tests"])  # fmt: skip
    assert len(_flags(plain)) == 3 and _flags(hardened) == {}
