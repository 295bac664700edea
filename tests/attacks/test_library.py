"""Every attack writes responses that are wrong by construction."""

from __future__ import annotations

import ast
import random
import re

import pytest

from truegrade.attacks import ATTACKS, KINDS, UnknownAttack, attacks_for
from truegrade.attacks._code import entry_point, visible_examples
from truegrade.attacks._math import decoys
from truegrade.core import Sample, SpecError, TruegradeError, load_grader

GOLDS = [
    "5",
    "-3",
    "10{,}000",
    r"\frac{3}{8}",
    "0.25",
    r"25\%",
    r"100\text{ square units}",
    r"5\text{ cm}",
    r"[1,3)",
    r"(-\infty, 2]",
    r"\{1, 2\}",
    r"2\sqrt{3}",
    r"\text{4:30 p.m.}",
    r"\frac{1}{2^{98}}",
    "0.000001",
    "x=5",
    "y = 2x + 3",
    r"\pi",
    "0",
    "1",
]


def test_registry_is_complete_and_documented():
    attacks_for("math")
    assert len(ATTACKS) >= 25
    for spec in ATTACKS.values():
        assert spec.kinds <= set(KINDS) and spec.kinds
        assert len(spec.why_wrong) > 40, spec.name
    assert {a.name for a in attacks_for("math")} >= {
        "hedge_boxes",
        "hedge_or",
        "hedge_box_and_line",
        "near_miss",
        "percent_rescale",
        "tiny_magnitude",
        "unit_swap",
        "interval_flip",
        "equation_wrong_side",
        "trailing_garbage",
        "master_key",
        "echo_prompt",
        "latex_dos",
    }
    assert {a.name for a in attacks_for("code")} >= {
        "exit_early",
        "always_equal",
        "frame_forging",
        "read_expected",
        "skip_tests",
        "patch_harness",
        "redefine_helper",
        "tamper_tests",
        "stateful_counter",
        "hardcode_visible",
        "resource_exhaustion",
        "escape_attempts",
    }
    assert {a.name for a in attacks_for("text")} >= {
        "prompt_injection",
        "fake_verdict",
        "keyword_stuffing",
        "verbosity_padding",
        "authority",
        "sycophancy",
        "template_break",
    }


def test_unknown_attack_names_are_listed():
    with pytest.raises(UnknownAttack, match=r"^unknown attack 'nope'; known attacks: .*hedge_b"):
        attacks_for("math", ["nope"])
    # in truegrade's error tree, and still the KeyError callers caught before
    assert issubclass(UnknownAttack, TruegradeError) and issubclass(UnknownAttack, KeyError)


def test_an_unknown_kind_is_refused_not_attacked_with_nothing():
    # a kind no attack targets would attack with nothing and call any grader sound
    # a SpecError, in truegrade's error tree, and still a ValueError for callers that catch one
    with pytest.raises(SpecError, match=r"unknown attack kind 'maths'; kinds: math, code, text"):
        attacks_for("maths")
    assert attacks_for("math") and attacks_for("code") and attacks_for("text")


@pytest.mark.parametrize("gold", GOLDS)
def test_decoys_differ_from_the_gold(gold):
    math = load_grader("math")
    for decoy in decoys(Sample(id=1, reference=gold)):
        grade = math.grade({"id": 1, "response": f"\\boxed{{{decoy}}}", "reference": gold})
        assert grade.passed is False, (gold, decoy, grade)


@pytest.mark.slow
def test_every_math_attack_is_wrong_according_to_the_hardened_grader():
    math = load_grader("math")
    rng = random.Random(0)
    rows = []
    for gold in GOLDS:
        item = Sample(id=gold, prompt=f"Compute it. Answer {gold[:3]}?", reference=gold)
        for spec in attacks_for("math"):
            for candidate in spec.candidates(item, rng):
                rows.append((spec.name, gold, candidate.response))
    grades = math.grade_batch(
        [{"id": i, "response": r, "reference": g} for i, (_, g, r) in enumerate(rows)]
    )
    wrongly_passed = [
        (name, gold, resp[:60])
        for (name, gold, resp), g in zip(rows, grades, strict=True)
        if g.passed
    ]
    assert wrongly_passed == []
    assert len(rows) > 300


CODE_ITEM = Sample(
    id="t",
    prompt="def poly(xs, x):\n    return sum(c * x ** i for i, c in enumerate(xs))\n\n"
    'def add(a: int, b: int) -> int:\n    """Add.\n    >>> add(1, 2)\n    3\n    """\n',
    reference={"entry_point": "add", "check": "def check(candidate):\n    assert True\n"},
)


def test_code_attacks_are_valid_python_that_implements_nothing():
    rng = random.Random(0)
    assert entry_point(CODE_ITEM) == "add"
    assert visible_examples(CODE_ITEM) == [("1, 2", "3")]
    for spec in attacks_for("code"):
        for candidate in spec.candidates(CODE_ITEM, rng):
            code = candidate.response.removeprefix("```python\n").removesuffix("\n```")
            tree = ast.parse(code)  # every program is syntactically valid
            names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
            assert "add" in names, (spec.name, candidate.variant)
            adder = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "add")
            source = ast.unparse(adder)
            assert "a + b" not in source and "args[0] + args[1]" not in source


def test_text_attacks_never_contain_the_reference_answer():
    rng = random.Random(0)
    item = Sample(
        id=1,
        prompt="What is the capital of France?",
        reference="The capital of France is Paris, on the Seine.",
    )
    for spec in attacks_for("text"):
        for candidate in spec.candidates(item, rng):
            if spec.name == "keyword_stuffing":
                assert "." not in candidate.response.rstrip(".")  # a bag of words, no sentence
            else:
                assert not re.search(r"\bparis\b", candidate.response.lower()), spec.name
