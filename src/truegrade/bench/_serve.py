"""The reward server under RL-shaped load, against the server users typically write by hand.

Measured on the same machine, in one run:

1. one 1,024-item ``math`` batch through ``POST /grade`` (a GRPO step's rewards in one call);
2. single-item ``POST /get_reward`` requests (OpenRLHF's shape) at each of several concurrency
   levels (1, 16, 64, 256 connections), every response checked against the reward it must
   carry, so a lost, duplicated or crossed answer is counted, not missed;
3. head-of-line blocking: the same one-item requests at 16 connections while other requests,
   one at a time, each hold an item that takes ``hang_s`` seconds to grade (a hostile program,
   a reward function that hangs): what the fast requests' latency becomes beside them.

The anchor for (2) is the remote reward server a user writes in a few lines: FastAPI calling
Math-Verify's ``parse``/``verify`` inside the request handler. It runs as a real server too.
``before`` names another truegrade source tree (a checkout of an earlier commit) whose server
is measured beside this one, in the same run, on the same load.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from truegrade.bench._report import BenchReport, Measurement
from truegrade.serve import ServerProcess, free_port

__all__ = ["naive_reward_app", "run_serve_bench"]


def naive_reward_app() -> Any:
    """The hand-written anchor: Math-Verify in a FastAPI handler, one process, no isolation."""
    from fastapi import FastAPI
    from math_verify import parse, verify

    app = FastAPI()

    @app.post("/get_reward")
    async def get_reward(body: dict[str, Any]) -> dict[str, Any]:
        rewards = []
        for query, prompt, label in zip(
            body["query"], body["prompts"], body["labels"], strict=True
        ):
            response = query[len(prompt) :] if query.startswith(prompt) else query
            rewards.append(float(verify(parse("$" + str(label) + "$"), parse(response))))
        return {"rewards": rewards}

    return app


class _NaiveServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: Any = None

    def __enter__(self) -> _NaiveServer:
        import subprocess

        code = (
            "import uvicorn; from truegrade.bench._serve import naive_reward_app; "
            f"uvicorn.run(naive_reward_app(), port={self.port}, log_level='warning')"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.post(
                    self.url + "/get_reward",
                    json={"query": ["1"], "prompts": [""], "labels": ["1"]},
                    timeout=5,
                )
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("the anchor server did not start")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def _requests(n: int) -> list[tuple[dict[str, Any], float]]:
    out = []
    for i in range(n):
        prompt = f"Question {i}: what is {i} + 1?\nAnswer:"
        right = i % 3 != 0
        answer = i + 1 if right else i + 2
        body = {
            "query": [f"{prompt} The answer is \\boxed{{{answer}}}."],
            "prompts": [prompt],
            "labels": [str(i + 1)],
        }
        out.append((body, 1.0 if right else 0.0))
    return out


async def _load(
    url: str, requests: list[tuple[dict[str, Any], float]], concurrency: int
) -> tuple[float, list[float], int, int]:
    """Send every request over ``concurrency`` keep-alive connections and check each answer.

    A small HTTP/1.1 client on asyncio streams: general clients spend more CPU per request than
    the server under test does, and would measure themselves instead.
    """
    host, _, port = url.removeprefix("http://").partition(":")
    latencies: list[float] = []
    wrong = lost = 0
    queue: asyncio.Queue[tuple[bytes, float]] = asyncio.Queue()
    for body, expected in requests:
        payload = json.dumps(body).encode()
        queue.put_nowait(
            (
                b"POST /get_reward HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
                b"Content-Type: application/json\r\nContent-Length: "
                + str(len(payload)).encode()
                + b"\r\n\r\n"
                + payload,
                expected,
            )
        )

    async def worker() -> None:
        nonlocal wrong, lost
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            while not queue.empty():
                request, expected = queue.get_nowait()
                started = time.perf_counter()
                for _ in range(20):
                    writer.write(request)
                    status, headers, body = await _read_response(reader)
                    if status != 429:
                        break
                    await asyncio.sleep(float(headers.get(b"retry-after", b"1")))
                latencies.append((time.perf_counter() - started) * 1000)
                if status != 200:
                    lost += 1
                    continue
                rewards = json.loads(body)["rewards"]
                if len(rewards) != 1 or rewards[0] != expected:
                    wrong += 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started, latencies, wrong, lost


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, dict[bytes, bytes], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name:
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get(b"content-length", b"0")))
    return status, headers, body


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _measure(
    name: str,
    anchor: bool,
    url: str,
    load: list[tuple[dict[str, Any], float]],
    concurrency: int,
) -> Measurement:
    elapsed, latencies, wrong, lost = asyncio.run(_load(url, load, concurrency))
    return Measurement(
        name,
        anchor,
        [len(load) / elapsed],
        {
            "p50_ms": _percentile(latencies, 0.5),
            "p99_ms": _percentile(latencies, 0.99),
            "max_ms": max(latencies),
            "wrong": wrong,
            "lost": lost,
        },
    )


def _beside_hanging(
    url: str, load: list[tuple[dict[str, Any], float]], hang_s: float, concurrency: int
) -> tuple[float, list[float], int, int]:
    """``_load`` while, one after another, requests with one item that takes ``hang_s`` seconds
    are in flight beside it."""
    import threading

    stop = threading.Event()

    def hang() -> None:
        body = {"query": [f"sleep:{hang_s}"], "prompts": [""], "labels": ["1"]}
        while not stop.is_set():
            try:
                httpx.post(url + "/get_reward", json=body, timeout=hang_s * 10 + 60)
            except httpx.HTTPError:
                time.sleep(0.1)

    thread = threading.Thread(target=hang, daemon=True)
    thread.start()
    time.sleep(0.3)  # the first hanging item is running
    try:
        return asyncio.run(_load(url, load, concurrency))
    finally:
        stop.set()
        thread.join(timeout=hang_s * 10 + 60)


def run_serve_bench(
    *,
    requests: int = 3_000,
    concurrency: Sequence[int] = (1, 16, 64, 256),
    batch: int = 1024,
    workers: int = 2,
    repeats: int = 5,
    hang_s: float = 2.0,
    before: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Measure the server; see the module docstring."""
    levels = sorted(set(concurrency))
    report = BenchReport(
        title=f"{requests:,} single-item /get_reward requests at {', '.join(map(str, levels))} "
        "connections",
        metric="requests/s",
        lower_is_better=False,
        params={
            "requests": requests,
            "concurrency": levels,
            "batch": batch,
            "workers": workers,
            "hang_s": hang_s,
            "before": str(before) if before else None,
        },
        notes=[
            "Every response is checked against the reward it must carry: 'wrong' counts "
            "crossed or duplicated answers, 'lost' counts requests that never got one; "
            "'graded' is the server's own count of items graded during the load, which "
            "equals the number of requests when each was graded exactly once.",
            "'beside a hanging item': the fast requests at 16 connections while requests with "
            f"one item that takes {hang_s:g} s to grade are in flight, one after another (a "
            "reward function that sleeps; the hand-written anchor has no such grader).",
        ],
    )
    load = _requests(requests)
    rows = [
        {"id": i, "response": f"\\boxed{{{i % 50}}}", "reference": str(i % 7)} for i in range(batch)
    ]
    sleepy = f"{Path(__file__).with_name('_sleepy.py')}:sleepy"
    contenders: list[tuple[str, bool, dict[str, str] | None]] = [("truegrade serve", False, None)]
    if before is not None:
        src = before / "src" if (before / "src").is_dir() else before
        contenders.append(
            (f"truegrade serve before ({before.name})", True, {"PYTHONPATH": str(src)})
        )
    measurements: list[Measurement] = []
    for name, is_anchor, env in contenders:
        with ServerProcess("math", workers=workers, env=env) as server:
            httpx.post(server.url + "/grade", json={"samples": rows[:64]}, timeout=120)  # warm
            if env is None:
                batch_ms = []
                for r in range(repeats):
                    if progress:
                        progress(f"{batch}-item batch {r + 1}/{repeats}")
                    started = time.perf_counter()
                    response = httpx.post(
                        server.url + "/grade", json={"samples": rows}, timeout=120
                    )
                    batch_ms.append((time.perf_counter() - started) * 1000)
                    assert len(response.json()["grades"]) == batch
                report.details["batch_1024_ms"] = {
                    "median": statistics.median(batch_ms),
                    "samples": batch_ms,
                }
            for level in levels:
                if progress:
                    progress(f"{name} at {level} connections")
                metrics_url = server.url + "/metrics?format=json"
                done = httpx.get(metrics_url, timeout=30).json()["items"]
                measured = _measure(f"{name}, c={level}", is_anchor, server.url, load, level)
                # the server's own count: each request graded exactly once (a retried 429 is not)
                measured.extra["graded"] = httpx.get(metrics_url, timeout=30).json()["items"] - done
                measurements.append(measured)
        with ServerProcess(sleepy, workers=workers, env=env) as server:
            if progress:
                progress(f"{name} beside a hanging item")
            httpx.post(server.url + "/get_reward", json=load[0][0], timeout=60)  # warm
            elapsed, latencies, _, lost = _beside_hanging(server.url, load, hang_s, 16)
            measurements.append(
                Measurement(
                    f"{name}, c=16 beside a hanging item",
                    is_anchor,
                    [len(load) / elapsed],
                    {
                        "p50_ms": _percentile(latencies, 0.5),
                        "p99_ms": _percentile(latencies, 0.99),
                        "max_ms": max(latencies),
                        "lost": lost,
                    },
                )
            )
    if progress:
        progress("hand-written Math-Verify server under load")
    with _NaiveServer() as naive:
        for level in levels:
            if progress:
                progress(f"hand-written server at {level} connections")
            measurements.append(
                _measure(
                    f"FastAPI + Math-Verify in the handler (hand-written), c={level}",
                    True,
                    naive.url,
                    load,
                    level,
                )
            )
    report.measurements = measurements
    ours = [m for m in measurements if not m.anchor]
    for m in ours:
        suffix = m.name.removeprefix("truegrade serve")
        report.pairs += [
            (m.name, a.name)
            for a in measurements
            if a.anchor and a.name.endswith(suffix) and a.name != m.name
        ]
    return report
