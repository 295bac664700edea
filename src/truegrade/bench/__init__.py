"""Benchmarks against the anchors: measured side by side in one run, reported as ratios."""

from truegrade.bench._engine import run_engine_bench, trivial_task
from truegrade.bench._goodhart import naive_bon_curve, run_goodhart_bench
from truegrade.bench._report import BenchReport, Measurement, machine

__all__ = [
    "BenchReport",
    "Measurement",
    "machine",
    "naive_bon_curve",
    "run_engine_bench",
    "run_goodhart_bench",
    "trivial_task",
]
