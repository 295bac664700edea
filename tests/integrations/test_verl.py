"""The verl adapter, called from a thread pool as verl's reward managers do."""

from __future__ import annotations

import concurrent.futures

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
