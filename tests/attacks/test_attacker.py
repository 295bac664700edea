"""The adaptive search's attacker LLM, over HTTP against the simulator's scripted attacker."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.simulator.fixtures import endpoint
from truegrade.attacks import AttackerLLM, AttackReport, run_attacks
from truegrade.attacks._attacker import (
    ATTACKER_MARKER,
    HIDDEN,
    Masker,
    Shown,
    attacker_messages,
    parse_candidates,
)
from truegrade.cli._app import app
from truegrade.core import Sample, load_grader
from truegrade.judge import EndpointConfig
from truegrade.simulator import _attacker as scripted

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAIVE = f"{EXAMPLES}/graders/naive_last_number.py:reward"
PRODUCTS = [(53, 31), (95, 18), (86, 19)]


def rows() -> list[Sample]:
    return [
        Sample(
            id=f"q{i}",
            prompt=f"What is {a} * {b}? Put the final answer in \\boxed{{}}.",
            reference=a * b,
        )
        for i, (a, b) in enumerate(PRODUCTS)
    ]


def attacker(sim, tag=None, candidates=4, **behaviour):
    options = endpoint(sim, tag, record_prompts=True, **behaviour)
    return {**options, "candidates": candidates}


def test_the_attacker_finds_the_hedge_the_last_number_reward_falls_for(simulator):
    naive = load_grader(NAIVE)
    # the library's master keys hold no number, so the library alone exploits nothing here
    alone = run_attacks(naive, rows(), attacks=["master_key"], budget=12, seed=0)
    assert alone.exploitability.items_exploited == 0
    report = run_attacks(
        naive, rows(), attacks=["master_key"], budget=12, seed=0, attacker=attacker(simulator)
    )
    assert report.exploitability.items_exploited == 3
    for result in report.search:
        assert result.exploited and result.source == "attacker"
        assert result.operators == ["attacker"]
        assert result.exploits_attacker >= 1 and result.exploits_operators == 0
        assert 0 < result.queries <= 12
    summary = report.attacker
    assert summary is not None and summary.model == "sim-judge"
    assert summary.exploits == sum(r.exploits_attacker for r in report.search)
    assert summary.requests == summary.completions == 3 and summary.stopped is None
    # every exploit is wrong: the hardened grader fails each one
    math = load_grader("math")
    for result, item in zip(report.search, rows(), strict=True):
        assert not math.grade(item.model_copy(update={"response": result.best_response})).passed


def test_the_budget_counts_the_attackers_candidates(simulator):
    options = attacker(simulator, candidates=4)
    # nothing fools the hardened grader, so every item spends its whole budget
    report = run_attacks(
        load_grader("math"), rows(), attacks=["master_key"], budget=7, attacker=options
    )
    for result in report.search:
        assert result.queries == 7
        # a generation is one mutation plus what room is left for the attacker: 1 + 4, 1 + 1
        assert result.attacker_requests == 2
        assert 0 < result.attacker_candidates <= 5
    stats = simulator.stats(options["headers"]["x-simulator-tag"])
    assert stats["requests"] == 6
    assert all("Write exactly 4 candidates" in p for p in stats["prompts"][:3])
    assert all("Write exactly 1 candidate:" in p for p in stats["prompts"][3:])


def test_malformed_attacker_output_costs_nothing_and_the_search_goes_on(simulator):
    report = run_attacks(
        load_grader(NAIVE),
        rows(),
        attacks=["master_key"],
        budget=6,
        seed=0,
        attacker=attacker(simulator, attacker_malformed=1.0),
    )
    for result in report.search:
        assert result.attacker_candidates == 0 and result.exploits_attacker == 0
        assert result.attacker_errors == {"bad_json": result.attacker_requests}
        assert result.queries == 6  # the mutations used the whole budget
    assert report.attacker is not None and report.attacker.errors["bad_json"] >= 3
    assert report.attacker.stopped is None  # it answered, badly: still asked


def test_an_attacker_that_never_answers_is_dropped(simulator):
    options = attacker(simulator, error_rate=1.0)
    options["max_retries"] = 0
    report = run_attacks(
        load_grader(NAIVE),
        rows()[:1],
        attacks=["master_key"],
        budget=12,
        seed=0,
        attacker=options,
    )
    (result,) = report.search
    assert result.attacker_errors == {"server_error": 3}
    assert result.queries == 12
    assert report.attacker is not None and "3 rounds" in (report.attacker.stopped or "")


def test_the_reference_never_reaches_the_attacker(simulator):
    options = attacker(simulator)
    # the library's hedges hold the gold, and the hardened grader's explanations name it
    report = run_attacks(
        load_grader("math"), rows(), attacks=["hedge_boxes"], budget=9, attacker=options
    )
    assert report.exploitability.items_exploited == 0
    prompts = simulator.stats(options["headers"]["x-simulator-tag"])["prompts"]
    assert len(prompts) == sum(r.attacker_requests for r in report.search) >= 6
    golds = {str(a * b) for a, b in PRODUCTS}
    for prompt in prompts:
        assert prompt.startswith(ATTACKER_MARKER)
        text = re.sub(r"<<<(BEGIN|END) [A-Z0-9 ]+ [0-9a-f]+>>>", "", prompt)  # the fences' hex
        assert not [g for g in golds if g in text]
        assert HIDDEN in text  # there was something to hide, and it was hidden


def test_an_attacker_needs_an_oracle_and_a_budget():
    config = {"endpoint": "http://127.0.0.1:9/v1", "model": "m"}
    text = [Sample(id=1, prompt="Say hi.", reference="hello there")]
    with pytest.raises(ValueError, match="oracle"):
        run_attacks(load_grader(NAIVE), text, kind="text", budget=5, attacker=config)
    with pytest.raises(ValueError, match="budget"):
        run_attacks(load_grader(NAIVE), rows(), attacker=config)


def test_the_attack_command_with_an_attacker(simulator, tmp_path):
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in rows()))
    out = tmp_path / "report.json"
    args = ["attack", data, "-g", NAIVE, "--attacks", "master_key", "--budget", 10, "-q"]
    result = CliRunner().invoke(
        app,
        [str(a) for a in args]
        + [
            "--attacker-endpoint",
            simulator.base_url,
            "--attacker-model",
            "sim",
            "--attacker-candidates",
            "3",
            "--out",
            str(out),
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "exploits written by the attacker: " in result.output
    assert "3 of 3 items exploited; the search's own in " in result.output
    assert "search exploits (first 3 of 3)" in result.output  # each one shown
    report = AttackReport.model_validate(json.loads(out.read_text()))
    assert report.attacker is not None and report.attacker.candidates_per_round == 3
    assert report.exploitability.items_exploited == 3
    alone = CliRunner().invoke(app, [str(a) for a in args] + ["--attacker-model", "sim"])
    assert alone.exit_code == 2 and "go together" in alone.output


def test_parsing_is_lenient_and_says_why_nothing_came():
    assert parse_candidates('{"candidates": ["a", "b", "c"]}', 2) == (["a", "b"], None)
    assert parse_candidates('Sure:\n```json\n["a", {"text": "b"}, 3]\n```\nDone.', 5) == (
        ["a", "b"],
        None,
    )
    assert parse_candidates('I think {"responses": [{"response": "x"}]} works', 1) == (["x"], None)
    assert parse_candidates("no JSON here, sorry", 3) == ([], "bad_json")
    assert parse_candidates('{"candidates": [', 3) == ([], "bad_json")
    assert parse_candidates('{"candidates": []}', 3) == ([], "no_candidates")
    assert parse_candidates('{"ideas": "many"}', 3) == ([], "no_candidates")


def test_the_masker_hides_the_reference_in_its_forms_but_not_the_prompt():
    mask = Masker(1643, "What is 53 * 31?")
    assert mask("1643, 1,643 and 1643.0001 or 16.43; 164300; 53 and 31") == (
        f"{HIDDEN}, {HIDDEN} and {HIDDEN} or {HIDDEN}; {HIDDEN}; 53 and 31"
    )
    words = Masker("Boiling water kills most bacteria.", "How do I make water safe?")
    assert words("Just boil it: bacteria die. Water is fine.") == (
        f"Just boil it: {HIDDEN} die. Water is fine."
    )
    choice = Masker("B", "Pick A or B.")  # in the prompt: nothing to hide
    assert choice("B") == "B"
    letter = Masker("C", "Pick one of the options.")
    assert letter("The answer is C, case closed.") == f"The answer is {HIDDEN}, case closed."
    nested = Masker({"answer": "Paris", "aliases": ["City of Light"]}, "Capital of France?")
    assert nested("paris, the city of light") == f"{HIDDEN}, the {HIDDEN}"


def test_the_request_format_is_the_one_the_simulator_reads():
    assert ATTACKER_MARKER == scripted.ATTACKER_MARKER
    messages = attacker_messages(
        "What is 2 * 21?", [Shown("x", 0.2, False, ("no_answer",), "why")], 3, threshold=0.5
    )
    text = "\n\n".join(m["content"] for m in messages)
    assert scripted._TASK.search(text).group("body") == "What is 2 * 21?"
    assert "exactly 3 candidates" in text and "score 0.2, passed: no, flags: no_answer" in text
    assert AttackerLLM.coerce(EndpointConfig(model="m")).candidates == 4
    with pytest.raises(ValueError, match="at least 1"):
        AttackerLLM.coerce({"model": "m", "candidates": 0})


def test_the_docstring_examples_run():
    import doctest

    from truegrade.attacks import _attacker

    result = doctest.testmod(_attacker, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0
