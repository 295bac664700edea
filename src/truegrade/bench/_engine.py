"""Engine overhead: the killable worker pool against ``ProcessPoolExecutor.map``.

The work per item is trivial (return the payload), so what is measured is the cost of moving an
item to a worker and its result back. The anchor is the standard library's process pool, which
cannot stop a hung item at all; ``map`` is run with its default ``chunksize=1`` and with a large
chunk size (its best case). Both pools are warm and measured in alternation in the same run.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable
from typing import Any

from truegrade.bench._report import BenchReport, Measurement
from truegrade.exec import Engine, default_worker_count

__all__ = ["run_engine_bench", "trivial_task"]


def trivial_task(payload: Any) -> Any:
    """The benchmark's work: none (returns the payload)."""
    return payload


def _payloads(n: int) -> list[dict[str, Any]]:
    response = "Let's compute step by step. " * 8
    return [{"response": response + str(i), "reference": str(i)} for i in range(n)]


def run_engine_bench(
    *,
    items: int = 20_000,
    workers: int | None = None,
    repeats: int = 5,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Measure µs per item for the engine and the process-pool anchor, same items, same run."""
    n_workers = workers or default_worker_count()
    payloads = _payloads(items)
    big_chunk = max(1, items // (4 * n_workers))
    report = BenchReport(
        title="Engine overhead per item (trivial task)",
        metric="µs per item",
        lower_is_better=True,
        params={"items": items, "workers": n_workers, "repeats": repeats},
        notes=[
            "Trivial work, so the numbers are pure transport overhead.",
            "The engine enforces a per-item deadline by killing the worker; the process pool "
            "cannot stop a hung item.",
        ],
    )
    ours = Measurement("truegrade Engine.map (kill-on-deadline)", False, [])
    default = Measurement("ProcessPoolExecutor.map, chunksize=1 (default)", True, [])
    tuned = Measurement(f"ProcessPoolExecutor.map, chunksize={big_chunk}", True, [])
    # the default chunksize is slow: measure it on a slice and scale, so the run stays short
    slice_n = min(items, 4000)
    with (
        Engine(workers=n_workers) as engine,
        concurrent.futures.ProcessPoolExecutor(n_workers) as pool,
    ):
        engine.map(trivial_task, payloads[:200], timeout_s=30)  # warm both pools
        list(pool.map(trivial_task, payloads[:200]))
        for r in range(repeats):
            if progress:
                progress(f"repeat {r + 1}/{repeats}")
            start = time.perf_counter()
            engine.map(trivial_task, payloads, timeout_s=30)
            ours.samples.append((time.perf_counter() - start) / items * 1e6)
            start = time.perf_counter()
            list(pool.map(trivial_task, payloads, chunksize=big_chunk))
            tuned.samples.append((time.perf_counter() - start) / items * 1e6)
            start = time.perf_counter()
            list(pool.map(trivial_task, payloads[:slice_n]))
            default.samples.append((time.perf_counter() - start) / slice_n * 1e6)
    report.measurements = [ours, default, tuned]
    return report
