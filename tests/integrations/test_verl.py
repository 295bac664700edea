"""The verl adapter, called from a thread pool as verl's reward managers do."""

from __future__ import annotations

import concurrent.futures
import json

import pytest

from tests.task_rows import (
    APPS_INPUT_OUTPUT,
    CPP_RIGHT,
    PY_EVERY_ANSWER,
    PY_RIGHT,
    STDIO,
    STDIO_CPP,
    instruction_rows,
)
from truegrade.integrations import verl


def test_compute_score_from_many_threads():
    def one(i: int) -> dict:
        return verl.compute_score("openai/gsm8k", f"#### {i}", str(i % 4), extra_info={"index": i})

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(one, range(64)))
    assert [r["acc"] for r in results] == [i % 4 == i for i in range(64)]
    assert {tuple(sorted(r)) for r in results} == {
        ("acc", "grader_error", "hedged", "no_answer", "score", "timeout")
    }


def test_batch_entry_point_and_grader_choice(monkeypatch):
    out = verl.compute_score_batch(
        data_sources=["a", "b", "c"],
        solution_strs=["\\boxed{1}", "\\boxed{1} or \\boxed{2}", "nothing"],
        ground_truths=["1", "2", "3"],
        extra_infos=[None, None, None],
    )
    assert [r["score"] for r in out] == [1.0, 0.0, 0.0]
    assert [r["hedged"] for r in out] == [0.0, 1.0, 0.0]
    assert out[2]["no_answer"] == 1.0
    monkeypatch.setenv("TRUEGRADE_GRADER", "exact")
    assert verl.compute_score("x", "nothing", "nothing")["acc"] is True
    assert verl.compute_score("x", "\\boxed{7}", "7", grader="math")["acc"] is True


def test_each_entry_point_refuses_the_other_managers_call():
    with pytest.raises(TypeError, match="name=compute_score"):
        verl.compute_score_batch(data_source="x", solution_str="\\boxed{1}", ground_truth="1")
    with pytest.raises(TypeError, match="compute_score_batch"):
        verl.compute_score(solution_strs=["\\boxed{1}"], ground_truths=["1"])


def test_check_config_reads_plain_mappings():
    good = {
        "reward": {"custom_reward_function": {"path": verl.__file__, "name": "compute_score"}},
        "custom_reward_function": {"path": None, "name": None},
    }
    verl.check_config(good)
    legacy = {**good, "sandbox_fusion": {"url": "http://127.0.0.1:1"}}
    with pytest.raises(
        ValueError, match=r"sandbox_fusion.url=.* \(set reward.sandbox_fusion.url\)"
    ):
        verl.check_config(legacy)


@pytest.mark.system_tool("g++", package="g++")
def test_stdio_specs_travel_as_the_ground_truth():
    def score(solution: str, truth, extra=None) -> dict:
        return verl.compute_score("codecontests", solution, truth, extra, grader="code")

    assert score(CPP_RIGHT, STDIO_CPP)["score"] == 1.0
    assert score(CPP_RIGHT, json.dumps(STDIO_CPP))["acc"] is True  # a Parquet string column
    assert score(PY_EVERY_ANSWER, json.dumps(STDIO))["score"] == 0.0
    # verl's own code datasets keep APPS's {"inputs", "outputs"} object as the ground truth
    assert score(PY_RIGHT, APPS_INPUT_OUTPUT)["score"] == 1.0
    assert score(PY_EVERY_ANSWER, APPS_INPUT_OUTPUT)["score"] == 0.0
    # or the dataset's own columns ride in extra_info, with an empty ground truth
    assert score(PY_RIGHT, "", {"input_output": APPS_INPUT_OUTPUT})["score"] == 1.0
    broken = score(PY_RIGHT, '{"stdio": []}')
    assert (broken["score"], broken["grader_error"]) == (0.0, 1.0)  # logged, not a quiet 0
    missing = score(PY_RIGHT, "")
    assert missing["grader_error"] == 1.0


def test_ifeval_constraints_travel_as_the_ground_truth_or_in_extra_info():
    rows = instruction_rows()

    def score(kind: str, packed: bool) -> dict:
        row = rows[kind]
        constraints = {"instruction_id_list": row["instruction_id_list"], "kwargs": row["kwargs"]}
        if packed:  # ground_truth: the constraints as JSON text
            truth, extra = json.dumps(constraints), {"prompt": row["prompt"], "index": 0}
        else:  # ground_truth empty, the IFEval columns in extra_info
            truth, extra = "", {**constraints, "prompt": row["prompt"]}
        return verl.compute_score("google/IFEval", row["response"], truth, extra, "instructions")

    for packed in (True, False):
        assert [score(k, packed)["score"] for k in ("honest", "slip", "gamed")] == [1.0, 0.0, 0.0]
    assert score("gamed", False)["grader_error"] == 0.0
    # the prompt in extra_info reaches the defences: the prompt pasted back (in lowercase, so
    # it meets both constraints: it names both keywords) is no answer; without the prompt the
    # grader cannot know it is an echo
    prompt = rows["honest"]["prompt"]
    constraints = {k: rows["honest"][k] for k in ("instruction_id_list", "kwargs")}

    def echo(extra: dict) -> dict:
        return verl.compute_score("ifeval", prompt.lower(), "", extra, grader="instructions")

    with_prompt = echo({**constraints, "prompt": prompt})
    assert (with_prompt["score"], with_prompt["grader_error"]) == (0.0, 0.0)
    assert echo({**constraints, "question": prompt})["score"] == 0.0
    assert echo(constraints)["score"] == 1.0
    unusable = verl.compute_score(
        "google/IFEval", rows["honest"]["response"], "", {"index": 3}, grader="instructions"
    )
    assert unusable["grader_error"] == 1.0


def test_the_batch_entry_point_reads_extra_info_the_same_way():
    rows = instruction_rows()
    order = [rows["honest"], rows["gamed"]]
    out = verl.compute_score_batch(
        data_sources=["google/IFEval"] * 2,
        solution_strs=[r["response"] for r in order],
        ground_truths=["", ""],
        extra_infos=[{k: r[k] for k in ("instruction_id_list", "kwargs", "prompt")} for r in order],
        grader="instructions",
    )
    assert [r["score"] for r in out] == [1.0, 0.0]
