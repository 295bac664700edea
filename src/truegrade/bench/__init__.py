"""Benchmarks against the anchors: measured side by side in one run, reported as ratios."""

from truegrade.bench._code import HACK_PROBLEMS, answers_in_check_order, code_hacks, run_code_bench
from truegrade.bench._engine import run_engine_bench, trivial_task
from truegrade.bench._report import BenchReport, Measurement, machine

__all__ = [
    "HACK_PROBLEMS",
    "BenchReport",
    "Measurement",
    "answers_in_check_order",
    "code_hacks",
    "machine",
    "run_code_bench",
    "run_engine_bench",
    "trivial_task",
]
