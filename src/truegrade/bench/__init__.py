"""Benchmarks against the anchors: measured side by side in one run, reported as ratios."""

from truegrade.bench._code import HACK_PROBLEMS, answers_in_check_order, code_hacks, run_code_bench
from truegrade.bench._engine import run_engine_bench, trivial_task
from truegrade.bench._goodhart import naive_bon_curve, run_goodhart_bench
from truegrade.bench._judge import run_judge_bench
from truegrade.bench._math import DEFAULT_MATH_DATA, MathVerifyTask, load_math_pairs, run_math_bench
from truegrade.bench._report import BenchReport, Measurement, load_average, machine
from truegrade.bench._serve import naive_reward_app, run_serve_bench
from truegrade.bench._stdio import run_stdio_bench, stdio_problems

__all__ = [
    "DEFAULT_MATH_DATA",
    "HACK_PROBLEMS",
    "BenchReport",
    "MathVerifyTask",
    "Measurement",
    "answers_in_check_order",
    "code_hacks",
    "load_average",
    "load_math_pairs",
    "machine",
    "naive_bon_curve",
    "naive_reward_app",
    "run_code_bench",
    "run_engine_bench",
    "run_goodhart_bench",
    "run_judge_bench",
    "run_math_bench",
    "run_serve_bench",
    "run_stdio_bench",
    "stdio_problems",
    "trivial_task",
]
