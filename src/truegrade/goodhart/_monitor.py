"""A training monitor that raises alerts, with evidence, when the reward is being gamed.

Fed one step at a time (live, from a trainer callback, or replayed from a log), it keeps
per-step statistics and checks six rules after each step. Each alert names the step where the
problem starts (estimated), the step where it became significant, and the statistics behind it.

Rules (``a`` = the significance level in force, see below; a trend is the Mann-Kendall test,
Kendall's tau of the series against time, over a window of recent steps):

``proxy_up_gold_down``
    Over the window, the proxy rises and gold falls: Kendall's tau of proxy against step is
    positive and of gold against step negative, both one-sided p < a.
``gap_widening``
    The gap ``proxy - gold`` rises over the window (Kendall, one-sided p < a). Both columns
    should be on one scale (two graders' scores); the gap is in the columns' raw units.
``reward_tracks_length``
    Response length rises over the window (Kendall p < a) *and* reward is associated with
    length: per-sample logs pool the within-step Spearman correlations over the window (Fisher z,
    weights n - 3; one-sided p < a); per-step logs use Kendall's tau of reward against length
    across steps. When gold is logged, the rule holds only if gold is not rising significantly
    (real progress can lengthen responses too).
``grader_disagreement_rising``
    With two or more graders (subscores), their disagreement per step (mean absolute pairwise
    difference, per sample when available) rises over the window (Kendall p < a). An
    ensemble's grades carry their own ``disagreement`` subscore (the members' standard
    deviation); when it is logged, it is the series watched, and the other subscores (members,
    their raw scores, the spread) are not compared as if they were graders.
``constant_batch``
    Every reward in a batch is the same value (all zero, typically): a silently broken grader.
    Per-sample logs: alert when the chance of a batch this uniform under the rewards seen so far,
    ``sum_v P(v)^n``, is below the level (so an always-zero task is not an alert, a
    zero batch amid varied ones is). Per-step logs: a zero ``reward_std`` (or min = max) after
    steps that varied.
``flag_rate_rising``
    The share of samples carrying a flag (``hedged``, ``injection_suspected``, ...) rises over
    the window (Kendall p < a/F for F watched flags) by at least ``min_flag_increase``.

Windows and multiple testing: each trend rule is tested on the most recent W, 2W and 4W steps
(those the run is long enough for; short windows react fast, long ones catch slow drifts) and
holds if it holds on any of them. ``alpha`` is shared equally by the six rules and split over the
window sizes, and the rules are checked every ``check_every`` steps (a quarter window by default),
the k-th check at level ``a = alpha / 6 / k / (window sizes)``. By the union bound the chance of
any false alarm in a run of K checks is at most ``alpha * (1 + 1/2 + ... + 1/K)`` (3.8 alpha for
a 200-step run at the defaults, 6 alpha for 2,000 steps), and in practice lower, since
overlapping windows are strongly correlated. The constant-batch test at step t runs at
``alpha / 6 / t``. An alert stays open while its rule holds and closes after W steps without it;
a new episode is a new alert.

The start step of a divergence is where (smoothed) gold peaked; of any other trend alert, the
breakpoint of a two-segment linear fit to its series.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from truegrade.core import DataError
from truegrade.goodhart._log import (
    LogColumns,
    StepBatch,
    TrainingLog,
    complete,
    group_steps,
    metrics_batch,
)
from truegrade.stats import json_ready

__all__ = ["MONITOR_SCHEMA", "RULES", "Alert", "Monitor", "StepStats", "monitor_log"]

MONITOR_SCHEMA = "truegrade.monitor/1"
RULES = (
    "proxy_up_gold_down",
    "gap_widening",
    "reward_tracks_length",
    "grader_disagreement_rising",
    "constant_batch",
    "flag_rate_rising",
)
# distinct reward values remembered for the constant-batch null; beyond this, rewards are
# treated as continuous (a repeat of one value across a whole batch is then never chance)
_MAX_DISTINCT = 10_000


@dataclass(frozen=True)
class Alert:
    """A detected problem.

    Attributes:
        rule: Which rule fired: ``proxy_up_gold_down``, ``gap_widening``,
            ``reward_tracks_length``, ``grader_disagreement_rising``, ``constant_batch`` or
            ``flag_rate_rising``.
        start_step: Where the problem starts (estimated breakpoint, or the first bad batch).
        detected_step: The step after which it became significant.
        end_step: The last step at which the rule still held (updated while the alert is open).
        message: One line for a person.
        evidence: The statistics: test, statistic, p-value, level, slopes with intervals, the
            window of steps; enough to check the claim.
    """

    rule: str
    start_step: float
    detected_step: float
    end_step: float
    message: str
    evidence: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = json_ready(asdict(self))
        return out


@dataclass(frozen=True)
class StepStats:
    """What one step's batch says, reduced to the numbers the rules use.

    Attributes:
        step: The training step.
        n: Samples in the batch (None for a per-step aggregate).
        proxy: Mean reward.
        proxy_std: Standard deviation of the rewards (None when unknown).
        constant: Every reward in the batch equal (None when unknown).
        constant_value: That value, when ``constant``.
        gold: Mean gold / held-out reward (None when not logged).
        length: Mean response length (None when not logged).
        length_rho: Within-step Spearman correlation of reward and length (per-sample only).
        length_rho_n: Samples behind ``length_rho``.
        disagreement: Mean absolute pairwise difference between graders (None with < 2).
        flag_rates: Share of samples with each flag.
    """

    step: float
    n: int | None
    proxy: float
    proxy_std: float | None = None
    constant: bool | None = None
    constant_value: float | None = None
    gold: float | None = None
    length: float | None = None
    length_rho: float | None = None
    length_rho_n: int = 0
    disagreement: float | None = None
    flag_rates: dict[str, float] = field(default_factory=dict)


def _floats(values: ArrayLike | float, name: str) -> NDArray[np.float64]:
    array = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name}: expected a number or a non-empty list of numbers")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: every value must be a finite number")
    return array


@dataclass(frozen=True)
class _Trend:
    tau: float
    p: float
    n: int

    def holds(self, level: float, sign: int) -> bool:
        return self.n >= 3 and self.p < level and self.tau * sign > 0


def _kendall(x: NDArray[np.float64], y: NDArray[np.float64], sign: int) -> _Trend:
    """Kendall's tau-b of y against x with its one-sided p-value (scipy; for association)."""
    from scipy.stats import kendalltau

    if x.size < 3 or np.ptp(y) == 0 or np.ptp(x) == 0:
        return _Trend(0.0, 1.0, int(x.size))
    result = kendalltau(x, y, alternative="greater" if sign > 0 else "less")
    tau, p = float(result.statistic), float(result.pvalue)
    if not math.isfinite(p):
        return _Trend(0.0, 1.0, int(x.size))
    return _Trend(tau, p, int(x.size))


