"""``math`` against Math-Verify on real model outputs: accuracy agreement, throughput, latency.

Both run on the same (response, gold) pairs, in the same kind of worker processes (the engine's),
with the same number of workers, alternating in one run. Math-Verify runs as its documentation
shows: ``verify(parse("$" + gold + "$"), parse(response))`` per pair, its own timeouts on (it runs
in a worker's main thread, where its signal alarms work). Ours runs as users run it:
``load_grader("math").grade_batch``.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from truegrade.bench._report import BenchReport, Measurement
from truegrade.core import DataError, load_grader, require_fields
from truegrade.data import read_rows
from truegrade.exec import Engine, configure_default_engine, default_engine
from truegrade.graders import set_timeout

__all__ = ["DEFAULT_MATH_DATA", "MathVerifyTask", "load_math_pairs", "run_math_bench"]

DEFAULT_MATH_DATA = Path("tests/data/reference/math/qwen25_math_cot_100.jsonl.gz")
"""The 800 real Qwen2.5-Math responses the repository keeps (run from its root)."""


@dataclass
class MathVerifyTask:
    """Math-Verify's documented usage, as an engine task: parse both sides, verify."""

    def setup(self) -> None:
        import math_verify

        math_verify.verify(math_verify.parse("$1$"), math_verify.parse("1"))

    def __call__(self, payload: tuple[str, str]) -> bool:
        from math_verify import parse, verify

        response, gold = payload
        return bool(verify(parse("$" + gold + "$"), parse(response)))


def load_math_pairs(path: Path) -> list[tuple[str, str]]:
    """(response, gold) pairs from a Qwen2.5-Math style file (``code`` list, ``answer``)."""
    pairs: list[tuple[str, str]] = []
    for line, row in read_rows(path):
        require_fields(row, ("code", "answer"), "row", path=path, line=line)
        responses = row["code"]
        if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
            raise DataError("field 'code' must be a list of responses", path=str(path), line=line)
        pairs.extend((response, str(row["answer"])) for response in responses)
    if not pairs:
        raise DataError("holds no (response, answer) pairs", path=str(path))
    return pairs


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _slowest_share(values: list[float], share: float = 0.01) -> list[float]:
    """The slowest ``share`` of ``values`` (at least one), slowest first."""
    ordered = sorted(values, reverse=True)
    return ordered[: max(1, math.ceil(len(ordered) * share))] if ordered else []


def _cold_ours_s(rows: list[dict[str, Any]], workers: int) -> float:
    """Seconds for ``math`` to grade ``rows`` as a run's first batch, workers started in it."""
    start = time.perf_counter()
    configure_default_engine(workers=workers)
    grader = load_grader("math")
    set_timeout(grader, 5.0)
    grader.grade_batch(rows)
    elapsed = time.perf_counter() - start
    default_engine().close()
    return elapsed


def _cold_anchor_s(pairs: list[tuple[str, str]], workers: int) -> float:
    """Seconds for Math-Verify to check ``pairs`` as a run's first batch, in new workers."""
    start = time.perf_counter()
    with Engine(workers=workers) as engine:
        engine.map(MathVerifyTask(), pairs, timeout_s=60)
        return time.perf_counter() - start


