"""The MR-GSM8K and reward-test extractors read data and assertions, never running code."""

from __future__ import annotations

import textwrap

from tests.external.extract_mr_gsm8k import response, select
from tests.external.extract_reward_tests import cases_of

REWARDS = textwrap.dedent(
    """
    class TestReward:
        def test_direct(self):
            reward = reward_fn(prompt="2+2?", completions="The answer is 4", answer="4")
            assert reward == 1.0, "match"
            other = reward_fn(prompt="?", completions="5", answer="4")
            assert other == 0.0
            assert reward_fn(prompt="?", completions="x", answer="4") == 0

        def test_no_verdict(self):
            reward = reward_fn(prompt="?", completions="0.333", answer="1/3")
            assert isinstance(reward, float) and reward in [0.0, 1.0]
            assert reward == 1.0 or reward == 0.0

        def test_checker(self):
            worker = get_worker()
            pred = "The final answer is \\\\boxed{2/3}."
            gold = "2/3"
            assert worker.verify(pred, gold) == 1.0
            assert worker.verify("\\\\boxed{1}", gold=None) == 0.0

        def test_double(self):
            worker = HangingWorker(timeout=0.1)
            result = worker.verify("anything", "anything")
            assert result == 0.0

    def helper():
        assert reward_fn(completions="1", answer="1") == 1.0
    """
)


def test_reward_assertions_with_a_literal_verdict_become_cases():
    functions = {"reward_fn": (("completions", -1), ("answer", -1))}
    factories = {"get_worker": {"verify": (("response", 0), ("gold", 1))}}
    cases = cases_of(REWARDS, "t.py", "o/r", "0" * 40, functions, factories)
    got = [(c["gold"], c["pred"], c["expected"], c["source"]["check"]) for c in cases]
    assert got == [
        ("4", "The answer is 4", True, "reward_fn"),
        ("4", "5", False, "reward_fn"),
        ("4", "x", False, "reward_fn"),
        ("2/3", "The final answer is \\boxed{2/3}.", True, "verify"),
    ]
    assert cases[0]["source"]["test"] == "test_direct"


def _row(uuid, answer, verdict, kind="original", steps=("Step 1: 2+2=4", "Step 2: #### 4")):
    return {
        "uuid": uuid,
        "ground_truth_answer": answer,
        "model_output_steps": list(steps),
        "model_output_answer_correctness": verdict,
        "question_type": kind,
    }


def test_mr_gsm8k_rows_are_deduplicated_filtered_and_sampled():
    assert response(["Step 1: a = 2", "Step 12: #### 2"]) == "a = 2\n#### 2"
    files = [
        ("b.json", [_row("u1", 4, "wrong"), _row("u5", "1,450", "wrong")]),
        ("a.json", [_row("u1", 4, "correct"), _row("u2", 4, "wrong", kind="POT")]),
        ("c.json", [_row("u3", "Let's think step by step.", "wrong", kind="reversed")]),
        ("d.json", [_row("u4", 7, "wrong"), _row("u6", 9, "wrong"), _row("u7", 3, "correct")]),
    ]
    cases = select(files, limit=3)
    got = [(c["source"]["uuid"], c["gold"], c["expected"], c["source"]["file"]) for c in cases]
    # u1 from a.json (the first file by name); every correct row, then wrong ones by uuid
    assert got == [
        ("u1", "4", True, "a.json"),
        ("u4", "7", False, "d.json"),
        ("u7", "3", True, "d.json"),
    ]
    assert cases[0]["pred"] == "2+2=4\n#### 4"
