"""The attack engine on tiny reward models: a single member and ensembles of three.

A reward model with random weights has no notion of a right answer, so the library's text
attacks find responses it rewards; what must hold is the arithmetic of the ensemble: a
response the worst-case ensemble rewards is rewarded by every member, so per attack the
ensemble is exploited at most as often as its least exploited member.
"""

from __future__ import annotations

import pytest

from tests.graders.reward_model.fixtures import rm_spec, tiny_rms
from truegrade.attacks import AttackReport, run_attacks
from truegrade.core import Sample, load_grader

__all__ = ["tiny_rms"]

ITEMS = [
    Sample(id=i, prompt=prompt, reference=reference)
    for i, (prompt, reference) in enumerate(
        [
            ("what is two plus two", "the answer is four"),
            ("what is the capital of france", "the capital of france is paris"),
            ("please help me with this question", "yes i think so"),
            ("is this correct", "no it is wrong"),
        ]
    )
]
THRESHOLD = 0.0


def exploited(report: AttackReport) -> dict[str, int]:
    return {a.name: a.exploited for a in report.attacks}


@pytest.fixture(scope="module")
def reports(tiny_rms) -> dict[str, AttackReport]:
    members = [rm_spec(tiny_rms[n], n) for n in ("a", "b", "c")]
    graders = {n: load_grader(m) for n, m in zip("abc", members, strict=True)}
    graders["min"] = load_grader({"type": "ensemble", "combine": "min", "members": members})
    graders["mean"] = load_grader({"type": "ensemble", "members": members})
    return {n: run_attacks(g, ITEMS, threshold=THRESHOLD) for n, g in graders.items()}


def test_reward_models_and_their_ensembles_are_attacked_as_text_graders(reports):
    for report in reports.values():
        assert report.kind == "text"
        assert report.items == 4 and report.controls.tried == 4
        assert all(not a.grader_errors for a in report.attacks)
    assert reports["a"].exploitability.items_exploited > 0  # random weights: master keys pay


def test_the_worst_case_ensemble_is_exploited_no_more_than_any_member(reports):
    members = [exploited(reports[n]) for n in "abc"]
    for attack, count in exploited(reports["min"]).items():
        assert count <= min(m[attack] for m in members), attack
    total = {n: sum(exploited(reports[n]).values()) for n in reports}
    assert total["min"] < min(total[n] for n in "abc")
    assert (
        0
        < reports["min"].exploitability.items_exploited
        <= min(reports[n].exploitability.items_exploited for n in "abc")
    )  # fewer exploits, not none: an ensemble reduces overoptimization, it does not remove it


def test_the_search_runs_within_budget_on_a_member_and_an_ensemble(tiny_rms):
    members = [rm_spec(tiny_rms[n], n) for n in ("a", "b")]
    for spec in (members[0], {"type": "ensemble", "combine": "min", "members": members}):
        report = run_attacks(
            load_grader(spec), ITEMS[:2], attacks=["echo_prompt"], budget=12, seed=0, threshold=2.0
        )
        assert len(report.search) == 2
        for result in report.search:
            assert 0 < result.queries <= 12
            assert result.exploited == (result.best_score > 2.0)
