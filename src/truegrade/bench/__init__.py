"""Benchmarks against the anchors: measured side by side in one run, reported as ratios.

Names load on first use: a benchmark imports what it measures against (scipy, the reward server,
the HTTP client), and neither ``truegrade bench --help`` nor a caller of ``machine`` needs that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_exports

if TYPE_CHECKING:
    from truegrade.bench._code import (
        HACK_PROBLEMS,
        answers_in_check_order,
        code_hacks,
        run_code_bench,
    )
    from truegrade.bench._engine import run_engine_bench, trivial_task
    from truegrade.bench._goodhart import naive_bon_curve, run_goodhart_bench
    from truegrade.bench._judge import run_judge_bench
    from truegrade.bench._math import (
        DEFAULT_MATH_DATA,
        MathVerifyTask,
        load_math_pairs,
        run_math_bench,
    )
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

_HOME = {
    "BenchReport": "truegrade.bench._report",
    "DEFAULT_MATH_DATA": "truegrade.bench._math",
    "HACK_PROBLEMS": "truegrade.bench._code",
    "MathVerifyTask": "truegrade.bench._math",
    "Measurement": "truegrade.bench._report",
    "answers_in_check_order": "truegrade.bench._code",
    "code_hacks": "truegrade.bench._code",
    "load_average": "truegrade.bench._report",
    "load_math_pairs": "truegrade.bench._math",
    "machine": "truegrade.bench._report",
    "naive_bon_curve": "truegrade.bench._goodhart",
    "naive_reward_app": "truegrade.bench._serve",
    "run_code_bench": "truegrade.bench._code",
    "run_engine_bench": "truegrade.bench._engine",
    "run_goodhart_bench": "truegrade.bench._goodhart",
    "run_judge_bench": "truegrade.bench._judge",
    "run_math_bench": "truegrade.bench._math",
    "run_serve_bench": "truegrade.bench._serve",
    "run_stdio_bench": "truegrade.bench._stdio",
    "stdio_problems": "truegrade.bench._stdio",
    "trivial_task": "truegrade.bench._engine",
}


__getattr__, __dir__ = lazy_exports(globals(), _HOME)