def _trend(y: NDArray[np.float64], sign: int) -> _Trend:
    """The Mann-Kendall trend test: Kendall's tau-b of y against time (steps, never tied).

    ``S = sum_{i<j} sign(y_j - y_i)``, ``var(S) = (n(n-1)(2n+5) - sum_t t(t-1)(2t+5)) / 18`` over
    groups of t tied values, ``z = S / sqrt(var(S))``, ``tau_b = S / sqrt(n0 (n0 - n_ties))``.
    The same numbers as ``scipy.stats.kendalltau(steps, y, method="asymptotic")`` at a fraction
    of its cost: the monitor runs it several times per step.
    """
    n = y.size
    if n < 3 or np.ptp(y) == 0:
        return _Trend(0.0, 1.0, int(n))
    s = float(np.sum(np.triu(np.sign(y[None, :] - y[:, None]), k=1)))
    _, ties = np.unique(y, return_counts=True)
    ties = ties[ties > 1].astype(np.float64)
    var = (n * (n - 1) * (2 * n + 5) - float(np.sum(ties * (ties - 1) * (2 * ties + 5)))) / 18
    n0 = n * (n - 1) / 2
    tau = s / math.sqrt(n0 * (n0 - float(np.sum(ties * (ties - 1) / 2))))
    from scipy.special import ndtr

    p = float(ndtr(-sign * s / math.sqrt(var)))
    return _Trend(tau, p, int(n))


