"""Pairwise agreement under named rules: the defaults credit no abstaining, unreadable or
order-flipping judge; each rule does what its name says on hand-computed pairs; the readers read
real published verdict files; and JudgeBench's published accuracies (paper, Tables 2 and 3) come
out to the hundredth under JudgeBench's rules."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from truegrade.core import DataError
from truegrade.validate import (
    PairRules,
    RecordedPair,
    detect_format,
    pairwise_agreement,
    read_alpaca_eval,
    read_grades_pairs,
    read_judgebench,
    read_mt_bench,
)

DATA = Path(__file__).parents[1] / "data" / "verdicts"
JUDGEBENCH = DATA / "judgebench"


def labelled(verdicts: list[float | None], n: int = 40) -> list[RecordedPair]:
    """Pairs whose label alternates A / B, each judged with ``verdicts`` for the label's side
    (1 = the label's winner) turned into the pair's frame."""
    out = []
    for i in range(n):
        label = "A" if i % 2 else "B"
        frame = [None if v is None else (v if label == "A" else 1 - v) for v in verdicts]
        out.append(RecordedPair(id=str(i), label=label, verdicts=frame, group=f"q{i // 4}"))
    return out


def test_an_abstaining_judge_gets_no_credit_by_default():
    report = pairwise_agreement(labelled([0.5, 0.5]))
    assert report.accuracy.estimate == 0.0
    assert report.agreement_with_ties.estimate == 0.0
    assert report.agreement_without_ties.n == 0  # no pair where both name a winner
    assert report.verdict_ties == 40


def test_a_judge_that_flips_with_the_order_gets_no_credit_by_default():
    # it always prefers the response shown first: in the pair's frame, A in the first order
    # and B in the swapped one, whatever the label
    pairs = [
        RecordedPair(id=str(i), label="A" if i % 2 else "B", verdicts=[1.0, 0.0]) for i in range(40)
    ]
    report = pairwise_agreement(pairs)
    assert report.accuracy.estimate == 0.0
    assert report.inconsistent_orders == 40
    assert report.kappa.estimate in (None, pytest.approx(0.0))


def test_an_unreadable_judge_gets_no_credit_and_its_rate_is_reported():
    report = pairwise_agreement(labelled([None, None]))
    assert report.accuracy.estimate == 0.0
    assert (report.unreadable, report.unreadable_rate) == (40, 1.0)
    dropped = pairwise_agreement(labelled([None, None]), PairRules(unreadable="drop"))
    assert dropped.counted == 0 and dropped.dropped == {"unreadable": 40}
    assert dropped.unreadable_rate == 1.0


def test_an_abstaining_judge_against_three_class_labels_has_no_kappa_credit():
    pairs = [
        RecordedPair(id=str(i), label=("A", "B", "tie")[i % 3], verdicts=[0.5, 0.5])
        for i in range(30)
    ]
    report = pairwise_agreement(pairs)
    assert report.kappa.estimate in (None, pytest.approx(0.0))
    assert report.accuracy.estimate == pytest.approx(1 / 3)  # right only on the tie labels
    assert report.agreement_without_ties.n == 0


@pytest.mark.parametrize(
    ("verdicts", "combine", "credit"),
    [
        ([1.0, 0.5], "both_agree", 0.0),  # (winner, tie): a tie
        ([1.0, 0.5], "any_winner", 1.0),  # (winner, tie): the winner
        ([1.0, 0.0], "any_winner", 0.0),  # (A, B): a tie
        ([1.0, 0.25], "average", 1.0),  # mean 0.625: A
        ([0.75, 0.25], "average", 0.0),  # mean 0.5: a tie
        ([1.0, 1.0], "both_agree", 1.0),
    ],
)
def test_each_combine_rule_by_hand(verdicts, combine, credit):
    pair = RecordedPair(id="x", label="A", verdicts=verdicts)
    assert pairwise_agreement([pair], PairRules(combine=combine)).accuracy.estimate == credit


def test_unreadable_as_tie_with_any_winner_is_judgebench():
    pairs = [
        RecordedPair(id="1", label="A", verdicts=[1.0, None]),  # winner and nothing: right
        RecordedPair(id="2", label="A", verdicts=[None, None]),  # nothing at all: wrong
        RecordedPair(id="3", label="B", verdicts=[0.0, 0.5]),
    ]
    rules = PairRules(combine="any_winner", unreadable="tie")
    report = pairwise_agreement(pairs, rules)
    assert report.accuracy.estimate == pytest.approx(2 / 3)
    assert report.unreadable == 2
    assert pairwise_agreement(pairs).accuracy.estimate == 0.0  # defaults: wrong, both_agree


def test_tie_rules_and_mt_benchs_two_agreements_by_hand():
    pairs = [
        RecordedPair(id="1", label="A", verdicts=[1.0]),
        RecordedPair(id="2", label="A", verdicts=[0.5]),
        RecordedPair(id="3", label="tie", verdicts=[0.5]),
        RecordedPair(id="4", label="tie", verdicts=[0.0]),
        RecordedPair(id="5", label="B", verdicts=[1.0]),
    ]
    report = pairwise_agreement(pairs)
    assert report.accuracy.estimate == pytest.approx(2 / 5)
    assert report.agreement_with_ties.estimate == pytest.approx(2 / 5)
    assert report.agreement_without_ties.estimate == pytest.approx(1 / 2)  # pairs 1 and 5
    assert report.confusion == {
        "A": {"A": 1, "tie": 1},
        "tie": {"tie": 1, "B": 1},
        "B": {"A": 1},
    }
    half = pairwise_agreement(pairs, PairRules(verdict_ties="half"))
    assert half.accuracy.estimate == pytest.approx(2.5 / 5)
    drop = pairwise_agreement(pairs, PairRules(verdict_ties="drop", label_ties="drop"))
    assert (drop.counted, drop.dropped) == (2, {"verdict_ties": 1, "label_ties": 2})
    assert drop.accuracy.estimate == pytest.approx(1 / 2)
    # macro-F1 over A, B, tie against scikit-learn's definition, worked by hand:
    # A: tp 1, fp 1, fn 1 -> 0.5; B: tp 0 -> 0; tie: tp 1, fp 1, fn 1 -> 0.5
    assert report.macro_f1.estimate == pytest.approx(1 / 3)


def test_equal_scores_rules():
    pairs = [
        RecordedPair(id="1", label="A", scores=(1.0, 1.0)),
        RecordedPair(id="2", label="A", scores=(2.0, 1.0)),
    ]
    assert pairwise_agreement(pairs).accuracy.estimate == pytest.approx(0.5)
    wrong = pairwise_agreement(pairs, PairRules(equal_scores="wrong"))
    assert wrong.accuracy.estimate == pytest.approx(0.5) and wrong.equal_scores == 1
    half = pairwise_agreement(pairs, PairRules(equal_scores="half"))
    assert half.accuracy.estimate == pytest.approx(0.75)


# JudgeBench (ICLR 2025), GPT-4o response pairs: Knowledge, Reasoning, Math, Coding, Overall
PUBLISHED = {
    "arena_hard-o1-mini": (58.44, 62.24, 82.14, 78.57, 65.71),  # Table 2
    "reward_model-Skywork_Skywork-Reward-Gemma-2-27B": (59.74, 66.33, 83.93, 50.00, 64.29),
    "reward_model-Skywork_Skywork-Reward-Llama-3.1-8B": (59.09, 64.29, 76.79, 50.00, 62.29),
    "reward_model-internlm_internlm2-20b-reward": (62.34, 69.39, 66.07, 50.00, 63.43),
    "reward_model-internlm_internlm2-7b-reward": (56.49, 61.22, 71.43, 50.00, 59.43),
    "reward_model-Ray2333_GRM-Gemma-2B-rewardmodel-ft": (62.99, 53.06, 64.29, 54.76, 59.43),
}
#: JudgeBench's rules: orders combined as (winner, tie) -> winner, an unreadable order a tie, a
#: pair with no winner wrong; a reward model's equal scores wrong (its code says B>A, and every
#: equal pair in these files is labelled A>B)
JUDGEBENCH_RULES = PairRules(combine="any_winner", unreadable="tie", equal_scores="wrong")


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_judgebench_published_accuracies_reproduced(name):
    pairs = read_judgebench(JUDGEBENCH / f"{name}.jsonl.gz")
    assert len(pairs) == 350
    report = pairwise_agreement(pairs, JUDGEBENCH_RULES, by=["category"])
    ours = [
        round(100 * report.slices["category"][c].accuracy.estimate, 2)
        for c in ("knowledge", "reasoning", "math", "coding")
    ]
    ours.append(round(100 * report.accuracy.estimate, 2))
    assert tuple(ours) == PUBLISHED[name]


def test_the_issues_overstatement_is_gone_for_o1_mini():
    # the pass/fail reading gave 73.7%; the defaults are stricter than JudgeBench (a tie in
    # one order is no win), never more lenient
    pairs = read_judgebench(JUDGEBENCH / "arena_hard-o1-mini.jsonl.gz")
    default = pairwise_agreement(pairs)
    assert default.accuracy.estimate == pytest.approx(203 / 350)
    assert default.accuracy.estimate < 0.6571
    assert default.inconsistent_orders == 110


def test_judgebench_reward_scores_are_read_with_equal_pairs_counted():
    pairs = read_judgebench(JUDGEBENCH / "reward_model-Skywork_Skywork-Reward-Gemma-2-27B.jsonl.gz")
    assert all(p.scores is not None for p in pairs)
    report = pairwise_agreement(pairs, JUDGEBENCH_RULES)
    assert report.equal_scores == 3
    half = pairwise_agreement(pairs, PairRules(equal_scores="half"))
    assert round(100 * half.accuracy.estimate, 2) == 64.71  # the issue's overstated number


def test_alpaca_eval_annotations_are_read_as_published():
    path = DATA / "alpaca_eval_claude-2.1.json.gz"
    raw = json.loads(gzip.decompress(path.read_bytes()))
    pairs = read_alpaca_eval(path)
    assert detect_format(path) == "alpaca-eval"
    assert len(pairs) == len(raw) == 24
    for pair, row in zip(pairs, raw, strict=True):
        pref = row["preference"]
        assert pair.verdicts == [pytest.approx(2 - (1.5 if pref == 0 else pref))]
        assert pair.group == row["instruction"]


def test_mt_bench_judgments_and_human_votes_share_keys(tmp_path):
    # the published shapes (FastChat's gpt-4_pair.jsonl and mt_bench_human_judgments), not
    # real rows: those files are on the Hugging Face hub, not in a repository we can cite
    judge = tmp_path / "gpt-4_pair.jsonl"
    rows = [
        {"question_id": 81, "model_1": "vicuna-13b", "model_2": "alpaca-13b",
         "g1_winner": "model_1", "g2_winner": "tie", "judge": ["gpt-4", "pair-v2"], "turn": 1},
        {"question_id": 81, "model_1": "alpaca-13b", "model_2": "vicuna-13b",
         "g1_winner": "error", "g2_winner": "model_2", "judge": ["gpt-4", "pair-v2"], "turn": 2},
    ]  # fmt: skip
    judge.write_text("".join(json.dumps(r) + "\n" for r in rows))
    human = tmp_path / "human.jsonl"
    human.write_text(
        json.dumps(
            {"question_id": 81, "model_a": "alpaca-13b", "model_b": "vicuna-13b",
             "winner": "model_b", "judge": "author_0", "turn": 1}
        ) + "\n"
    )  # fmt: skip
    votes = read_mt_bench(judge)
    # the pair's A is the model first in sorted order: alpaca-13b
    assert votes["81:1:alpaca-13b|vicuna-13b"] == [(0.0, 0.5)]
    assert votes["81:2:alpaca-13b|vicuna-13b"] == [(None, 0.0)]
    assert read_mt_bench(human) == {"81:1:alpaca-13b|vicuna-13b": [(0.0,)]}
    assert detect_format(judge) == detect_format(human) == "mt-bench"


def test_malformed_rows_name_the_file_and_line(tmp_path):
    bad = tmp_path / "jb.jsonl"
    good = {"pair_id": "p", "label": "A>B", "judgments": [{"decision": "A>B"}]}
    bad.write_text(json.dumps(good) + "\n" + json.dumps(good | {"label": "A>>B"}) + "\n")
    with pytest.raises(DataError) as err:
        read_judgebench(bad)
    assert err.value.line == 2 and "A>>B" in str(err.value) and str(bad) == err.value.path
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(good) + "\n{not json\n")
    with pytest.raises(DataError) as err:
        read_judgebench(broken)
    assert err.value.line == 2
    grades = tmp_path / "grades.jsonl"
    grades.write_text(json.dumps({"id": "p1", "score": 1.0}) + "\n")
    with pytest.raises(DataError, match="ID::chosen") as err:
        read_grades_pairs(grades)
    assert err.value.line == 1
