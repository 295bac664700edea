"""IFEval's own published run through ``instructions``: its 540 prompts, GPT-4's responses and
the strict and loose verdicts IFEval published for them.

Source: google-research/google-research, ``instruction_following_eval/data/`` at commit
83282e4ec6e140949e0f51d04e279be7949409ff (Apache-2.0): ``input_data.jsonl`` (prompts, ids,
kwargs), ``input_response_data_gpt4_20231107_145030.jsonl`` (responses) and
``eval_results_strict.jsonl`` / ``eval_results_loose.jsonl`` (per-constraint verdicts), joined
by prompt into ``data/ifeval_gpt4.jsonl.gz`` (one row per prompt, the verdicts as ``strict`` and
``loose``), nothing else changed.

Every disagreement is listed here with its reason (and in ``docs/instructions.md``); the test
fails on any other, and on a listed one that no longer disagrees.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from truegrade.audit import audit_items
from truegrade.core import load_grader

DATA = Path(__file__).with_name("data") / "ifeval_gpt4.jsonl.gz"

# (key, constraint): why our verdict differs from the published one
DISAGREE = {
    "loose": {
        # IFEval draws a random letter when kwargs' letter is not a-z ('#' here): the published
        # run counted some other letter; the letter asked for occurs fewer than 4 times
        (1122, "keywords:letter_frequency"): "'#' letter randomised in the published run",
    },
    "strict": {},
}
# GPT-4 responses IFEval passes that the hardened grader fails, and why (docs/instructions.md)
HARDENED_REJECTS = {
    2359: "degenerate",  # only repeats the request: no song
    3305: "prompt_echo",  # the keywords appear only inside the required repetition
}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    with gzip.open(DATA, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _rows(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in ("strict", "loose")} | {"id": str(r["key"])}
            for r in rows]  # fmt: skip


@pytest.mark.parametrize("mode", ["strict", "loose"])
def test_every_constraint_verdict_agrees_with_ifevals_published_run(rows, mode):
    grades = load_grader("instructions", mode=mode, hardened=False).grade_batch(_rows(rows))
    differ = {}
    total = 0
    for row, grade in zip(rows, grades, strict=True):
        labels = list(grade.subscores)  # one per constraint, in the row's order
        for i, constraint in enumerate(row["instruction_id_list"]):
            total += 1
            if (grade.subscores[labels[i]] == 1.0) != row[mode][i]:
                differ[row["key"], constraint] = row[mode][i]
    assert total == 832
    assert set(differ) == set(DISAGREE[mode]), differ


def test_the_hardened_grader_passes_what_ifeval_passes_but_two_documented_responses(rows):
    grades = load_grader("instructions").grade_batch(_rows(rows))
    passed_by_ifeval = [(r, g) for r, g in zip(rows, grades, strict=True) if all(r["strict"])]
    assert len(passed_by_ifeval) == 417
    rejected = {r["key"]: g.flags for r, g in passed_by_ifeval if not g.passed}
    assert set(rejected) == set(HARDENED_REJECTS)
    for key, flag in HARDENED_REJECTS.items():
        assert flag in rejected[key]


def test_ifevals_plain_checks_let_a_third_of_its_prompts_be_met_by_nothing_and_hardened_none(rows):
    items = _rows(rows)
    for item in items:
        item.pop("response")
    plain = audit_items(load_grader("instructions", hardened=False), items, checks=["tests"])
    hardened = audit_items(load_grader("instructions"), items, checks=["tests"])
    assert plain.by_flag == {"trivially_satisfied": 165}
    assert hardened.items_flagged == 0
