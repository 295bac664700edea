"""Plugging the monitor into a trainer, without depending on the trainer.

* TRL (and any ``transformers.Trainer``): :class:`TrlMonitorCallback` has the shape of a
  ``TrainerCallback``; its ``on_log`` feeds each logged dict (``reward``, ``reward_std``,
  ``completions/mean_length``, ``rewards/<func>/mean``...) to the monitor.
  ``GRPOTrainer(..., callbacks=[TrlMonitorCallback()])``.
* verl: :class:`VerlMonitorLogger` has the shape of verl's ``Tracking.log(data, step)``; call it
  with the same ``metrics`` dict the trainer logs each step (``critic/score/mean``,
  ``response_length/mean``...).

New alerts go to ``on_alert`` (default: a warning on the ``truegrade.goodhart`` logger) and are
kept in ``monitor.alerts``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from truegrade.core import DataError
from truegrade.goodhart._log import CANDIDATES, LogColumns
from truegrade.goodhart._monitor import Alert, Monitor

__all__ = ["TrlMonitorCallback", "VerlMonitorLogger"]

_log = logging.getLogger("truegrade.goodhart")


def _warn(alert: Alert) -> None:
    _log.warning("truegrade monitor: %s [%s]", alert.message, alert.rule)


class _MetricsFeed:
    """Feeds per-step metrics dicts to a monitor; skips dicts without a reward (evaluation logs)
    and repeated steps (a trainer may log twice at one step)."""

    def __init__(
        self,
        monitor: Monitor | None = None,
        *,
        columns: LogColumns | None = None,
        on_alert: Callable[[Alert], None] | None = None,
    ) -> None:
        self.monitor = monitor if monitor is not None else Monitor()
        self.columns = columns
        self.on_alert = on_alert if on_alert is not None else _warn

    def feed(self, step: float | None, metrics: Mapping[str, Any] | None) -> list[Alert]:
        if step is None or not metrics:
            return []
        names = (
            (self.columns.proxy,) if self.columns and self.columns.proxy else CANDIDATES["proxy"]
        )
        if not any(name in metrics for name in names):
            return []
        history = self.monitor.history
        if history and float(step) <= history[-1].step:
            return []
        try:
            alerts = self.monitor.update_metrics(step, metrics, self.columns)
        except DataError as exc:
            _log.warning("truegrade monitor: step %s not recorded: %s", step, exc)
            return []
        for alert in alerts:
            self.on_alert(alert)
        return alerts


class TrlMonitorCallback(_MetricsFeed):
    """A ``transformers.TrainerCallback`` look-alike that runs a :class:`Monitor` on the logs.

    Args:
        monitor: The monitor (default: ``Monitor()`` with its default settings).
        columns: Column names, when the logged keys are not the usual ones.
        on_alert: Called with each new alert (default: a logged warning).

    Examples:
        >>> callback = TrlMonitorCallback()
        >>> class State:
        ...     global_step = 1
        >>> callback.on_log(None, State(), None, logs={"reward": 0.4, "reward_std": 0.1})
        >>> len(callback.monitor.history)
        1
    """

    def on_log(
        self,
        args: Any,
        state: Any,
        control: Any,
        logs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.feed(getattr(state, "global_step", None), logs)

    def __getattr__(self, name: str) -> Callable[..., None]:
        # every other TrainerCallback event (on_step_end, on_train_begin, ...) is a no-op
        if name.startswith("on_"):
            return _ignore
        raise AttributeError(name)


def _ignore(*args: Any, **kwargs: Any) -> None:
    return None


class VerlMonitorLogger(_MetricsFeed):
    """Has the shape of verl's ``Tracking.log(data, step)``: pass it each step's metrics.

    Examples:
        >>> logger = VerlMonitorLogger()
        >>> logger.log({"critic/score/mean": 0.5, "critic/score/min": 0.0,
        ...             "critic/score/max": 1.0}, step=1)
        >>> logger.monitor.history[0].constant
        False
    """

    def log(self, data: Mapping[str, Any], step: int, backend: Any = None) -> None:
        self.feed(step, data)
