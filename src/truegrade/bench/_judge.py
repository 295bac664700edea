"""Judge throughput: the ``judge`` grader against plain ``openai`` client loops, same simulator.

Every contender grades the same items with the same judging prompt against the same judge
simulator (its own process, a fixed latency per request), in one run:

* truegrade ``judge`` (score mode), cache off: judgments per second with hundreds of requests in
  flight, every control on (fences, injection scan, final-verdict parsing, logprob scores);
* truegrade ``judge``, a rerun from its SQLite cache (no request sent);
* anchor: a sequential loop over ``AsyncOpenAI.chat.completions.create`` (what a first version
  of a judge reward looks like), measured on a slice;
* anchor: the same SDK call for every item at once with ``asyncio.gather`` (the naive async
  version: default client settings, no limits).

One judgment is one judge request and its verdict. Benchmarks measure; they never assert.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from truegrade.bench._report import BenchReport, Measurement
from truegrade.core import Sample, load_grader

__all__ = ["run_judge_bench"]

_SCORE = re.compile(r'"score"\s*:\s*(\d+)')


def _samples(n: int) -> list[Sample]:
    words = [
        "water",
        "boils",
        "at",
        "one",
        "hundred",
        "degrees",
        "at",
        "sea",
        "level",
        "because",
        "of",
        "pressure",
    ]
    return [
        Sample(
            id=i,
            prompt=f"Question {i}: at what temperature does water boil, and why?",
            response=" ".join(words[(i + k) % len(words)] for k in range(40)) + f" ({i})",
        )
        for i in range(n)
    ]


def _grader(base_url: str, concurrency: int, cache: str | None) -> Any:
    return load_grader(
        "judge",
        mode="score",
        endpoint=base_url,
        model="bench-judge",
        concurrency=concurrency,
        cache=cache,
        timeout_s=30,
    )


async def _anchor(
    base_url: str, messages: list[list[dict[str, str]]], *, sequential: bool
) -> tuple[float, int]:
    """Seconds to judge every prompt with the plain SDK, and how many got no score (a request
    that failed after the SDK's own retries, on a loaded machine, counts as one)."""
    from openai import APIError, AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="not-needed")

    async def one(msgs: list[dict[str, str]]) -> bool:
        try:
            answer = await client.chat.completions.create(
                model="bench-judge",
                messages=msgs,  # type: ignore[arg-type]
                temperature=0,
            )
        except APIError:
            return False
        return _SCORE.search(answer.choices[0].message.content or "") is not None

    start = time.perf_counter()
    if sequential:
        found = [await one(m) for m in messages]
    else:
        found = list(await asyncio.gather(*(one(m) for m in messages)))
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed, found.count(False)


def run_judge_bench(
    *,
    items: int = 2000,
    latency_ms: float = 200.0,
    concurrency: int = 256,
    repeats: int = 3,
    sequential_items: int = 20,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Judgments per second for the judge grader and the plain-SDK anchors, one simulator."""
    from truegrade.simulator import SimulatorConfig, run_simulator

    samples = _samples(items)
    report = BenchReport(
        title=f"Judge throughput against a simulated judge with {latency_ms:g} ms latency",
        metric="judgments/s",
        lower_is_better=False,
        params={
            "items": items,
            "latency_ms": latency_ms,
            "concurrency": concurrency,
            "repeats": repeats,
            "sequential_items": sequential_items,
            # the machine may be shared: what else was running is part of the measurement
            "load_average_1m_at_start": round(os.getloadavg()[0], 2),
        },
        notes=[
            "The judge is truegrade's simulator in its own process (uvicorn), answering after a "
            "fixed latency; client and server share the machine's cores.",
            "truegrade runs every control (fences, injection scan, final-verdict parsing, "
            "logprob scores); the anchors send the same prompts and read the score by regex.",
            "The sequential anchor is measured on a slice of the items.",
        ],
    )
    ours = Measurement(f"truegrade judge, {concurrency} in flight", False, [])
    cached = Measurement("truegrade judge, rerun from the cache", False, [])
    sequential = Measurement("openai SDK, sequential loop", True, [])
    naive = Measurement("openai SDK, asyncio.gather of every item", True, [])
    errors = {"truegrade": 0, "naive_async": 0, "sequential": 0}
    config = SimulatorConfig(latency_ms=latency_ms)
    with run_simulator(config, mode="process") as sim, tempfile.TemporaryDirectory() as tmp:
        live = _grader(sim.base_url, concurrency, None)
        messages = [
            list(live.prompts.messages({"instruction": s.prompt_text, "response": s.response_text}))
            for s in samples
        ]
        live.grade_batch(samples[:50])  # warm both sides
        cache_path = str(Path(tmp) / "judge.sqlite")
        warm = _grader(sim.base_url, concurrency, cache_path)
        warm.grade_batch(samples)  # fills the cache for the rerun measurements
        for r in range(repeats):
            if progress:
                progress(f"repeat {r + 1}/{repeats}")
            start = time.perf_counter()
            grades = live.grade_batch(samples)
            ours.samples.append(items / (time.perf_counter() - start))
            errors["truegrade"] += sum(g.error is not None for g in grades)
            rerun = _grader(sim.base_url, concurrency, cache_path)
            start = time.perf_counter()
            rerun.grade_batch(samples)
            cached.samples.append(items / (time.perf_counter() - start))
            elapsed, missing = asyncio.run(_anchor(sim.base_url, messages, sequential=False))
            naive.samples.append(items / elapsed)
            errors["naive_async"] += missing
            elapsed, missing = asyncio.run(
                _anchor(sim.base_url, messages[:sequential_items], sequential=True)
            )
            sequential.samples.append(sequential_items / elapsed)
            errors["sequential"] += missing
    report.measurements = [ours, cached, naive, sequential]
    report.pairs = [
        (ours.name, naive.name),
        (ours.name, sequential.name),
        (cached.name, naive.name),
    ]
    report.details = {"errors": errors}
    return report
