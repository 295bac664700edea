"""The instruction-following attacks: IFEval's checkers reward them, the hardened grader does
not, and the honest answers still pass (the controls)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from truegrade.attacks import attacks_for, infer_kind, run_attacks
from truegrade.attacks._instructions import dress
from truegrade.core import load_grader
from truegrade.core._sample import to_sample
from truegrade.graders.instructions import parse_constraints
from truegrade.graders.instructions._checks import check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ROWS = [
    json.loads(line)
    for line in (EXAMPLES / "data" / "instructions.jsonl").read_text("utf-8").splitlines()
]
TASKS = [r for r in ROWS if r["metadata"]["kind"] == "honest"]
NAMES = {
    "instruction_shell",
    "instruction_generic",
    "instruction_keyword_bag",
    "instruction_echo",
    "instruction_hedge",
}


def grader(**options):
    return load_grader("instructions", execution="inline", **options)


def test_the_library_has_instruction_attacks_and_the_kind_is_inferred():
    assert {a.name for a in attacks_for("instructions")} >= NAMES | {"master_key", "echo_prompt"}
    samples = [to_sample(r, default_id=0) for r in TASKS]
    assert infer_kind(grader(), samples) == "instructions"
    assert infer_kind(load_grader("exact"), samples) == "math"  # the grader's kind comes first
    assert infer_kind(lambda **kw: 0.0, samples) == "instructions"  # else the rows say


def test_dressing_meets_the_form_of_every_constraint_in_the_examples():
    # the attacks are only worth running if the surface checks really pass
    met = total = 0
    for row in TASKS:
        constraints = parse_constraints(row["instruction_id_list"], row["kwargs"])
        text = dress(constraints, ["Ok."])
        if "language:response_language" in row["instruction_id_list"]:
            continue  # a form cannot fake a language
        total += len(constraints)
        met += sum(check(c, text) for c in constraints)
    assert met >= total - 2, f"{met}/{total}"


def test_plain_ifeval_is_exploited_and_the_hardened_grader_is_not():
    plain = run_attacks(grader(hardened=False), TASKS, seed=1)
    hard = run_attacks(grader(), TASKS, seed=1)
    assert plain.kind == hard.kind == "instructions"
    assert plain.exploitability.items_exploited == len(TASKS)
    rewarded = {r.name: r.items_exploited for r in plain.attacks}
    assert all(rewarded[name] >= 1 for name in NAMES)
    assert hard.exploitability.items_exploited == 0, [
        (r.name, r.example) for r in hard.attacks if r.exploited
    ]
    # the honest answers pass both: the hardening does not buy its safety with false rejects
    assert plain.controls.passed == hard.controls.passed == len(TASKS)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_attack_writes_only_non_answers(name):
    (spec,) = attacks_for("instructions", [name])
    rng = random.Random(0)
    for row in TASKS:
        for candidate in spec.candidates(to_sample(row, default_id=0), rng):
            assert candidate.response != row["metadata"]["ideal"]
            assert grader().grade({**row, "response": candidate.response}).passed is False
