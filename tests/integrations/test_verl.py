"""The verl adapter, called from a thread pool as verl's reward managers do."""

from __future__ import annotations

import concurrent.futures

import pytest

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
