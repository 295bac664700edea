"""Goodhart, measured: overoptimization curves from best-of-n pools, and a training monitor.

Pure numerics, no I/O: arrays and rows in, results out (``to_dict`` gives the JSON documents the
``truegrade overopt`` and ``truegrade monitor`` commands write).
"""

from truegrade.goodhart._adapters import TrlMonitorCallback, VerlMonitorLogger
from truegrade.goodhart._bon import PromptEstimates, best_of_n, bon_kl, bon_weights, default_ns
from truegrade.goodhart._fit import FORMS, GoldFit, bon_n_for_kl, fit_gold_curve
from truegrade.goodhart._log import CANDIDATES, LogColumns, StepBatch, TrainingLog, group_steps
from truegrade.goodhart._monitor import (
    MONITOR_SCHEMA,
    RULES,
    Alert,
    Monitor,
    StepStats,
    monitor_log,
)
from truegrade.goodhart._overopt import (
    SCHEMA,
    CurvePoint,
    FitBands,
    Overoptimization,
    Peak,
    overoptimization,
)
from truegrade.goodhart._synthetic import (
    SCENARIOS,
    SyntheticPool,
    synthetic_pool,
    synthetic_training_log,
)

__all__ = [
    "CANDIDATES",
    "FORMS",
    "MONITOR_SCHEMA",
    "RULES",
    "SCENARIOS",
    "SCHEMA",
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
    "bon_kl",
    "bon_n_for_kl",
    "bon_weights",
    "default_ns",
    "fit_gold_curve",
    "group_steps",
    "monitor_log",
    "overoptimization",
    "synthetic_pool",
    "synthetic_training_log",
]
