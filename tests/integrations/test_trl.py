"""The TRL adapter, called the way GRPOTrainer calls reward functions."""

from __future__ import annotations

import json
import pickle

import pytest

from tests.task_rows import (
    APPS_INPUT_OUTPUT,
    CPP_RIGHT,
    CPP_WRONG,
    PY_EVERY_ANSWER,
    PY_RIGHT,
    STDIO,
    STDIO_CPP,
    instruction_rows,
)
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


@pytest.mark.system_tool("g++", package="g++")
def test_stdio_programs_get_rewards_from_the_reference_or_a_dataset_column():
    reward = reward_func("code")
    metrics: dict[str, float] = {}
    columns: dict[str, list] = {}
    rewards = reward(
        prompts=["Print the sum of two integers."] * 4,
        completions=[
            CPP_RIGHT,
            [{"role": "assistant", "content": PY_RIGHT}],
            PY_EVERY_ANSWER,
            CPP_WRONG,
        ],
        # the spec as an object or as its JSON text, as a Parquet column holds it
        reference=[STDIO_CPP, json.dumps(STDIO), STDIO, json.dumps(STDIO_CPP)],
        log_metric=metrics.__setitem__,
        log_extra=columns.__setitem__,
    )
    assert rewards == [1.0, 1.0, 0.0, 0.0]
    assert columns["truegrade_code_flags"][2] == "wrong_answer"
    assert json.loads(columns["truegrade_code_subscores"][0]) == {
        "accepted": 2.0,
        "stdio_0": 1.0,
        "stdio_1": 1.0,
    }
    assert metrics["truegrade/truegrade_code/sub/stdio_1"] == 0.5
    assert metrics["truegrade/truegrade_code/flag/wrong_answer"] == 0.5
    # an APPS dataset: no reference column, the tests in its own input_output column
    apps = reward(
        prompts=["q", "q"],
        completions=[PY_RIGHT, PY_EVERY_ANSWER],
        input_output=[APPS_INPUT_OUTPUT] * 2,
        solutions=[json.dumps([PY_RIGHT])] * 2,
    )
    assert apps == [1.0, 0.0]


def test_a_stdio_row_without_usable_tests_gets_no_reward_and_says_why():
    reward = reward_func("code")
    columns: dict[str, list] = {}
    rewards = reward(
        prompts=["q", "q"],
        completions=[PY_RIGHT, PY_RIGHT],
        reference=[{"stdio": []}, "not json"],
        log_extra=columns.__setitem__,
    )
    assert rewards == [None, None]  # TRL's "not applicable", never a silent 0
    reasons = columns["truegrade_code_reason"]
    assert "'stdio' must be a non-empty list" in reasons[0]
    assert "not JSON" in reasons[1]


def null_filled(kwargs: dict) -> dict:
    """One constraint's arguments as a datasets struct column holds them: every argument name
    of the column, None where this constraint has none."""
    names = ("keywords", "num_words", "relation", "frequency", "keyword", "language")
    return {name: kwargs.get(name) for name in names}


def test_instruction_constraints_arrive_as_ifeval_columns():
    rows = instruction_rows()
    order = [rows["honest"], rows["slip"], rows["gamed"]]
    reward = reward_func("instructions")
    metrics: dict[str, float] = {}
    columns: dict[str, list] = {}
    rewards = reward(
        prompts=[[{"role": "user", "content": r["prompt"]}] for r in order],
        completions=[[{"role": "assistant", "content": r["response"]}] for r in order],
        # google/IFEval's columns as GRPOTrainer passes them: 'kwargs' is a column too
        key=[1, 2, 3],
        instruction_id_list=[r["instruction_id_list"] for r in order],
        kwargs=[[null_filled(k) for k in r["kwargs"]] for r in order],
        log_metric=metrics.__setitem__,
        log_extra=columns.__setitem__,
    )
    assert rewards == [1.0, 0.0, 0.0]
    assert "keyword_stuffing" in columns["truegrade_instructions_flags"][2]
    assert json.loads(columns["truegrade_instructions_subscores"][2]) == {
        "change_case:english_lowercase": 1.0,
        "keywords:existence": 0.0,
    }
    assert metrics["truegrade/truegrade_instructions/flag/keyword_stuffing"] == pytest.approx(1 / 3)
    assert metrics["truegrade/truegrade_instructions/sub/keywords:existence"] == pytest.approx(
        2 / 3
    )
    # the constraints as one JSON column (verl-style ground truth) work the same
    packed = reward(
        prompts=[r["prompt"] for r in order],
        completions=[r["response"] for r in order],
        ground_truth=[
            json.dumps({"instruction_id_list": r["instruction_id_list"], "kwargs": r["kwargs"]})
            for r in order
        ],
    )
    assert packed == [1.0, 0.0, 0.0]


def test_an_instruction_row_without_its_arguments_gets_no_reward_and_says_why():
    row = instruction_rows()["honest"]
    reward = reward_func("instructions")
    columns: dict[str, list] = {}
    rewards = reward(
        prompts=[row["prompt"]],
        completions=[row["response"]],
        instruction_id_list=[row["instruction_id_list"]],
        log_extra=columns.__setitem__,
    )
    assert rewards == [None]
    assert "missing argument(s) ['keywords']" in columns["truegrade_instructions_reason"][0]
