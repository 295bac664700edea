"""Keys as datasets write them are read as answers, and a sentence is not: the rule that refuses
prose keys, calibrated on every real key the project has (MATH-500's 500 answers, the keys of
Math-Verify's test suite and of reasoning-gym's items; with the shared data, 100 more MATH keys).

Each key is given as its own answer: a key that the kernel refuses makes that row an error. Three
real keys are refused, each for a documented reason; no other is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reference import QWEN_MATH, read_jsonl
from truegrade.graders.math._check import MathKernel

ROOT = Path(__file__).resolve().parents[3]
MATH500 = ROOT / "tests" / "data" / "math500_answers.jsonl"
EXTERNAL = ROOT / "tests" / "external" / "data"
QWEN = QWEN_MATH

REFUSED = {
    "\\\\boxed{W(n) = 1 \\\\text{ and } W(n) = -1": "unbalanced brackets",  # an unclosed box
    "\\boxed{1} no no no no no \\boxed{2}": "different sentences",  # two answers
    "$$\\text{The midpoints form a regular hexagon}$$": "a sentence",  # a claim to prove
}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _repository_keys() -> list[str]:
    keys = [row["answer"] for row in _jsonl(MATH500)[1:]]
    keys += [row["gold"] for row in _jsonl(EXTERNAL / "math_verify_cases.jsonl")]
    keys += [row["gold"] for row in _jsonl(EXTERNAL / "reasoning_gym_cases.jsonl")]
    return keys


def _as_answer(key: str) -> str:
    return key if "\\boxed" in key or "####" in key else f"\\boxed{{{key}}}"


def _errors(keys: list[str]) -> dict[str, str]:
    kernel = MathKernel()
    verdicts = {key: kernel((_as_answer(key), key)) for key in dict.fromkeys(keys)}
    return {key: v["error"] for key, v in verdicts.items() if v.get("error")}


def test_no_real_key_is_refused_but_the_three_that_state_no_one_answer():
    keys = _repository_keys()
    assert len(keys) == 500 + 270 + 207
    errors = _errors(keys)
    assert set(errors) == set(REFUSED)
    for key, reason in REFUSED.items():
        assert reason in errors[key]


@pytest.mark.shared_data
def test_no_key_of_the_shared_math_problems_is_refused():
    rows = read_jsonl(QWEN)
    assert _errors([row["gt"] for row in rows] + [row["answer"] for row in rows]) == {}


@pytest.mark.parametrize(
    "key",
    [
        "Let's think step by step.",
        "The answer depends on the context.",
        r"\text{The answer depends on the context}",
        r"\boxed{\text{It cannot be determined from the information given}}",
        "The answer is 5.",
        "The total is 5+5=10.",
        "The answer is five",
        "The answer is 5",
        r"\text{There is no real solution}",
        "The sum equals 5",
    ],
)
def test_a_sentence_is_no_key(key):
    verdict = MathKernel()((_as_answer(key), key))
    assert verdict["passed"] is None and "bad_reference" in verdict["flags"]
    assert "a sentence, not an answer" in verdict["error"]


@pytest.mark.parametrize(
    "key",
    [
        r"\text{Evelyn}",
        r"\text{(C)}",
        r"\text{no solution}",
        "all real numbers",
        "neither even nor odd",
        "yes",
        "B",
        "New York City",
        "Alice, Bob, Carol, Dave and Eve",
        r"\text{4:30 p.m.}",
        "sin x cos x tan x log x exp x",
        r"100\text{ square units}",
        "x is even",
        r"\text{is prime}",
    ],
)
def test_a_short_text_answer_is_a_key(key):
    assert MathKernel()((_as_answer(key), key))["passed"] is True
