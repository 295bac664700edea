"""Benchmarks against the anchors: measured side by side in one run, reported as ratios."""

from truegrade.bench._engine import run_engine_bench, trivial_task
from truegrade.bench._judge import run_judge_bench
from truegrade.bench._math import DEFAULT_MATH_DATA, MathVerifyTask, load_math_pairs, run_math_bench
from truegrade.bench._report import BenchReport, Measurement, machine

__all__ = [
    "DEFAULT_MATH_DATA",
    "BenchReport",
    "MathVerifyTask",
    "Measurement",
    "load_math_pairs",
    "machine",
    "run_engine_bench",
    "run_judge_bench",
    "run_math_bench",
    "trivial_task",
]
