"""Benchmarks against the anchors: measured side by side in one run, reported as ratios."""

from truegrade.bench._engine import run_engine_bench, trivial_task
from truegrade.bench._report import BenchReport, Measurement, machine

__all__ = ["BenchReport", "Measurement", "machine", "run_engine_bench", "trivial_task"]