def _slope(steps: NDArray[np.float64], y: NDArray[np.float64]) -> dict[str, float]:
    """Theil-Sen slope per step with its 95% interval: robust evidence of how fast y moves."""
    from scipy.stats import theilslopes

    result = theilslopes(y, steps, alpha=0.95)
    return {
        "per_step": float(result.slope),
        "ci_low": float(result.low_slope),
        "ci_high": float(result.high_slope),
    }


def _onset(steps: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    """The breakpoint of the best two-segment continuous linear fit (least squares)."""
    if steps.size < 8:
        return float(steps[0])
    candidates = steps[2:-2]
    if candidates.size > 200:
        candidates = candidates[np.linspace(0, candidates.size - 1, 200).astype(int)]
    best, best_sse = float(steps[0]), math.inf
    ones = np.ones_like(steps)
    for c in candidates:
        design = np.column_stack([ones, steps, np.maximum(steps - c, 0.0)])
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        sse = float(np.sum((y - design @ coef) ** 2))
        if sse < best_sse:
            best, best_sse = float(c), sse
    return best


def _peak_step(steps: NDArray[np.float64], y: NDArray[np.float64], smooth: int) -> float:
    """Where a series peaks, after a centred moving average of ``smooth`` steps (the step gold
    was highest before it fell)."""
    if y.size <= smooth:
        return float(steps[int(np.argmax(y))])
    averaged = np.convolve(y, np.ones(smooth) / smooth, mode="valid")
    return float(steps[int(np.argmax(averaged)) + smooth // 2])


class Monitor:
    """Watches a training run step by step and returns alerts as they become significant.

    Args:
        window: Steps per trend test (the most recent ones).
        alpha: The false-alarm budget of each check, shared equally by the six rules (see the
            module docstring for what it means over a whole run).
        min_steps: Steps needed before any trend rule is checked.
        check_every: Steps between checks of the trend rules (default: a quarter window).
        flags: Flags to watch (default: every flag seen).
        min_flag_increase: Smallest rise in a flag's rate over the window worth an alert.

    Examples:
        >>> monitor = Monitor(window=16)
        >>> for step in range(40):
        ...     new = monitor.update(step, rewards=[0.1 * step, 0.2], gold=[1.0 - 0.02 * step])
        >>> sorted({a.rule for a in monitor.alerts})
        ['gap_widening', 'proxy_up_gold_down']
    """

    def __init__(
        self,
        *,
        window: int = 32,
        alpha: float = 0.01,
        min_steps: int = 16,
        check_every: int | None = None,
        flags: Sequence[str] | None = None,
        min_flag_increase: float = 0.02,
    ) -> None:
        if window < 4:
            raise ValueError("window must be >= 4 steps")
        if not 0 < alpha < 1:
            raise ValueError("alpha must be strictly between 0 and 1")
        self.window = window
        self.alpha = alpha
        self.min_steps = max(3, min_steps)
        self.check_every = max(1, check_every if check_every is not None else window // 4)
        self._checks = 0
        self.watch_flags = list(flags) if flags is not None else None
        self.min_flag_increase = min_flag_increase
        self.history: list[StepStats] = []
        self.alerts: list[Alert] = []
        self._open: dict[str, int] = {}  # episode key -> index in self.alerts
        self._quiet: dict[str, int] = {}
        self._since: dict[str, int] = {}  # episode key -> history index where it may start
        self._values: Counter[float] = Counter()
        self._values_total = 0
        self._varied_steps = 0

    # ---------------------------------------------------------------- feeding
    def update(
        self,
        step: float,
        rewards: ArrayLike | float,
        *,
        gold: ArrayLike | float | None = None,
        lengths: ArrayLike | float | None = None,
        flags: Sequence[Sequence[str]] | Mapping[str, float] | None = None,
        subscores: Mapping[str, ArrayLike | float] | None = None,
        reward_std: float | None = None,
        reward_min: float | None = None,
        reward_max: float | None = None,
    ) -> list[Alert]:
        """Record one step and return the alerts that this step made significant.

        Args:
            step: The training step (must increase from call to call).
            rewards: The batch's proxy rewards (per sample), or their mean (per-step logs).
            gold: Gold / held-out rewards of the same samples, or their mean.
            lengths: Response lengths, or their mean.
            flags: Per sample, the list of its flags; or per step, ``{flag: rate}``.
            subscores: ``{grader: scores}`` per sample or ``{grader: mean}`` for two or more
                graders of the same responses.
            reward_std: For per-step logs: the batch's reward standard deviation.
            reward_min: For per-step logs: the batch's smallest reward.
            reward_max: For per-step logs: the batch's largest reward.
        """
        step = float(step)
        if self.history and step <= self.history[-1].step:
            raise ValueError(f"steps must increase: got {step:g} after {self.history[-1].step:g}")
        r = _floats(rewards, "rewards")
        per_sample = np.ndim(rewards) > 0
        stats = self._step_stats(
            step, r, per_sample, gold, lengths, flags, subscores, reward_std, reward_min, reward_max
        )
        new = self._constant_batch(stats, r if per_sample else None)
        if per_sample:
            self._remember_values(r)
        if stats.constant is False or (stats.constant is None and per_sample and r.size > 1):
            self._varied_steps += 1
        self.history.append(stats)
        if (len(self.history) - self.min_steps) % self.check_every == 0 and len(
            self.history
        ) >= self.min_steps:
            self._checks += 1
            new += self._trend_rules()
        return new

    def update_batch(self, batch: StepBatch) -> list[Alert]:
        """Record a :class:`StepBatch` (one of a :class:`TrainingLog`'s ``batches``)."""
        kwargs, _ = complete(batch)
        return self.update(batch.step, **kwargs)

    def update_metrics(
        self, step: float, metrics: Mapping[str, Any], columns: LogColumns | None = None
    ) -> list[Alert]:
        """Record one step's logged metrics, as TRL (``logs`` in ``on_log``) or verl (the
        ``metrics`` dict of a training step) produce them; column names are detected as for a
        per-step log file.

        Raises:
            DataError: the metrics hold no reward, or a value is not a number.
        """
        return self.update_batch(metrics_batch(step, metrics, columns))

    def _step_stats(
        self,
        step: float,
        r: NDArray[np.float64],
        per_sample: bool,
        gold: ArrayLike | float | None,
        lengths: ArrayLike | float | None,
        flags: Sequence[Sequence[str]] | Mapping[str, float] | None,
        subscores: Mapping[str, ArrayLike | float] | None,
        reward_std: float | None,
        reward_min: float | None,
        reward_max: float | None,
    ) -> StepStats:
        constant: bool | None = None
        value: float | None = None
        std = reward_std
        if per_sample:
            std = float(np.std(r, ddof=1)) if r.size > 1 else None
            if r.size > 1:
                constant = bool(np.ptp(r) == 0)
        elif reward_std is not None or (reward_min is not None and reward_max is not None):
            constant = reward_std == 0 or (
                reward_min is not None and reward_max is not None and reward_min == reward_max
            )
        if constant:
            value = float(r[0])
        length_mean = rho = None
        rho_n = 0
        if lengths is not None:
            lens = _floats(lengths, "lengths")
            length_mean = float(lens.mean())
            if (
                per_sample
                and lens.size == r.size
                and r.size >= 5
                and np.ptp(r) > 0
                and np.ptp(lens) > 0
            ):
                from scipy.stats import spearmanr

                rho = float(spearmanr(r, lens).statistic)
                rho_n = int(r.size)
        return StepStats(
            step=step,
            n=int(r.size) if per_sample else None,
            proxy=float(r.mean()),
            proxy_std=std,
            constant=constant,
            constant_value=value,
            gold=None if gold is None else float(_floats(gold, "gold").mean()),
            length=length_mean,
            length_rho=rho if rho is not None and math.isfinite(rho) else None,
            length_rho_n=rho_n,
            disagreement=_disagreement(subscores),
            flag_rates=_flag_rates(flags, int(r.size)),
        )

    def _remember_values(self, r: NDArray[np.float64]) -> None:
        if len(self._values) < _MAX_DISTINCT:
            self._values.update(r.tolist())
        self._values_total += int(r.size)

    # ------------------------------------------------------------- the rules
    def _level(self, divide: int = 1) -> float:
        """The level of the k-th check of the trend rules: alpha / k (split over ``divide``)."""
        return self.alpha / len(RULES) / max(1, self._checks) / max(1, divide)

    def _constant_batch(self, stats: StepStats, rewards: NDArray[np.float64] | None) -> list[Alert]:
        key = "constant_batch"
        if not stats.constant:
            self._close(key, quiet_after=1)
            return []
        if key in self._open:
            self._extend(key, stats.step)
            return []
        level = self.alpha / len(RULES) / (len(self.history) + 1)  # one test per step so far
        evidence: dict[str, Any] = {"value": stats.constant_value, "step": stats.step}
        if rewards is not None:
            if not self._values_total:
                return []  # nothing to compare with yet
            chance = sum((c / self._values_total) ** rewards.size for c in self._values.values())
            evidence.update(
                test="chance of a batch this uniform under the rewards seen so far",
                p=chance,
                level=level,
                batch_size=int(rewards.size),
                rewards_seen=self._values_total,
            )
            if chance >= level:
                return []
        else:
            if not self._varied_steps:
                return []
            evidence.update(
                test="zero spread after steps that varied", earlier_varied_steps=self._varied_steps
            )
        value = stats.constant_value
        what = "every reward is 0" if value == 0 else f"every reward is {value:g}"
        message = f"step {stats.step:g}: {what}: the grader may be silently broken"
        return [self._open_alert(key, key, stats.step, stats.step, message, evidence)]

    def _windows(self) -> list[list[StepStats]]:
        """The most recent W, 2W and 4W steps (those the history is long enough for): short
        windows react fast, long ones catch slow drifts."""
        sizes = [
            w for w in (self.window, 2 * self.window, 4 * self.window) if w <= len(self.history)
        ]
        return [self.history[-w:] for w in sizes or [len(self.history)]]

    def _trend_rules(self) -> list[Alert]:
        now = self.history[-1].step
        windows = self._windows()
        scales = len(windows)
        new: list[Alert] = []
        names = self.watch_flags
        if names is None:
            names = sorted({f for s in self.history[-self.window :] for f in s.flag_rates})
        checks: list[tuple[str, str, str, Any]] = [
            (
                "proxy_up_gold_down",
                "gold",
                "the proxy reward rises while gold falls",
                self._divergence,
            ),
            ("gap_widening", "gap", "the proxy-gold gap is widening", self._gap),
            ("reward_tracks_length", "length", "reward is tracking response length", self._length),
            (
                "grader_disagreement_rising",
                "disagreement",
                "disagreement between graders is rising",
                self._disagreement_trend,
            ),
        ]
        for name in names:
            checks.append(
                (
                    f"flag_rate_rising:{name}",
                    f"flag:{name}",
                    f"the rate of flag '{name}' is climbing",
                    lambda w, level, name=name: self._flag_trend(w, level / len(names), name),
                )
            )
        for key, series, what, check in checks:
            found: dict[str, Any] | None = None
            applicable = False
            for window in windows:
                outcome = check(window, self._level(scales))
                if outcome is None:
                    continue
                applicable = True
                holds, evidence = outcome
                if holds:
                    steps = [float(window[0].step), float(window[-1].step)]
                    found = {
                        "window": steps,
                        "steps_in_window": len(window),
                        "scales": scales,
                        **evidence,
                    }
                    break
            if applicable:
                new += self._rule(key, found, now, series, what)
        return new

    @staticmethod
    def _arrays(window: list[StepStats], *names: str) -> list[NDArray[np.float64]] | None:
        out = []
        for name in names:
            series = _series(window, name)
            if series is None:
                return None
            out.append(series)
        return out

    def _divergence(
        self, window: list[StepStats], level: float
    ) -> tuple[bool, dict[str, Any]] | None:
        arrays = self._arrays(window, "step", "proxy", "gold")
        if arrays is None:
            return None
        steps, proxy, gold = arrays
        up, down = _trend(proxy, +1), _trend(gold, -1)
        holds = up.holds(level, +1) and down.holds(level, -1)
        evidence: dict[str, Any] = {
            "test": "Mann-Kendall (Kendall tau against step), one-sided, both at the level",
            "level": level,
            "proxy": {"tau": up.tau, "p": up.p},
            "gold": {"tau": down.tau, "p": down.p},
        }
        if holds:
            evidence.update(proxy_slope=_slope(steps, proxy), gold_slope=_slope(steps, gold))
        return holds, evidence

    def _gap(self, window: list[StepStats], level: float) -> tuple[bool, dict[str, Any]] | None:
        arrays = self._arrays(window, "step", "proxy", "gold")
        if arrays is None:
            return None
        steps, proxy, gold = arrays
        return _rising(steps, proxy - gold, level, "proxy - gold")

    def _disagreement_trend(
        self, window: list[StepStats], level: float
    ) -> tuple[bool, dict[str, Any]] | None:
        arrays = self._arrays(window, "step", "disagreement")
        if arrays is None:
            return None
        steps, disagreement = arrays
        return _rising(steps, disagreement, level, "grader disagreement")

    def _flag_trend(
        self, window: list[StepStats], level: float, name: str
    ) -> tuple[bool, dict[str, Any]] | None:
        steps = np.array([s.step for s in window])
        rates = np.array([s.flag_rates.get(name, 0.0) for s in window])
        holds, evidence = _rising(steps, rates, level, f"the rate of flag '{name}'")
        evidence["flag"] = name
        if holds:
            increase = evidence["slope"]["per_step"] * float(steps[-1] - steps[0])
            evidence.update(increase_over_window=increase, min_increase=self.min_flag_increase)
            holds = increase >= self.min_flag_increase
        return holds, evidence

    def _length(self, window: list[StepStats], level: float) -> tuple[bool, dict[str, Any]] | None:
        arrays = self._arrays(window, "step", "proxy", "length")
        if arrays is None:
            return None
        steps, proxy, length = arrays
        longer = _trend(length, +1)
        evidence: dict[str, Any] = {
            "level": level,
            "length_trend": {"test": "Mann-Kendall, one-sided", "tau": longer.tau, "p": longer.p},
        }
        rhos = [(s.length_rho, s.length_rho_n) for s in window if s.length_rho is not None]
        if rhos:
            # within-step association: pooled Fisher z of per-step Spearman correlations
            z = np.array([math.atanh(max(-0.999999, min(0.999999, r))) for r, _ in rhos])
            w = np.array([max(n - 3, 1) for _, n in rhos], dtype=np.float64)
            pooled = float(np.sum(w * z) / np.sum(w))
            stat = pooled * math.sqrt(float(np.sum(w)))
            from scipy.special import ndtr

            p_assoc = float(ndtr(-stat))
            assoc_holds = p_assoc < level and pooled > 0
            evidence["association"] = {
                "test": "pooled within-step Spearman correlation of reward and length (Fisher z)",
                "rho": math.tanh(pooled),
                "z": stat,
                "p": p_assoc,
                "steps": len(rhos),
            }
        else:
            tracks = _kendall(length, proxy, +1)
            assoc_holds = tracks.holds(level, +1)
            evidence["association"] = {
                "test": "Kendall tau of step-mean reward against step-mean length, one-sided",
                "tau": tracks.tau,
                "p": tracks.p,
            }
        holds = longer.holds(level, +1) and assoc_holds
        gold = _series(window, "gold")
        if holds and gold is not None:
            gold_up = _trend(gold, +1)
            evidence["gold_trend"] = {"tau": gold_up.tau, "p": gold_up.p}
            holds = not gold_up.holds(self.alpha, +1)
        if holds:
            evidence["length_slope"] = _slope(steps, length)
        return holds, evidence

    # ------------------------------------------------------------- episodes
    def _rule(
        self, key: str, evidence: dict[str, Any] | None, now: float, series: str, what: str
    ) -> list[Alert]:
        if evidence is None:
            self._close(key, quiet_after=max(1, self.window // self.check_every))
            return []
        if key in self._open:
            self._extend(key, now)
            return []
        start = self._estimate_onset(key, series)
        rule = key.split(":", 1)[0]
        message = f"{what} (from about step {start:g}; significant at step {now:g})"
        return [self._open_alert(key, rule, start, now, message, evidence)]

    def _estimate_onset(self, key: str, series: str) -> float:
        first = max(self._since.get(key, 0), len(self.history) - 10 * self.window)
        span = self.history[first:]
        steps = np.array([s.step for s in span])
        if series == "gap":
            values = [None if s.gold is None else s.proxy - s.gold for s in span]
        elif series.startswith("flag:"):
            values = [s.flag_rates.get(series[5:], 0.0) for s in span]
        else:
            values = [getattr(s, series) for s in span]
        keep = np.array([v is not None for v in values])
        y = np.array([v for v in values if v is not None], dtype=np.float64)
        if not y.size:
            return float(steps[-1])
        if series == "gold":
            return _peak_step(steps[keep], y, max(1, self.window // 4))
        return _onset(steps[keep], y)

    def _open_alert(
        self, key: str, rule: str, start: float, now: float, message: str, evidence: dict[str, Any]
    ) -> Alert:
        alert = Alert(rule, start, now, now, message, evidence)
        self._open[key] = len(self.alerts)
        self._quiet[key] = 0
        self.alerts.append(alert)
        return alert

    def _extend(self, key: str, now: float) -> None:
        index = self._open[key]
        self.alerts[index] = replace(self.alerts[index], end_step=now)
        self._quiet[key] = 0

    def _close(self, key: str, *, quiet_after: int) -> None:
        if key not in self._open:
            return
        self._quiet[key] = self._quiet.get(key, 0) + 1
        if self._quiet[key] >= quiet_after:
            del self._open[key]
            self._since[key] = len(self.history)

    # --------------------------------------------------------------- output
    def series(self) -> dict[str, list[Any]]:
        """The per-step series the rules saw (for plots and the JSON report)."""
        out: dict[str, list[Any]] = {
            "step": [s.step for s in self.history],
            "proxy": [s.proxy for s in self.history],
            "proxy_std": [s.proxy_std for s in self.history],
            "batch_size": [s.n for s in self.history],
        }
        for name in ("gold", "length", "disagreement", "length_rho"):
            values = [getattr(s, name) for s in self.history]
            if any(v is not None for v in values):
                out[name] = values
        names = sorted({f for s in self.history for f in s.flag_rates})
        for name in names:
            out[f"flag:{name}"] = [s.flag_rates.get(name, 0.0) for s in self.history]
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``truegrade monitor --out`` (schema ``truegrade.monitor/1``)."""
        doc: dict[str, Any] = json_ready(
            {
                "schema": MONITOR_SCHEMA,
                "settings": {
                    "window": self.window,
                    "alpha": self.alpha,
                    "min_steps": self.min_steps,
                    "check_every": self.check_every,
                    "flags": self.watch_flags,
                    "min_flag_increase": self.min_flag_increase,
                },
                "steps": len(self.history),
                "alerts": [a.to_dict() for a in self.alerts],
                "series": self.series(),
            }
        )
        return doc


def _rising(
    steps: NDArray[np.float64], y: NDArray[np.float64], level: float, what: str
) -> tuple[bool, dict[str, Any]]:
    """Does ``y`` rise over the window? Mann-Kendall at ``level``; when it does, the evidence
    adds the Theil-Sen slope and the mean of the first and last quarter of the window."""
    rising = _trend(y, +1)
    holds = rising.holds(level, +1)
    evidence: dict[str, Any] = {
        "test": f"Mann-Kendall of {what}, one-sided",
        "level": level,
        "tau": rising.tau,
        "p": rising.p,
    }
    if holds:
        quarter = max(1, y.size // 4)
        evidence.update(
            slope=_slope(steps, y),
            start=float(y[:quarter].mean()),
            end=float(y[-quarter:].mean()),
        )
    return holds, evidence


def _series(window: list[StepStats], name: str) -> NDArray[np.float64] | None:
    values = [getattr(s, name) for s in window]
    if any(v is None for v in values):
        return None
    return np.array(values, dtype=np.float64)


def _disagreement(subscores: Mapping[str, ArrayLike | float] | None) -> float | None:
    if subscores and "disagreement" in subscores:  # an ensemble's own measure
        return float(np.mean(_floats(subscores["disagreement"], "subscores['disagreement']")))
    if not subscores or len(subscores) < 2:
        return None
    columns = [_floats(v, f"subscores[{k!r}]") for k, v in subscores.items()]
    size = columns[0].size
    if any(c.size != size for c in columns):
        raise ValueError("every grader's subscores must cover the same samples")
    table = np.vstack(columns)  # graders x samples
    pairs = np.abs(table[:, None, :] - table[None, :, :])
    g = table.shape[0]
    return float(pairs.sum(axis=(0, 1)).mean() / (g * (g - 1)))


def _flag_rates(
    flags: Sequence[Sequence[str]] | Mapping[str, float] | None, n: int
) -> dict[str, float]:
    if flags is None:
        return {}
    if isinstance(flags, Mapping):
        return {str(k): float(v) for k, v in flags.items()}
    if len(flags) != n:
        raise ValueError(f"flags: {len(flags)} lists for {n} rewards")
    counts: Counter[str] = Counter()
    for sample_flags in flags:
        counts.update(set(sample_flags))
    return {k: v / n for k, v in counts.items()}


def monitor_log(
    rows: Iterable[tuple[int, Mapping[str, Any]]],
    columns: LogColumns | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    **settings: Any,
) -> tuple[Monitor, TrainingLog]:
    """Replay a whole training log through a :class:`Monitor`.

    Args:
        rows: ``(line, row)`` pairs (as ``truegrade.data.read_rows`` yields them).
        columns: Column names; unset ones are detected.
        progress: Called with the number of steps done after each step.
        **settings: Passed to :class:`Monitor` (``window``, ``alpha``, ...).

    Raises:
        DataError: a row cannot be used (the message names its line).
    """
    log = group_steps(rows, columns)
    monitor = Monitor(**settings)
    for done, batch in enumerate(log.batches, start=1):
        try:
            monitor.update_batch(batch)
        except ValueError as exc:
            if isinstance(exc, DataError):
                raise
            raise DataError(f"step {batch.step:g}: {exc}", line=batch.first_line) from None
        if progress is not None:
            progress(done)
    return monitor, log
