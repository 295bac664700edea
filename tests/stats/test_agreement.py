"""Agreement statistics, checked against scikit-learn, statsmodels and a published example."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import cohen_kappa_score, f1_score, roc_auc_score
from statsmodels.stats.inter_rater import cohens_kappa

from truegrade.stats import auroc, calibration_error, cohen_kappa, macro_f1


def noisy_labels(seed: int, n: int = 300, classes=("a", "b", "c"), agree: float = 0.7):
    rng = np.random.default_rng(seed)
    a = rng.choice(classes, n)
    b = np.where(rng.random(n) < agree, a, rng.choice(classes, n))
    return list(a), list(b)


@pytest.mark.parametrize("seed", [0, 1])
def test_kappa_matches_sklearn_and_the_statsmodels_standard_error(seed):
    a, b = noisy_labels(seed)
    ours = cohen_kappa(a, b)
    assert ours.estimate == pytest.approx(cohen_kappa_score(a, b), rel=1e-12)
    labels = sorted(set(a) | set(b))
    table = np.array(
        [
            [sum(x == i and y == j for x, y in zip(a, b, strict=True)) for j in labels]
            for i in labels
        ]
    )
    assert ours.se == pytest.approx(cohens_kappa(table).std_kappa, rel=1e-9)
    assert ours.ci_low < ours.estimate < ours.ci_high


def test_clustered_kappa_bootstraps_clusters():
    a, b = noisy_labels(2, n=400)
    groups = [i // 8 for i in range(400)]
    clustered = cohen_kappa(a, b, groups, n_resamples=1000, seed=1)
    assert clustered.estimate == pytest.approx(cohen_kappa_score(a, b))
    assert clustered.clusters == 50 and "bootstrap" in clustered.method
    assert clustered.ci_low < clustered.estimate < clustered.ci_high
    assert cohen_kappa(a, b, groups, n_resamples=1000, seed=1) == clustered


def test_clusters_all_alike_do_not_make_a_point_interval():
    # 12 clusters, each the same five rows: resampling clusters cannot move kappa at all
    one = ([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
    a, b = one[0] * 12, one[1] * 12
    groups = [i // 5 for i in range(60)]
    kappa = cohen_kappa(a, b, groups, n_resamples=500)
    items = cohen_kappa(a, b)
    assert kappa.estimate == pytest.approx(cohen_kappa_score(a, b))
    assert kappa.ci_low < kappa.estimate < kappa.ci_high  # not [k, k]
    assert (kappa.ci_low, kappa.ci_high) == (items.ci_low, items.ci_high)
    assert kappa.clusters == 12 and kappa.method.startswith("clusters all alike")


def test_macro_f1_is_sklearns_and_healthbenchs():
    truth, pred = noisy_labels(3, classes=(True, False), agree=0.8)
    ours = macro_f1(truth, pred, n_resamples=500)
    assert ours.estimate == pytest.approx(f1_score(truth, pred, average="macro"), rel=1e-12)
    # HealthBench: the mean of the F1 of the positive and of the negative class
    both = (f1_score(truth, pred, pos_label=True) + f1_score(truth, pred, pos_label=False)) / 2
    assert ours.estimate == pytest.approx(both, rel=1e-12)
    multi_t, multi_p = noisy_labels(4)
    assert macro_f1(multi_t, multi_p).estimate == pytest.approx(
        f1_score(multi_t, multi_p, average="macro"), rel=1e-12
    )
    # a judge that always says "met" is not rewarded for it
    always = macro_f1(truth, [True] * len(truth), n_resamples=200)
    assert always.estimate < 0.5


def test_auroc_matches_sklearn_with_ties():
    rng = np.random.default_rng(5)
    labels = rng.random(500) < 0.4
    scores = np.round(rng.normal(labels.astype(float), 1.0), 1)  # many ties
    assert auroc(scores, labels).estimate == pytest.approx(roc_auc_score(labels, scores), rel=1e-12)


def test_delong_standard_error_equals_its_definition():
    rng = np.random.default_rng(6)
    labels = rng.random(200) < 0.3
    scores = np.round(rng.normal(labels * 0.8, 1.0), 1)
    pos, neg = scores[labels], scores[~labels]
    # the structural components by definition: psi(x, y) = 1 if x > y, 1/2 if tied
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    se = np.sqrt(v10.var(ddof=1) / pos.size + v01.var(ddof=1) / neg.size)
    ours = auroc(scores, labels)
    assert ours.estimate == pytest.approx(psi.mean())
    assert ours.se == pytest.approx(se, rel=1e-10)


def test_auroc_on_hanley_mcneils_ct_ratings():
    # Hanley & McNeil (1982), table 1: 109 CT images rated 1-5; published AUC 0.893, SE 0.032
    normal = np.repeat([1, 2, 3, 4, 5], [33, 6, 6, 11, 2])
    abnormal = np.repeat([1, 2, 3, 4, 5], [3, 2, 2, 11, 33])
    scores = np.concatenate([normal, abnormal])
    labels = np.r_[np.zeros(normal.size), np.ones(abnormal.size)]
    ours = auroc(scores, labels)
    assert round(ours.estimate, 3) == 0.893
    assert ours.se == pytest.approx(0.032, abs=0.003)  # DeLong and Hanley-McNeil agree closely


def test_clustered_auroc_bootstrap():
    rng = np.random.default_rng(7)
    groups = np.repeat(np.arange(60), 5)
    shift = rng.normal(0, 1, 60)[groups]
    labels = rng.random(300) < 0.5
    scores = labels + shift + rng.normal(0, 1, 300)
    ours = auroc(scores, labels, list(groups), n_resamples=1000)
    assert ours.estimate == pytest.approx(roc_auc_score(labels, scores))
    assert ours.ci_low < ours.estimate < ours.ci_high
    assert ours.clusters == 60
    # with singleton clusters the bootstrap SE is close to DeLong's
    singles = auroc(scores, labels, list(range(300)), n_resamples=3000)
    assert singles.se == pytest.approx(auroc(scores, labels).se, rel=0.15)


def test_calibration_error_matches_sklearns_reliability_bins():
    rng = np.random.default_rng(8)
    probs = rng.random(1000)
    outcomes = rng.random(1000) < probs**1.5  # overconfident
    prob_true, prob_pred = calibration_curve(outcomes, probs, n_bins=10, strategy="uniform")
    edges = np.linspace(0, 1, 11)
    counts = np.bincount(np.searchsorted(edges[1:-1], probs), minlength=10)
    counts = counts[counts > 0]
    expected = float(np.sum(counts / probs.size * np.abs(prob_true - prob_pred)))
    ours = calibration_error(probs, outcomes, n_resamples=500)
    assert ours.estimate == pytest.approx(expected, rel=1e-10)
    assert ours.ci_low <= ours.estimate <= ours.ci_high
    perfect = calibration_error(np.full(400, 0.25), np.arange(400) % 4 == 0, n_resamples=200)
    assert perfect.estimate == pytest.approx(0.0, abs=1e-12)
