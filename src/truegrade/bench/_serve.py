"""The reward server under RL-shaped load, against the server users typically write by hand.

Two measurements on the same machine, in one run:

1. one 1,024-item ``math`` batch through ``POST /grade`` (a GRPO step's rewards in one call);
2. 10,000 single-item ``POST /get_reward`` requests (OpenRLHF's shape) at 64 concurrent
   connections, every response checked against the reward it must carry, so a lost, duplicated or
   crossed answer is counted, not missed.

The anchor for (2) is the remote reward server a user writes in a few lines: FastAPI calling
Math-Verify's ``parse``/``verify`` inside the request handler. It runs as a real server too.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
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
    name: str, anchor: bool, url: str, load: list[tuple[dict[str, Any], float]], concurrency: int
) -> Measurement:
    elapsed, latencies, wrong, lost = asyncio.run(_load(url, load, concurrency))
    return Measurement(
        name,
        anchor,
        [len(load) / elapsed],
        {
            "p50_ms": _percentile(latencies, 0.5),
            "p99_ms": _percentile(latencies, 0.99),
            "wrong": wrong,
            "lost": lost,
        },
    )


def run_serve_bench(
    *,
    requests: int = 10_000,
    concurrency: int = 64,
    batch: int = 1024,
    workers: int = 2,
    repeats: int = 5,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Measure the server; see the module docstring."""
    report = BenchReport(
        title=f"{requests:,} single-item /get_reward requests at {concurrency} connections",
        metric="requests/s",
        lower_is_better=False,
        params={
            "requests": requests,
            "concurrency": concurrency,
            "batch": batch,
            "workers": workers,
        },
        notes=[
            "Every response is checked against the reward it must carry: 'wrong' counts "
            "crossed or duplicated answers, 'lost' counts requests that never got one; "
            "'graded' is the server's own count of items graded during the load, which "
            "equals the number of requests when each was graded exactly once."
        ],
    )
    load = _requests(requests)
    rows = [
        {"id": i, "response": f"\\boxed{{{i % 50}}}", "reference": str(i % 7)} for i in range(batch)
    ]
    with ServerProcess("math", workers=workers) as server:
        httpx.post(server.url + "/grade", json={"samples": rows[:64]}, timeout=120)  # warm
        batch_ms = []
        for r in range(repeats):
            if progress:
                progress(f"{batch}-item batch {r + 1}/{repeats}")
            started = time.perf_counter()
            response = httpx.post(server.url + "/grade", json={"samples": rows}, timeout=120)
            batch_ms.append((time.perf_counter() - started) * 1000)
            assert len(response.json()["grades"]) == batch
        if progress:
            progress("truegrade serve under load")
        before = httpx.get(server.url + "/metrics", timeout=30).json()["items"]
        ours = _measure(
            f"truegrade serve (math, {workers} engine workers)",
            False,
            server.url,
            load,
            concurrency,
        )
        # the server's own count: each request graded exactly once (a retried 429 is not graded)
        after = httpx.get(server.url + "/metrics", timeout=30).json()["items"]
        ours.extra["graded"] = after - before
    if progress:
        progress("hand-written Math-Verify server under load")
    with _NaiveServer() as naive:
        anchor = _measure(
            "FastAPI + Math-Verify in the handler (hand-written)",
            True,
            naive.url,
            load,
            concurrency,
        )
    report.measurements = [ours, anchor]
    report.details["batch_1024_ms"] = {"median": statistics.median(batch_ms), "samples": batch_ms}
    return report
