"""Goodhart, measured: overoptimization curves from best-of-n pools, and a training monitor.

Pure numerics, no I/O: arrays and rows in, results out (``to_dict`` gives the JSON documents the
``truegrade overopt`` and ``truegrade monitor`` commands write).
"""

from truegrade.goodhart._adapters import TrlMonitorCallback, VerlMonitorLogger
from truegrade.goodhart._bon import PromptEstimates, best_of_n, default_ns
from truegrade.goodhart._fit import GoldFit
from truegrade.goodhart._log import LogColumns, StepBatch, TrainingLog
from truegrade.goodhart._monitor import Alert, Monitor, StepStats, monitor_log
from truegrade.goodhart._overopt import (
    CurvePoint,
    FitBands,
    Overoptimization,
    Peak,
    overoptimization,
)
from truegrade.goodhart._synthetic import SyntheticPool, synthetic_pool, synthetic_training_log

__all__ = [
    "Alert",
    "CurvePoint",
    "FitBands",
    "GoldFit",
    "LogColumns",
    "Monitor",
    "Overoptimization",
    "Peak",
    "PromptEstimates",
    "StepBatch",
    "StepStats",
    "SyntheticPool",
    "TrainingLog",
    "TrlMonitorCallback",
    "VerlMonitorLogger",
    "best_of_n",
    "default_ns",
    "monitor_log",
    "overoptimization",
    "synthetic_pool",
    "synthetic_training_log",
]
