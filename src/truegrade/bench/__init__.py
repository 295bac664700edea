"""Benchmarks against the anchors: measured side by side in one run, reported as ratios.

Names load on first use: a benchmark imports what it measures against (scipy, the reward server,
the HTTP client), and neither ``truegrade bench --help`` nor a caller of ``machine`` needs that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_exports

if TYPE_CHECKING:
    from truegrade.bench._code import code_hacks, run_code_bench
    from truegrade.bench._engine import run_engine_bench
    from truegrade.bench._evalplus import run_evalplus_bench
    from truegrade.bench._goodhart import run_goodhart_bench
    from truegrade.bench._judge import run_judge_bench
    from truegrade.bench._math import DEFAULT_MATH_DATA, run_math_bench
    from truegrade.bench._repo import run_repo_bench
    from truegrade.bench._report import BenchReport, Measurement, load_average, machine
    from truegrade.bench._review import review_rows, run_review_bench
    from truegrade.bench._serve import run_serve_bench
    from truegrade.bench._stdio import run_stdio_bench

__all__ = [
    "DEFAULT_MATH_DATA",
    "BenchReport",
    "Measurement",
    "code_hacks",
    "load_average",
    "machine",
    "review_rows",
    "run_code_bench",
    "run_engine_bench",
    "run_evalplus_bench",
    "run_goodhart_bench",
    "run_judge_bench",
    "run_math_bench",
    "run_repo_bench",
    "run_review_bench",
    "run_serve_bench",
    "run_stdio_bench",
]

_HOME = {
    "BenchReport": "truegrade.bench._report",
    "DEFAULT_MATH_DATA": "truegrade.bench._math",
    "Measurement": "truegrade.bench._report",
    "code_hacks": "truegrade.bench._code",
    "load_average": "truegrade.bench._report",
    "machine": "truegrade.bench._report",
    "review_rows": "truegrade.bench._review",
    "run_code_bench": "truegrade.bench._code",
    "run_engine_bench": "truegrade.bench._engine",
    "run_evalplus_bench": "truegrade.bench._evalplus",
    "run_goodhart_bench": "truegrade.bench._goodhart",
    "run_judge_bench": "truegrade.bench._judge",
    "run_math_bench": "truegrade.bench._math",
    "run_repo_bench": "truegrade.bench._repo",
    "run_review_bench": "truegrade.bench._review",
    "run_serve_bench": "truegrade.bench._serve",
    "run_stdio_bench": "truegrade.bench._stdio",
}


__getattr__, __dir__ = lazy_exports(globals(), _HOME)