def run_math_bench(
    *,
    data: Path = DEFAULT_MATH_DATA,
    workers: tuple[int, ...] = (1, 2),
    repeats: int = 3,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Throughput (pairs/s per core) and latency of ``math`` vs Math-Verify, plus agreement."""
    pairs = load_math_pairs(data)
    rows = [{"id": i, "response": r, "reference": g} for i, (r, g) in enumerate(pairs)]
    report = BenchReport(
        title=f"math vs Math-Verify on {len(pairs)} real responses ({data.name})",
        metric="pairs/s per core",
        lower_is_better=False,
        params={"pairs": len(pairs), "workers": list(workers), "repeats": repeats},
        notes=[
            "Same pairs, same worker processes, alternating runs; medians of the repeats. "
            "Each half of the problems is timed in fresh workers warmed on the other half: "
            "parsers warm, golds never seen (as mid-way through training).",
            "Cold: the first batch of a run in new workers, their start, imports and first "
            "parses included (the anchor first, then ours, in each repeat).",
            "Latency is time per pair inside the worker (p50 / p99 over all repeats); "
            "slowest_1pct_ms is the mean of the slowest 1% of pairs and max_ms the slowest, "
            "as a share of math's 2 s deadline in details.slowest (the items, slowest first).",
        ],
    )
    agreement: dict[str, Any] = {}
    golds = list(dict.fromkeys(g for _, g in pairs))
    half = set(golds[: len(golds) // 2])
    first = [i for i, (_, g) in enumerate(pairs) if g in half]
    second = [i for i, (_, g) in enumerate(pairs) if g not in half]
    for n in workers:
        ours = Measurement(f"truegrade math, {n} worker{'s' * (n > 1)}", False, [])
        anchor = Measurement(f"Math-Verify parse+verify, {n} worker{'s' * (n > 1)}", True, [])
        ours_cold = Measurement(f"truegrade math, {n} worker{'s' * (n > 1)}, cold", False, [])
        anchor_cold = Measurement(
            f"Math-Verify parse+verify, {n} worker{'s' * (n > 1)}, cold", True, []
        )
        ours_latency: list[float] = []
        anchor_latency: list[float] = []
        ours_by_pair: dict[int, float] = {}
        for r in range(repeats):
            if progress:
                progress(f"{n} worker(s): repeat {r + 1}/{repeats}")
            # cold: the first batch of a run, worker start and imports included
            anchor_cold.samples.append(len(pairs) / _cold_anchor_s(pairs, n) / n)
            ours_cold.samples.append(len(pairs) / _cold_ours_s(rows, n) / n)
            # a training run mid-way: long-lived workers whose parsers are warm, and golds they
            # have never seen. So each half of the problems is timed in fresh workers warmed on
            # the other half: no repeat finds its golds parsed (ours) or its expressions in
            # SymPy's caches (both); within the half, a gold shared by its 8 responses is what
            # a GRPO group does, and counts
            ours_s = anchor_s = 0.0
            grades_by_row: dict[int, Any] = {}
            outcomes_by_row: dict[int, Any] = {}
            for warm, timed in ((first, second), (second, first)):
                configure_default_engine(workers=n)
                grader = load_grader("math")
                set_timeout(grader, 5.0)
                with Engine(workers=n) as engine:
                    engine.start()
                    grader.grade_batch([rows[i] for i in warm])
                    engine.map(MathVerifyTask(), [pairs[i] for i in warm], timeout_s=60)
                    start = time.perf_counter()
                    grades = grader.grade_batch([rows[i] for i in timed])
                    ours_s += time.perf_counter() - start
                    start = time.perf_counter()
                    outcomes = engine.map(MathVerifyTask(), [pairs[i] for i in timed], timeout_s=60)
                    anchor_s += time.perf_counter() - start
                default_engine().close()
                grades_by_row.update(zip(timed, grades, strict=True))
                outcomes_by_row.update(zip(timed, outcomes, strict=True))
            ours.samples.append(len(pairs) / ours_s / n)
            anchor.samples.append(len(pairs) / anchor_s / n)
            grades = [grades_by_row[i] for i in range(len(pairs))]
            outcomes = [outcomes_by_row[i] for i in range(len(pairs))]
            ours_latency.extend(g.latency_ms for g in grades)
            for i, grade in enumerate(grades):
                ours_by_pair[i] = max(ours_by_pair.get(i, 0.0), grade.latency_ms)
            anchor_latency.extend(o.elapsed_s * 1000 for o in outcomes)
        for m, lat in ((ours, ours_latency), (anchor, anchor_latency)):
            m.extra = {
                "p50_ms": _percentile(lat, 0.5),
                "p99_ms": _percentile(lat, 0.99),
                "mean_ms": statistics.fmean(lat) if lat else float("nan"),
                "slowest_1pct_ms": statistics.fmean(_slowest_share(lat)) if lat else float("nan"),
                "max_ms": max(lat, default=float("nan")),
            }
        # the items behind the tail, each at its slowest over the repeats: what a user looks at
        # to see whether any verdict comes near the deadline (and could depend on the machine)
        tail = _slowest_share(list(ours_by_pair.values()))
        slow = sorted(ours_by_pair, key=lambda i: -ours_by_pair[i])[: len(tail)]
        report.details.setdefault("slowest", {})[str(n)] = [
            {
                "pair": i,
                "gold": pairs[i][1],
                "ms": round(ours_by_pair[i], 2),
                "share_of_deadline": round(ours_by_pair[i] / 2000, 4),
                "flags": grades_by_row[i].flags,
            }
            for i in slow
        ]
        report.measurements += [ours, anchor, ours_cold, anchor_cold]
        report.pairs += [(ours.name, anchor.name), (ours_cold.name, anchor_cold.name)]
        if not agreement:
            ours_ok = [bool(g.passed) for g in grades]
            theirs_ok = [bool(o.value) if o.ok else False for o in outcomes]
            agreement = {
                "ours_accepts": sum(ours_ok),
                "math_verify_accepts": sum(theirs_ok),
                "disagreements": [
                    {"pair": i, "ours": a, "math_verify": b, "gold": pairs[i][1]}
                    for i, (a, b) in enumerate(zip(ours_ok, theirs_ok, strict=True))
                    if a != b
                ],
            }
    report.details["agreement"] = agreement
    return report
