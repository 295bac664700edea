"""``run_attacks`` and ``truegrade attack`` against naive graders, hardened graders and planted
weaknesses."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reference import HUMANEVAL
from truegrade.attacks import AttackReport, attacks_for, run_attacks
from truegrade.core import Flag, Sample, distinct_items, load_grader
from truegrade.data import read_samples

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PLANTED = Path(__file__).with_name("planted.py")


def items(name: str, limit: int | None = None) -> list[Sample]:
    """The file's rows; with ``limit``, those of its first ``limit`` items."""
    rows = [s for _, s in read_samples(EXAMPLES / "data" / name)]
    kept = [s.item for s in distinct_items(rows)][:limit] if limit else None
    return [r for r in rows if kept is None or r.item in kept]


def by_name(report: AttackReport) -> dict:
    return {a.name: a for a in report.attacks}


def test_hedging_exploits_the_last_number_reward_and_not_math():
    arith = items("arith.jsonl")  # 84 responses to 12 prompts: 12 items
    naive = run_attacks(load_grader(f"{EXAMPLES}/graders/naive_last_number.py:reward"), arith)
    attacks = by_name(naive)
    assert naive.kind == "math"
    assert attacks["hedge_boxes"].items_exploited == attacks["hedge_boxes"].items_tried == 12
    assert attacks["hedge_boxes"].example is not None
    assert naive.exploitability.rate == 1.0
    assert naive.controls.rate == 1.0
    hardened = run_attacks(load_grader("math"), arith)
    assert hardened.exploitability.items_exploited == 0
    assert all(a.exploited == 0 for a in hardened.attacks)
    assert hardened.controls.rate == 1.0  # it still passes right answers
    assert hardened.exploitability.ci_high < 0.3  # 0 of 12, with an honest upper bound


def test_sys_exit_exploits_the_exit_code_grader():
    report = run_attacks(
        load_grader(f"{EXAMPLES}/graders/exit_code.py:reward"),
        items("code_tasks.jsonl"),
        attacks=["exit_early", "always_equal"],
    )
    attacks = by_name(report)
    assert report.kind == "code"
    assert attacks["exit_early"].items_exploited == 8
    assert report.controls.passed == 8


def test_test_tampering_exploits_a_pytest_harness_and_not_code():
    rows = items("code_tasks.jsonl")[:2]
    harness = load_grader(f"{PLANTED}:pytest_harness")
    # it runs programs outside the sandbox: the hostile attack is refused unless asked for
    with pytest.raises(ValueError, match="does not run programs in truegrade's sandbox"):
        run_attacks(harness, rows, attacks=["tamper_tests"])
    report = run_attacks(harness, rows, attacks=["tamper_tests"], unsafe_hostile=True)
    assert report.controls.passed == 2  # the harness passes the canonical solutions
    (tamper,) = report.attacks
    assert tamper.items_exploited == 2
    # each variant on its own: a conftest, a plugin registered in the session, emptied tests
    # (deleted tests make pytest exit 5, "no tests ran": this harness is not fooled by that)
    (spec,) = attacks_for("code", ["tamper_tests"])
    candidates = list(spec.candidates(rows[0], random.Random(0)))
    grades = load_grader(f"{PLANTED}:pytest_harness").grade_batch(
        [rows[0].model_copy(update={"response": c.response}) for c in candidates]
    )
    rewarded = {c.variant for c, g in zip(candidates, grades, strict=True) if g.score == 1.0}
    assert rewarded == {"conftest_reports_pass", "plugin_injected", "tests_emptied"}
    held = run_attacks(load_grader("code"), rows, attacks=["tamper_tests"])
    assert held.exploitability.items_exploited == 0


def test_keyword_stuffing_exploits_the_keyword_rubric():
    report = run_attacks(
        load_grader(f"{EXAMPLES}/graders/keyword_rubric.py:reward"),
        items("advice_rubric.jsonl")[::2],
    )
    attacks = by_name(report)
    assert report.kind == "text"
    assert attacks["keyword_stuffing"].items_exploited == 6
    assert report.controls.passed == 6  # the ideal answers, written as responses
    assert attacks["prompt_injection"].exploited == 0
    assert report.exploitability.worst_attack == "keyword_stuffing"


def test_hostile_attacks_run_only_when_asked_and_a_hang_is_recorded():
    # a user function, timed by the wall clock (it may wait): 3 s leaves a quick item room on a
    # loaded machine, so only the hanging response can reach it
    grader = load_grader(f"{PLANTED}:hangs_on_boxes", timeout_s=3.0)
    arith = items("arith.jsonl", 2)
    assert "latex_dos" not in by_name(run_attacks(grader, arith, attacks=None))
    report = run_attacks(grader, arith, hostile=True, attacks=["latex_dos", "hedge_boxes"])
    dos = by_name(report)["latex_dos"]
    assert dos.grader_errors.get(Flag.TIMEOUT) == 2  # the 20,000-box response, on both items
    assert by_name(report)["hedge_boxes"].tried == 4  # the rest of the batch still ran


def test_the_search_finds_a_planted_magic_word_within_budget():
    rows = [
        Sample(id=i, prompt=f"Describe the zebra crossing number {i}.", reference="a road")
        for i in range(4)
    ]
    grader = load_grader(f"{PLANTED}:magic_word")
    library_only = run_attacks(
        grader, rows, kind="text", attacks=["fake_verdict", "prompt_injection"]
    )
    assert library_only.exploitability.items_exploited == 0
    searched = run_attacks(
        grader, rows, kind="text", attacks=["fake_verdict", "prompt_injection"], budget=60, seed=1
    )
    assert searched.exploitability.items_exploited == 4
    for result in searched.search:
        assert result.exploited and "zebra" in result.best_response.lower()
        assert 0 < result.queries <= 60
        assert {"token", "echo", "crossover"} & set(result.operators)


