"""``Ensemble``: mean, worst case and uncertainty-penalised scores, by hand; disagreement per
item; an error in any member is an error of the whole; built from a spec, tiny reward models
included."""

from __future__ import annotations

import statistics

import pytest

from tests.core.test_compose import Fixed
from tests.graders.reward_model.fixtures import tiny_rms
from truegrade.core import Ensemble, Sample, SpecError, load_grader

__all__ = ["tiny_rms"]

ROWS = [{"id": i, "response": r} for i, r in enumerate(["x", "y", "err"])]


def members() -> list[Fixed]:
    return [
        Fixed("a", {"x": (1.0, True, None), "y": (0.5, None, None), "err": (1.0, True, None)}),
        Fixed("b", {"x": (2.0, True, None), "y": (0.5, None, None), "err": (0.0, None, "down")}),
        Fixed("c", {"x": (6.0, False, None), "y": (0.5, None, None), "err": (2.0, None, None)}),
    ]


@pytest.mark.parametrize(
    ("combine", "lam", "expected"),
    [
        ("mean", 1.0, 3.0),
        ("min", 1.0, 1.0),
        # mean 3, population variance (4 + 1 + 9) / 3 = 14 / 3
        ("uncertainty", 1.0, 3.0 - 14 / 3),
        ("uncertainty", 0.5, 3.0 - 0.5 * 14 / 3),
        ("uncertainty", 0.0, 3.0),
    ],
)
def test_the_combined_score_by_hand(combine, lam, expected):
    x, y, _ = Ensemble(members(), combine=combine, lam=lam).grade_batch(ROWS)
    assert x.score == pytest.approx(expected)
    assert y.score == pytest.approx(0.5)  # members that agree: every rule gives their score
    assert x.error is None and x.passed is None


def test_disagreement_and_spread_are_reported_per_item():
    x, y, _ = Ensemble(members()).grade_batch(ROWS)
    assert x.subscores["disagreement"] == pytest.approx(statistics.pstdev([1.0, 2.0, 6.0]))
    assert x.subscores["spread"] == pytest.approx(5.0)
    assert (y.subscores["disagreement"], y.subscores["spread"]) == (0.0, 0.0)
    assert {k: x.subscores[k] for k in ("a", "b", "c", "a.inner")} == {
        "a": 1.0,
        "b": 2.0,
        "c": 6.0,
        "a.inner": 1.0,
    }
    assert set(x.flags) == {"a", "b", "c"}
    assert "disagreement 2.16" in x.explanation
    assert x.latency_ms == pytest.approx(3.0)


def test_an_error_in_any_member_is_an_error_of_the_whole():
    *_, err = Ensemble(members(), combine="min", pass_threshold=0.0).grade_batch(ROWS)
    assert err.error == "b: down"
    assert err.score == 0.0 and err.passed is None  # never the 0.0 of a broken member as a min
    assert err.subscores["a"] == 1.0 and err.subscores["c"] == 2.0  # the rest is still shown


def test_pass_threshold_applies_to_the_combined_score():
    x, y, _ = Ensemble(members(), combine="min", pass_threshold=0.75).grade_batch(ROWS)
    assert (x.passed, y.passed) == (True, False)


def test_an_ensemble_from_a_spec():
    grader = load_grader(
        {
            "type": "ensemble",
            "name": "jury",
            "combine": "uncertainty",
            "lambda": 2.0,
            "pass_threshold": 0.5,
            "members": ["exact", {"type": "regex", "pattern": "^4", "name": "starts_with_4"}],
        }
    )
    assert isinstance(grader, Ensemble) and grader.lam == 2.0 and grader.name == "jury"
    (agree, split) = grader.grade_batch(
        [
            {"id": 1, "response": "4", "reference": "4"},
            {"id": 2, "response": "42", "reference": "4"},
        ]
    )
    assert agree.score == 1.0 and agree.passed is True
    # members 0 and 1: mean 0.5, variance 0.25, lambda 2
    assert split.score == pytest.approx(0.0) and split.subscores["disagreement"] == 0.5
    assert grader.spec["lambda"] == 2.0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"members": ["exact"]}, "two or more"),
        ({"members": ["exact", "numeric"], "combine": "median"}, "mean, min or uncertainty"),
        ({"members": ["exact", "numeric"], "lambda": -1}, "lambda must be >= 0"),
        ({"members": ["exact", "numeric"], "weights": [1, 2]}, "unknown: \\['weights'\\]"),
        ({"members": ["exact", "exact"]}, "both named 'exact'"),
    ],
)
def test_bad_ensemble_specs(spec, message):
    with pytest.raises(SpecError, match=message):
        load_grader({"type": "ensemble", **spec})


def test_an_ensemble_of_tiny_reward_models_is_the_mean_of_its_members(tiny_rms):
    rows = [
        Sample(id=i, prompt="two plus two", response=r)
        for i, r in enumerate(["four", "five", "the answer is four", "no"])
    ]
    specs = [
        {"type": "reward_model", "name": name, "path": str(tiny_rms[name]), "device": "cpu"}
        for name in ("a", "b", "c")
    ]
    alone = [[g.score for g in load_grader(s).grade_batch(rows)] for s in specs]
    ensemble = load_grader({"type": "ensemble", "members": specs, "combine": "uncertainty"})
    for i, g in enumerate(ensemble.grade_batch(rows)):
        item = [scores[i] for scores in alone]
        assert g.score == pytest.approx(statistics.fmean(item) - statistics.pvariance(item))
        assert g.subscores["disagreement"] == pytest.approx(statistics.pstdev(item))
        assert [g.subscores[n] for n in ("a", "b", "c")] == pytest.approx(item)
