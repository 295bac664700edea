"""Bring-your-own reward functions: both signatures, and every way they can misbehave."""

from __future__ import annotations

import textwrap

import pytest

from tests.graders.python import rewards_for_tests as rewards
from truegrade.core import Flag, SpecError, load_grader

TRL = """
import math, time

def trl_reward(prompts, completions, solution, **kwargs):
    out = []
    for p, c, s, tag in zip(prompts, completions, solution, kwargs["tag"], strict=True):
        if c == "raise":
            raise ValueError("reward function bug")
        if c == "hang":
            time.sleep(600)
        if c == "none":
            out.append(None)
        elif c == "nan":
            out.append(math.nan)
        elif c == "inf":
            out.append(math.inf)
        elif c == "text":
            out.append("high")
        elif c == "many":
            return [1.0, 1.0, 1.0]
        else:
            text = c if isinstance(c, str) else c[-1]["content"]
            out.append(float(text.strip() == s) + (0.5 if tag == "bonus" else 0.0))
    return out

async def async_reward(prompts, completions, **kwargs):
    return [1.0 for _ in completions]

def shaped(p, c):
    return [2.0 for _ in c]

class NotAFunction:
    pass

built = NotAFunction
"""

VERL = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "no-score":
        return {"acc": 1}
    correct = solution_str.strip() == str(ground_truth)
    return {"score": 1.0 if correct else -0.5, "acc": correct, "pred": solution_str[:5],
            "format": 1.0, "source_is_known": float(data_source == "gsm8k")}

def plain(data_source, solution_str, ground_truth, extra_info=None):
    return solution_str == ground_truth

def misbehaving(data_source, solution_str, ground_truth, extra_info=None):
    import math, time
    if solution_str == "raise":
        raise KeyError("no such field")
    if solution_str == "hang":
        time.sleep(600)
    return {"nan": math.nan, "dict-nan": {"score": math.nan}, "text": "high",
            "none": None}.get(solution_str, 1.0)

def both(completions, solution_str):
    return 0

def neither(x, y):
    return 0
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "trl_rewards.py").write_text(TRL)
    (tmp_path / "verl_rewards.py").write_text(VERL)
    return tmp_path


def rows(*responses, **extra):
    return [
        {
            "id": i,
            "prompt": "q",
            "response": r,
            "reference": "42",
            "metadata": {"tag": "plain"},
            **extra,
        }
        for i, r in enumerate(responses)
    ]


def test_trl_signature_detected_and_columns_passed(files):
    g = load_grader(f"{files}/trl_rewards.py:trl_reward", pass_threshold=1.0)
    assert g.signature == "trl" and g.name == "trl_reward"
    ok, wrong = g.grade_batch(rows("42", "41"))
    assert (ok.score, ok.passed, wrong.score, wrong.passed) == (1.0, True, 0.0, False)
    bonus = g.grade({"id": 9, "response": "42", "reference": "42", "metadata": {"tag": "bonus"}})
    assert bonus.score == 1.5  # metadata columns reach the function as TRL kwargs


def test_chat_completions_are_passed_as_messages(files):
    g = load_grader(f"{files}/trl_rewards.py:trl_reward")
    chat = [{"role": "assistant", "content": "42"}]
    grade = g.grade(
        {
            "id": 1,
            "prompt": [{"role": "user", "content": "q"}],
            "response": chat,
            "reference": "42",
            "metadata": {"tag": "plain"},
        }
    )
    assert grade.score == 1.0


def test_every_misbehaviour_is_contained_and_named(files):
    g = load_grader(f"{files}/trl_rewards.py:trl_reward", timeout_s=1.0)
    grades = g.grade_batch(rows("raise", "hang", "none", "nan", "inf", "text", "many", "42"))
    by = dict(
        zip(["raise", "hang", "none", "nan", "inf", "text", "many", "ok"], grades, strict=True)
    )
    assert by["raise"].flags == [Flag.GRADER_EXCEPTION]
    assert "ValueError: reward function bug" in (by["raise"].error or "")
    assert by["hang"].flags == [Flag.TIMEOUT]
    assert by["none"].flags == [Flag.NOT_GRADABLE]
    for name in ("nan", "inf", "text", "many"):
        assert by[name].flags == [Flag.INVALID_SCORE], name
        assert by[name].error and by[name].score == 0.0
    assert "returned 3 rewards for 1 completion" in (by["many"].error or "")
    assert by["ok"].score == 1.0 and by["ok"].error is None


