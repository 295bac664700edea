"""Published datasets' columns reach every face as they are: TRL's columns, verl's extra_info,
the reward server's rows and Ray's records are read by the same presets as a file."""

from __future__ import annotations

import httpx

from tests.data.published_cases import _humaneval_rows, published
from truegrade.core import gsm8k_final_answer
from truegrade.integrations.trl import reward_func
from truegrade.integrations.verl import compute_score
from truegrade.serve import ServerProcess


def test_trl_reads_gsm8k_columns_and_gives_none_where_the_key_is_unusable():
    rows = published("gsm8k_test.jsonl.gz")[:3]
    reward = reward_func("math")
    key = gsm8k_final_answer(rows[2]["answer"])
    rewards = reward(
        prompts=[r["question"] for r in rows] + ["q"],
        completions=[rows[0]["answer"], "#### 1", rf"so $\boxed{{{key}}}$", "1"],
        question=[r["question"] for r in rows] + ["q"],
        answer=[r["answer"] for r in rows] + ["Let's think step by step."],
    )
    # the worked solution, a wrong number, the right one boxed, and a sentence for a key:
    # that row cannot be graded, and None is not a 0 to train on
    assert rewards == [1.0, 0.0, 1.0, None]


def test_trl_reads_humaneval_columns_with_the_prompt_as_trl_passes_it():
    problems = _humaneval_rows()[:2]
    reward = reward_func("code")
    rewards = reward(
        prompts=[p["prompt"] for p in problems],
        completions=[problems[0]["canonical_solution"], "    return None\n"],
        task_id=[p["task_id"] for p in problems],
        test=[p["test"] for p in problems],
        entry_point=[p["entry_point"] for p in problems],
        canonical_solution=[p["canonical_solution"] for p in problems],
    )
    assert rewards == [1.0, 0.0]


def test_verl_reads_an_mbpp_row_from_extra_info():
    row = published("mbpp_test.jsonl.gz")[0]
    right = compute_score(
        "mbpp", f"```python\n{row['code']}\n```", "", extra_info=row, grader="code"
    )
    wrong = compute_score("mbpp", "def remove_Occ(s, c):\n    return s\n", "", row, grader="code")
    assert (right["score"], right["grader_error"]) == (1.0, 0.0)
    assert (wrong["score"], wrong["grader_error"]) == (0.0, 0.0)


def test_the_reward_server_reads_published_rows_and_its_field_option():
    rows = published("gsm8k_test.jsonl.gz")[:2]
    outputs = [{**rows[0], "output": rows[0]["answer"]}, {**rows[1], "output": "#### 0"}]
    with ServerProcess("math", workers=1, extra_args=["--field", "response=output"]) as server:
        answer = httpx.post(server.url + "/grade", json={"samples": outputs}, timeout=120)
        answer.raise_for_status()
        grades = answer.json()["grades"]
    assert [g["passed"] for g in grades] == [True, False]
    assert all(g["error"] is None for g in grades)
