"""The reward server: any grader behind HTTP, for RL loops that call rewards remotely.

Endpoints:

* ``POST /grade``: ``{"samples": [row, ...]}`` -> ``{"grades": [record, ...]}`` in order. A row
  that is malformed or cannot be graded gets a grade with ``error`` set; the request succeeds.
* ``POST /get_reward``: OpenRLHF's remote reward contract, ``{"query", "prompts", "labels"}`` ->
  ``{"rewards", "scores", "extra_logs"}``. The response is the query with its prompt removed, and
  the end-of-sequence tokens it ends with (``END_TOKENS``, or the server's own list).
* ``GET /health``: liveness, the grader, and the queue.
* ``GET /metrics``: counts, latency percentiles, flag counts, errors, rejected requests.

Overload is refused, not absorbed: when the items in flight would exceed ``max_queue``, the
request gets 429 with a ``Retry-After`` estimated from recent throughput. On shutdown uvicorn
stops accepting and lets in-flight requests finish before the engine is closed.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from truegrade.core import (
    DataError,
    Flag,
    Grade,
    Grader,
    Sample,
    describe_validation_error,
    run_grader_async,
)
from truegrade.data import one_sample

__all__ = [
    "END_TOKENS",
    "GradeRequest",
    "RewardRequest",
    "ServerState",
    "create_app",
    "response_of",
]


class GradeRequest(BaseModel):
    """Body of ``POST /grade``."""

    samples: list[Any] = Field(description="Rows in the truegrade row format.")


class RewardRequest(BaseModel):
    """Body of ``POST /get_reward`` (OpenRLHF)."""

    query: list[str] = Field(description="Prompt + response, as the policy produced it.")
    prompts: list[str] | None = Field(default=None, description="The prompts, to strip.")
    labels: list[Any] | None = Field(default=None, description="References (gold answers).")


class _Batcher:
    """Pools the samples of concurrent requests into one grading call.

    An RL trainer sends one sample per request, many at a time; grading each alone pays the
    engine's per-job cost every time. The batcher waits up to ``window_s`` (or until ``max_items``
    are queued) and grades everything queued together, then hands each request its own grades.
    """

    def __init__(self, grader: Grader, *, window_s: float = 0.002, max_items: int = 4096) -> None:
        self.grader = grader
        self.window_s = window_s
        self.max_items = max_items
        self.queue: asyncio.Queue[tuple[list[Sample], asyncio.Future[list[Grade]]]] | None = None
        self.task: asyncio.Task[None] | None = None
        self.running: set[asyncio.Task[None]] = set()  # keeps in-flight gradings referenced

    async def grade(self, samples: list[Sample]) -> list[Grade]:
        if not samples:
            return []
        if self.queue is None:
            self.queue = asyncio.Queue()
            self.task = asyncio.create_task(self._run())
        future: asyncio.Future[list[Grade]] = asyncio.get_running_loop().create_future()
        await self.queue.put((samples, future))
        return await future

    async def _run(self) -> None:
        assert self.queue is not None
        while True:
            first = await self.queue.get()
            pending = [first]
            size = len(first[0])
            deadline = asyncio.get_running_loop().time() + self.window_s
            while size < self.max_items:
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    break
                try:
                    item = await asyncio.wait_for(self.queue.get(), timeout=left)
                except asyncio.TimeoutError:
                    break
                pending.append(item)
                size += len(item[0])
            task = asyncio.create_task(self._grade(pending))
            self.running.add(task)
            task.add_done_callback(self.running.discard)

    async def _grade(self, pending: list[tuple[list[Sample], asyncio.Future[list[Grade]]]]) -> None:
        combined = [s for samples, _ in pending for s in samples]
        try:
            grades = await run_grader_async(self.grader, combined)
        except Exception as exc:  # a grader bug: every request gets the error, none hangs
            for _, future in pending:
                if not future.done():
                    future.set_exception(exc)
            return
        start = 0
        for samples, future in pending:
            if not future.done():
                future.set_result(grades[start : start + len(samples)])
            start += len(samples)


class ServerState:
    """Counters and the admission control of one server."""

    def __init__(self, grader: Grader, *, max_queue: int) -> None:
        self.grader = grader
        self.batcher = _Batcher(grader)
        self.max_queue = max_queue
        self.in_flight = 0
        self.started = time.monotonic()
        self.requests = 0
        self.items = 0
        self.errors = 0
        self.rejected = 0
        self.flags: Counter[str] = Counter()
        self.latencies_ms: deque[float] = deque(maxlen=10_000)
        self.recent: deque[tuple[float, int]] = deque(maxlen=256)

    def admit(self, n: int) -> float | None:
        """Reserve room for ``n`` items, or return the seconds to wait before retrying."""
        if self.in_flight > 0 and self.in_flight + n > self.max_queue:
            self.rejected += 1
            return self._retry_after(n)
        self.in_flight += n
        return None

    def release(self, n: int, grades: list[Grade], elapsed_s: float) -> None:
        self.in_flight -= n
        self.requests += 1
        self.items += n
        self.recent.append((time.monotonic(), n))
        for grade in grades:
            self.latencies_ms.append(grade.latency_ms)
            self.flags.update(grade.flags)
            self.errors += grade.error is not None

    def _retry_after(self, n: int) -> float:
        now = time.monotonic()
        window = [(t, k) for t, k in self.recent if now - t < 10]
        rate = sum(k for _, k in window) / 10 if window else 0.0
        if rate <= 0:
            return 1.0
        return max(0.1, min(30.0, (self.in_flight + n - self.max_queue) / rate))

    def snapshot(self) -> dict[str, Any]:
        ordered = sorted(self.latencies_ms)

        def pct(q: float) -> float | None:
            if not ordered:
                return None
            return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]

        return {
            "uptime_s": round(time.monotonic() - self.started, 3),
            "requests": self.requests,
            "items": self.items,
            "in_flight": self.in_flight,
            "max_queue": self.max_queue,
            "rejected_requests": self.rejected,
            "grader_errors": self.errors,
            "latency_ms": {
                "p50": pct(0.5),
                "p95": pct(0.95),
                "p99": pct(0.99),
                "window": len(ordered),
            },
            "flags": dict(self.flags.most_common()),
        }


#: End-of-sequence and end-of-turn tokens of common chat models, as their tokenizers decode
#: them. OpenRLHF decodes the query with its special tokens, so the response it sends ends with
#: one; left on, it would break every check of how a response ends (IFEval's end phrase, JSON, all
#: capitals, quotation marks) and a program sent without a fence.
END_TOKENS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<|end|>",
    "<|return|>",
    "<end_of_turn>",
    "<eos>",
    "</s>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
)


def response_of(query: str, prompt: str | None, end_tokens: Sequence[str] = END_TOKENS) -> str:
    """The response in an OpenRLHF query: the query without its prompt and without the
    end tokens (and padding) it ends with.

    Examples:
        >>> response_of("Q: 2+2? A: 4<|im_end|>", "Q: 2+2? A:")
        ' 4'
    """
    response = query[len(prompt) :] if prompt and query.startswith(prompt) else query
    tokens = [t for t in end_tokens if t]
    stripped = True
    while stripped:
        stripped = False
        for token in tokens:
            if response.endswith(token):
                response = response[: -len(token)]
                stripped = True
    return response


def _rows_to_samples(
    rows: list[Any], preset: str, field_map: Mapping[str, str] | None
) -> tuple[list[Sample], dict[int, Grade]]:
    samples: list[Sample] = []
    bad: dict[int, Grade] = {}
    for i, row in enumerate(rows):
        try:
            samples.append(one_sample(row, index=i, preset=preset, field_map=field_map))
        except DataError as exc:
            bad[i] = Grade.failure(f"row {i}: {exc.reason}", Flag.BAD_ROW)
    return samples, bad


def create_app(
    grader: Grader,
    *,
    max_queue: int = 65_536,
    end_tokens: Sequence[str] = END_TOKENS,
    preset: str = "auto",
    field_map: Mapping[str, str] | None = None,
) -> FastAPI:
    """A FastAPI app serving ``grader`` (see the module docstring for the endpoints);
    ``end_tokens`` are cut from the end of ``/get_reward``'s responses; a ``/grade`` row is
    read as a file's row is (``preset``, ``field_map``: ``--preset``, ``--field``)."""
    state = ServerState(grader, max_queue=max_queue)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        yield
        from truegrade.exec import default_engine

        await asyncio.to_thread(default_engine().close)

    app = FastAPI(title="truegrade reward server", lifespan=lifespan)
    app.state.truegrade = state

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = describe_validation_error(exc, whole="body", limit=5, skip={"body"})
        if "json" not in request.headers.get("content-type", ""):
            # without the header the body is never parsed as JSON (curl -d sends a form type)
            problems += "; send the body as JSON with the header 'Content-Type: application/json'"
        return JSONResponse(status_code=422, content={"error": f"invalid request: {problems}"})

    def busy(wait_s: float) -> JSONResponse:
        return JSONResponse(
            status_code=429,
            headers={"Retry-After": str(max(1, math.ceil(wait_s)))},
            content={
                "error": f"server at capacity ({state.in_flight} items in flight, limit "
                f"{state.max_queue}); retry in {wait_s:.1f} s"
            },
        )

    async def grade_rows(samples: list[Sample]) -> list[Grade]:
        started = time.monotonic()
        wait_s = state.admit(len(samples))
        if wait_s is not None:
            raise _Busy(wait_s)
        grades: list[Grade] = []
        try:
            grades = await state.batcher.grade(samples)
            return grades
        finally:
            state.release(len(samples), grades, time.monotonic() - started)

    @app.post("/grade")
    async def grade(body: GradeRequest) -> Any:
        samples, bad = _rows_to_samples(body.samples, preset, field_map)
        try:
            graded = iter(await grade_rows(samples))
        except _Busy as exc:
            return busy(exc.wait_s)
        grades = [bad[i] if i in bad else next(graded) for i in range(len(body.samples))]
        ids = [
            row.get("id", i) if isinstance(row, dict) else i for i, row in enumerate(body.samples)
        ]
        return {"grades": [g.record(sample_id) for g, sample_id in zip(grades, ids, strict=True)]}

    @app.post("/get_reward")
    async def get_reward(body: RewardRequest) -> Any:
        n = len(body.query)
        for name, values in (("prompts", body.prompts), ("labels", body.labels)):
            if values is not None and len(values) != n:
                return JSONResponse(
                    status_code=422,
                    content={"error": f"'{name}' has {len(values)} entries for {n} queries"},
                )
        prompts: list[str | None] = list(body.prompts) if body.prompts is not None else [None] * n
        labels = body.labels if body.labels is not None else [None] * n
        samples = [
            Sample(id=i, prompt=p, response=response_of(q, p, end_tokens), reference=label)
            for i, (q, p, label) in enumerate(zip(body.query, prompts, labels, strict=True))
        ]
        try:
            grades = await grade_rows(samples)
        except _Busy as exc:
            return busy(exc.wait_s)
        rewards = [g.score for g in grades]
        return {
            "rewards": rewards,
            "scores": rewards,
            "extra_logs": {
                "passed": [float(bool(g.passed)) for g in grades],
                "grader_error": [float(g.error is not None) for g in grades],
                "hedged": [float(Flag.HEDGED in g.flags) for g in grades],
            },
        }

    @app.get("/health")
    async def health() -> Any:
        return {
            "status": "ok",
            "grader": getattr(state.grader, "spec", None) or repr(state.grader),
            "in_flight": state.in_flight,
        }

    @app.get("/metrics")
    async def metrics() -> Any:
        return state.snapshot()

    return app


class _Busy(Exception):
    def __init__(self, wait_s: float) -> None:
        super().__init__(wait_s)
        self.wait_s = wait_s
