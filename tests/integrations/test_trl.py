"""The TRL adapter, called the way GRPOTrainer calls reward functions."""

from __future__ import annotations

import pickle

import pytest

from truegrade.integrations.trl import reward_func


def test_picklable_named_and_called_with_text_and_chat_completions():
    reward = pickle.loads(pickle.dumps(reward_func("math")))
    assert reward.__name__ == "truegrade_math"
    metrics: dict[str, float] = {}
    columns: dict[str, list] = {}
    rewards = reward(
        prompts=["1+1?", [{"role": "user", "content": "2+2?"}], "3+3?"],
        completions=[
            "\\boxed{2}",
            [{"role": "assistant", "content": "\\boxed{3} or \\boxed{4}"}],
            "\\boxed{6}",
        ],
        completion_ids=[[1], [2], [3]],
        trainer_state=object(),
        log_metric=metrics.__setitem__,
        log_extra=columns.__setitem__,
        answer=["2", "4", ["not", "a", "gold"]],
        difficulty=["easy", "easy", "hard"],
    )
    assert rewards == [1.0, 0.0, None]  # a gold the grader cannot use: None, not a silent 0
    assert metrics["truegrade/truegrade_math/pass_rate"] == 0.5
    assert metrics["truegrade/truegrade_math/error_rate"] == pytest.approx(1 / 3)
    assert metrics["truegrade/truegrade_math/flag/hedged"] == pytest.approx(1 / 3)
    assert columns["truegrade_math_flags"][1] == "hedged"


def test_reference_column_can_be_named_and_missing_columns_are_clear():
    reward = reward_func("exact", reference_column="gold", name="em")
    assert reward(prompts=["q"], completions=["x"], gold=["x"]) == [1.0]
    with pytest.raises(KeyError, match="no column 'gold'"):
        reward(prompts=["q"], completions=["x"], answer=["x"])


def test_needs_a_spec_so_workers_can_rebuild_it():
    with pytest.raises(TypeError, match="needs a grader spec"):
        reward_func(object())


def test_subscores_reach_the_trainer_as_metrics_and_a_column(tmp_path):
    (tmp_path / "shaped.py").write_text(
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    right = float(solution_str.strip() == ground_truth)\n"
        "    return {'score': right, 'format': 1.0, 'correct': right}\n"
    )
    reward = reward_func(f"{tmp_path / 'shaped.py'}:compute_score", name="shaped")
    metrics: dict[str, float] = {}
    columns: dict[str, list] = {}
    rewards = reward(
        prompts=["q"] * 4,
        completions=["4", "4", "5", "x"],
        answer=["4"] * 4,
        log_metric=metrics.__setitem__,
        log_extra=columns.__setitem__,
    )
    assert rewards == [1.0, 1.0, 0.0, 0.0]
    assert metrics["truegrade/shaped/sub/format"] == 1.0
    assert metrics["truegrade/shaped/sub/correct"] == 0.5
    assert columns["shaped_subscores"][2] == '{"correct": 0.0, "format": 1.0}'
