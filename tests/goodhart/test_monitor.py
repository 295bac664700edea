"""The monitor finds planted failures, says where they start, and is quiet on clean runs."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest
from scipy.stats import kendalltau

from truegrade.core import BaseGrader, DataError, Ensemble, Grade, Sample
from truegrade.goodhart import (
    LogColumns,
    Monitor,
    TrlMonitorCallback,
    VerlMonitorLogger,
    monitor_log,
    synthetic_training_log,
)
from truegrade.goodhart._monitor import _trend

ONSET = 120


def run(scenario: str, seed: int = 1, **settings):
    rows = synthetic_training_log(scenario, steps=200, onset=ONSET, seed=seed)
    monitor, log = monitor_log(enumerate(rows, start=1), **settings)
    return monitor, log


def by_rule(monitor: Monitor):
    out = defaultdict(list)
    for alert in monitor.alerts:
        out[alert.rule].append(alert)
    return out


def per_step(rows):
    """The same run as a TRL-style log: one row of aggregates per step."""
    steps = defaultdict(list)
    for row in rows:
        steps[row["step"]].append(row)
    return [
        {
            "global_step": step,
            "reward": float(np.mean([r["reward"] for r in batch])),
            "reward_std": float(np.std([r["reward"] for r in batch])),
            "gold_reward": float(np.mean([r["gold"] for r in batch])),
            "completions/mean_length": float(np.mean([r["length"] for r in batch])),
        }
        for step, batch in steps.items()
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_quiet_on_clean_runs(seed):
    rows = synthetic_training_log("clean", steps=200, seed=seed)
    monitor, log = monitor_log(enumerate(rows, start=1))
    assert log.shape == "per-sample" and len(log.batches) == 200
    assert monitor.alerts == []
    aggregated, _ = monitor_log(enumerate(per_step(rows), start=1))
    assert aggregated.alerts == []


def test_planted_divergence_is_found_where_it_starts():
    monitor, _ = run("divergence")
    alerts = by_rule(monitor)
    (alert,) = alerts["proxy_up_gold_down"]
    assert ONSET - 15 <= alert.start_step <= ONSET + 15
    assert ONSET < alert.detected_step <= ONSET + 64  # within two windows
    ev = alert.evidence
    assert ev["proxy"]["tau"] > 0 and ev["gold"]["tau"] < 0
    assert ev["proxy"]["p"] < ev["level"] and ev["gold"]["p"] < ev["level"]
    assert ev["gold_slope"]["ci_high"] < 0 < ev["proxy_slope"]["ci_low"]
    assert alerts["gap_widening"], "the widening gap is its own alert"
    assert json.loads(json.dumps(monitor.to_dict(), allow_nan=False))["alerts"]


def test_divergence_in_a_per_step_log():
    rows = synthetic_training_log("divergence", steps=200, onset=ONSET, seed=4)
    monitor, log = monitor_log(enumerate(per_step(rows), start=1))
    assert log.shape == "per-step"
    assert log.columns.step == "global_step" and log.columns.gold == "gold_reward"
    assert "proxy_up_gold_down" in by_rule(monitor)


def test_length_hacking():
    monitor, _ = run("length")
    (alert,) = by_rule(monitor)["reward_tracks_length"]
    assert ONSET - 15 <= alert.start_step <= ONSET + 15
    assoc = alert.evidence["association"]
    assert assoc["rho"] > 0 and assoc["p"] < alert.evidence["level"]


def test_all_zero_batch():
    monitor, _ = run("constant_batch")
    (alert,) = by_rule(monitor)["constant_batch"]
    assert (alert.start_step, alert.end_step) == (ONSET, ONSET + 2)
    assert alert.evidence["value"] == 0.0
    assert alert.evidence["p"] < alert.evidence["level"]
    assert "every reward is 0" in alert.message


def test_a_task_that_is_always_zero_is_not_a_broken_grader():
    monitor = Monitor()
    for step in range(50):
        monitor.update(step, rewards=[0.0] * 16)
    assert monitor.alerts == []


def test_constant_batch_in_a_per_step_log():
    monitor = Monitor()
    for step in range(30):
        std = 0.0 if step == 20 else 0.3
        monitor.update_metrics(step, {"reward": 0.0 if step == 20 else 0.5, "reward_std": std})
    (alert,) = monitor.alerts
    assert alert.rule == "constant_batch" and alert.start_step == 20


def test_flag_rate_climbing():
    monitor, _ = run("flags")
    (alert,) = by_rule(monitor)["flag_rate_rising"]
    assert alert.evidence["flag"] == "hedged"
    assert alert.evidence["end"] > alert.evidence["start"] + 0.05
    assert ONSET - 15 <= alert.start_step <= ONSET + 15


def test_grader_disagreement_rising():
    monitor, _ = run("disagreement")
    (alert,) = by_rule(monitor)["grader_disagreement_rising"]
    assert ONSET - 15 <= alert.start_step <= ONSET + 20


def test_live_updates_return_each_alert_once():
    monitor = Monitor(window=16)
    new_per_step = []
    for step in range(60):
        gold = 1.0 - 0.02 * max(0, step - 20)
        new_per_step.append(monitor.update(step, rewards=[0.01 * step, 0.02 * step], gold=[gold]))
    fired = [alert.rule for new in new_per_step for alert in new]
    assert sorted(fired) == ["gap_widening", "proxy_up_gold_down"]
    assert all(a.end_step == 59 for a in monitor.alerts)  # still open at the end
    with pytest.raises(ValueError, match="steps must increase"):
        monitor.update(59, rewards=[0.5])


def test_mann_kendall_matches_scipy():
    rng = np.random.default_rng(0)
    steps = np.arange(40, dtype=float)
    for y in (rng.normal(size=40) + 0.03 * steps, np.round(rng.normal(size=40), 0)):
        ours = _trend(y, +1)
        reference = kendalltau(steps, y, method="asymptotic", alternative="greater")
        assert ours.tau == pytest.approx(reference.statistic, rel=1e-12)
        assert ours.p == pytest.approx(reference.pvalue, rel=1e-9)


def test_log_columns_by_dotted_path_and_per_batch_rows():
    rows = [
        {"meta": {"step": s}, "scores": {"rm": [0.1 * s, 0.2], "gold": [0.3, 0.4]}}
        for s in range(12)
    ]
    columns = LogColumns(step="meta.step", proxy="scores.rm", gold="scores.gold")
    monitor, log = monitor_log(enumerate(rows, start=1), columns)
    assert log.shape == "per-batch"
    assert monitor.history[3].proxy == pytest.approx((0.3 + 0.2) / 2)
    assert monitor.history[3].gold == pytest.approx(0.35)


def test_truegrade_results_files_with_a_step_column():
    rows = []
    for step in range(10):
        for i in range(4):
            rows.append(
                {
                    "id": f"{step}-{i}",
                    "score": float(i % 2),
                    "passed": bool(i % 2),
                    "subscores": {},
                    "flags": ["hedged"] if i == 0 else [],
                    "error": None,
                    "metadata": {"step": step},
                    "response": "x" * (10 + i),
                }
            )
    rows.append({"id": "bad", "score": 0.0, "error": "timeout", "metadata": {"step": 3}})
    monitor, log = monitor_log(enumerate(rows, start=1), LogColumns(step="metadata.step"))
    assert log.columns.proxy == "score"
    assert log.skipped == {"grader error": 1}
    assert monitor.history[0].flag_rates == {"hedged": 0.25}
    assert monitor.history[0].length == pytest.approx(11.5)  # from the response text


def test_bad_rows_name_their_line():
    rows = [{"step": 1, "reward": 0.5}, {"step": 2, "reward": "high"}]
    with pytest.raises(DataError, match="row 2: reward must be a finite number"):
        monitor_log(enumerate(rows, start=1))
    with pytest.raises(DataError, match="no reward column"):
        monitor_log(enumerate([{"step": 1, "loss": 0.3}], start=1))
    with pytest.raises(DataError, match="no step column"):
        monitor_log(enumerate([{"reward": 1.0}], start=1))


def test_trl_callback_and_verl_logger_feed_the_monitor():
    seen = []
    callback = TrlMonitorCallback(Monitor(window=8), on_alert=seen.append)

    class State:
        global_step = 0

    state = State()
    for step in range(1, 30):
        state.global_step = step
        callback.on_step_end(None, state, None)  # every other event is a no-op
        callback.on_log(
            None,
            state,
            None,
            logs={"reward": 0.05 * step, "reward_std": 0.2, "gold_reward": 1 - 0.05 * step},
        )
        callback.on_log(None, state, None, logs={"eval_loss": 0.1})  # evaluation: skipped
    assert len(callback.monitor.history) == 29
    assert {a.rule for a in seen} == {"proxy_up_gold_down", "gap_widening"}
    with pytest.raises(AttributeError):
        callback.not_an_event  # noqa: B018

    logger = VerlMonitorLogger()
    logger.log(
        {
            "critic/score/mean": 0.4,
            "critic/score/min": 0.0,
            "critic/score/max": 1.0,
            "response_length/mean": 310.0,
        },
        step=1,
    )
    logger.log({"critic/score/mean": 0.0, "critic/score/min": 0.0, "critic/score/max": 0.0}, step=2)
    assert logger.monitor.history[0].length == 310.0
    assert [a.rule for a in logger.monitor.alerts] == ["constant_batch"]


class _Member(BaseGrader):
    """A reward model stand-in: a score read from the response, plus its own drift after the
    onset (members that start to disagree, as under optimisation pressure)."""

    requires_reference = False

    def __init__(self, name: str, drift: float) -> None:
        super().__init__(name=name)
        self.drift = drift

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        out = []
        for s in samples:
            step, quality = (float(x) for x in s.response_text.split())
            late = max(0.0, step - ONSET) / 80
            out.append(Grade(score=quality + self.drift * late * (quality - 0.5)))
        return out


def test_an_ensembles_own_disagreement_is_what_the_monitor_watches():
    ensemble = Ensemble([_Member("a", 1.0), _Member("b", -1.0)], combine="mean")
    rng = np.random.default_rng(0)
    monitor = Monitor()
    watched = []
    for step in range(1, 201):
        rows = [{"id": i, "response": f"{step} {q:.4f}"} for i, q in enumerate(rng.random(32))]
        grades = ensemble.grade_batch(rows)
        subscores = {k: [g.subscores[k] for g in grades] for k in grades[0].subscores}
        assert {"a", "b", "disagreement", "spread"} <= set(subscores)
        monitor.update(step, [g.score for g in grades], subscores=subscores)
        own = float(np.mean(subscores["disagreement"]))
        watched.append((monitor.history[-1].disagreement, own))
    assert all(seen == own for seen, own in watched)  # the ensemble's number, not a recomputation
    (alert,) = by_rule(monitor)["grader_disagreement_rising"]
    assert ONSET - 15 <= alert.start_step <= ONSET + 30