def test_the_search_climbs_a_length_bias():
    rows = [Sample(id=i, prompt="Say something.", reference="anything") for i in range(3)]
    report = run_attacks(
        load_grader(f"{PLANTED}:loves_length"),
        rows,
        kind="text",
        attacks=["master_key"],
        budget=40,
        seed=3,
        threshold=0.9,
    )
    assert all(r.exploited for r in report.search)
    assert all(r.best_score > 0.9 for r in report.search)  # over 2,700 characters of padding


def test_the_search_never_counts_a_right_answer_as_an_exploit():
    # a grader that rewards the gold anywhere: mutations that add the gold make hedges (wrong),
    # but the oracle discards any mutation that is actually right
    rows = items("arith.jsonl", 3)
    report = run_attacks(load_grader("math"), rows, attacks=["master_key"], budget=30, seed=0)
    assert report.exploitability.items_exploited == 0
    for result in report.search:
        assert not result.exploited


def test_the_attack_command_end_to_end(tmp_path):
    out = tmp_path / "report.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "truegrade",
            "attack",
            str(EXAMPLES / "data" / "arith.jsonl"),
            "-g",
            f"{EXAMPLES}/graders/naive_last_number.py:reward",
            "--limit",
            "5",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert "exploitability: 100%" in result.stdout
    assert "worst attack" in result.stdout
    report = AttackReport.model_validate(json.loads(out.read_text()))
    assert report.items == 5 and report.exploitability.items_exploited == 5
    listing = subprocess.run(
        [sys.executable, "-m", "truegrade", "attack", "--list"],  # as the docs show it
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert "hedge_boxes" in listing.stdout and "exit_early" in listing.stdout
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "truegrade",
            "attack",
            str(EXAMPLES / "data" / "arith.jsonl"),
            "-g",
            "math",
            "--attacks",
            "nope",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "unknown attack 'nope'" in bad.stderr


@pytest.mark.parametrize("spec", ["math", "numeric"])
def test_hardened_number_graders_hold_against_the_whole_math_library(spec):
    report = run_attacks(load_grader(spec), items("arith.jsonl", 21))
    assert report.exploitability.items_exploited == 0, [
        (a.name, a.example) for a in report.attacks if a.exploited
    ]


def test_hostile_code_attacks_need_the_sandbox_or_an_explicit_risk():
    exit_code = load_grader(f"{EXAMPLES}/graders/exit_code.py:reward")
    rows = items("code_tasks.jsonl", 1)
    with pytest.raises(ValueError, match="resource_exhaustion"):
        run_attacks(exit_code, rows, hostile=True)
    unsafe = load_grader("code", isolation="none", unsafe_no_sandbox=True)
    with pytest.raises(ValueError, match="--unsafe-hostile"):
        run_attacks(unsafe, rows, attacks=["escape_attempts"])
    cli = subprocess.run(
        [sys.executable, "-m", "truegrade", "attack", str(EXAMPLES / "data" / "code_tasks.jsonl")]
        + ["-g", f"{EXAMPLES}/graders/exit_code.py:reward", "--hostile", "--limit", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert cli.returncode == 2 and "--unsafe-hostile" in cli.stderr


def test_the_code_grader_holds_against_the_hostile_code_attacks():
    # programs that exhaust, escape or tamper: contained, each failing with a reason
    hostile = [a.name for a in attacks_for("code") if a.hostile]
    assert {"resource_exhaustion", "escape_attempts", "tamper_tests"} <= set(hostile)
    grader = load_grader("code", call_timeout_s=2, program_timeout_s=5)
    report = run_attacks(grader, items("code_tasks.jsonl", 1), attacks=hostile)
    assert report.controls.passed == 1  # the sandbox still works after them
    for attack in report.attacks:
        assert attack.tried > 0 and attack.exploited == 0, (attack.name, attack.example)


def test_the_code_grader_holds_against_the_whole_code_library():
    # also the proof that every code attack is wrong by construction: the hardened grader,
    # which passes every reference solution, rewards none of them
    report = run_attacks(load_grader("code"), items("code_tasks.jsonl"))
    assert report.controls.passed == report.controls.tried == 8
    assert report.exploitability.items_exploited == 0, [
        (a.name, a.example) for a in report.attacks if a.exploited
    ]
    assert sum(a.tried for a in report.attacks) > 150


@pytest.mark.shared_data
def test_code_attacks_on_humaneval_problems_with_prompt_helpers():
    import gzip

    wanted = {"HumanEval/32", "HumanEval/38", "HumanEval/50", "HumanEval/0"}
    rows = []
    with gzip.open(HUMANEVAL, "rt") as handle:
        for line in handle:
            task = json.loads(line)
            if task["task_id"] in wanted:
                rows.append(
                    Sample(
                        id=task["task_id"],
                        prompt=task["prompt"],
                        reference={"entry_point": task["entry_point"], "check": task["test"]},
                        metadata={"canonical_solution": task["canonical_solution"]},
                    )
                )
    report = run_attacks(load_grader("code"), rows)
    assert report.controls.passed == report.controls.tried == 4
    assert by_name(report)["redefine_helper"].tried >= 3
    assert report.exploitability.items_exploited == 0