def test_a_verl_function_misbehaving_is_contained_and_named(files):
    g = load_grader(f"{files}/verl_rewards.py:misbehaving", timeout_s=1.0)
    names = ["raise", "hang", "nan", "dict-nan", "text", "none", "42"]
    by = dict(zip(names, g.grade_batch(rows(*names)), strict=True))
    assert by["raise"].flags == [Flag.GRADER_EXCEPTION]
    assert "KeyError" in (by["raise"].error or "")
    assert by["hang"].flags == [Flag.TIMEOUT]
    for name in ("nan", "dict-nan", "text"):
        assert by[name].flags == [Flag.INVALID_SCORE], name
        assert by[name].error and by[name].score == 0.0
    assert by["none"].flags == [Flag.NOT_GRADABLE]
    assert by["42"].score == 1.0 and by["42"].error is None


def test_async_and_odd_parameter_names(files):
    assert load_grader(f"{files}/trl_rewards.py:async_reward").grade(rows("x")[0]).score == 1.0
    with pytest.raises(SpecError, match="fits neither"):
        load_grader(f"{files}/trl_rewards.py:shaped")
    forced = load_grader(f"{files}/trl_rewards.py:shaped", signature="trl")
    assert forced.grade(rows("x")[0]).score == 2.0


def test_verl_dicts_and_plain_returns(files):
    g = load_grader(f"{files}/verl_rewards.py:compute_score")
    assert g.signature == "verl"
    ok, wrong = g.grade_batch(rows("42", "7", metadata={"data_source": "gsm8k"}))
    assert ok.score == 1.0 and ok.passed is True
    assert ok.subscores == {"acc": 1.0, "format": 1.0, "source_is_known": 1.0}
    assert wrong.score == -0.5 and wrong.passed is False
    missing = g.grade(rows("no-score")[0])
    assert missing.flags == [Flag.INVALID_SCORE] and "without 'score'" in (missing.error or "")
    plain = load_grader(f"{files}/verl_rewards.py:plain", pass_threshold=1)
    assert [x.passed for x in plain.grade_batch(rows("42", "4"))] == [True, False]


def test_ambiguous_and_broken_specs_are_clear(files):
    with pytest.raises(SpecError, match="fits both"):
        load_grader(f"{files}/verl_rewards.py:both")
    with pytest.raises(SpecError, match=r"neither.*signature: trl \| verl"):
        load_grader(f"{files}/verl_rewards.py:neither")
    with pytest.raises(SpecError, match="no top-level function named 'nope'"):
        load_grader(f"{files}/verl_rewards.py:nope")
    with pytest.raises(SpecError, match="is a class"):
        load_grader(f"{files}/trl_rewards.py:NotAFunction")
    with pytest.raises(SpecError, match="does not exist"):
        load_grader(f"{files}/missing.py:f")
    (files / "broken.py").write_text("def f(:\n")
    with pytest.raises(SpecError, match=r"broken\.py:1: not valid Python"):
        load_grader(f"{files}/broken.py:f")


def test_targets_built_at_import_time_are_probed_in_a_worker(files):
    (files / "built.py").write_text(
        textwrap.dedent("""
        import functools
        def _reward(prompts, completions, scale, **kwargs):
            return [scale for _ in completions]
        reward = functools.partial(_reward, scale=0.75)
    """)
    )
    g = load_grader(f"{files}/built.py:reward")
    assert g.signature == "trl" and g.grade(rows("x")[0]).score == 0.75


def test_live_callables_run_in_workers_when_importable_else_inline():
    g = load_grader(rewards.contains_reference)
    assert g.execution == "process"
    assert g.grade({"id": 1, "response": "it is 42", "reference": "42"}).score == 1.0
    instance = load_grader(rewards.LengthReward())
    assert instance.grade({"id": 1, "response": "x" * 50}).score == 0.5
    closure = load_grader(lambda completions, **kw: [0.3 for _ in completions])
    assert closure.execution == "inline"
    assert closure.grade({"id": 1, "response": "x"}).score == 0.3
