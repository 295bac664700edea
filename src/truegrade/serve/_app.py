"""The reward server: any grader behind HTTP, for RL loops that call rewards remotely.

Endpoints:

* ``POST /grade``: ``{"samples": [row, ...]}`` -> ``{"grades": [record, ...]}`` in order. A row
  that is malformed or cannot be graded gets a grade with ``error`` set; the request succeeds.
* ``POST /get_reward``: OpenRLHF's remote reward contract, ``{"query", "prompts", "labels"}`` ->
  ``{"rewards", "scores", "extra_logs"}``. The response is the query with its prompt removed, and
  the end-of-sequence tokens it ends with (``END_TOKENS``, or the server's own list).
* ``GET /health``: liveness, the grader, and what is in flight.
* ``GET /metrics``: Prometheus' text format (``?format=json`` for JSON): request and queue-wait
  latency histograms, items and requests in flight, errors by kind, refusals by reason.

Each request is graded as its own job and answered as soon as its own items are done: a slow or
hostile item delays only the request it came in. (The engine still sends the items of concurrent
requests to its workers together when they are quick, so one-item requests cost little more than
one batch.) A request past its deadline gets 504 and its remaining work is cancelled; a request
whose client left is cancelled the same way. Overload is refused, not absorbed (``_state``), and
errors always have the shape ``{"error": message}``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

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
from truegrade.serve._http import BodyGuard
from truegrade.serve._state import Admission, ServerLimits, ServerState

__all__ = [
    "END_TOKENS",
    "GradeRequest",
    "RewardRequest",
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


class _Refused(Exception):
    """A request that ends with a status other than 200 (the handler turns it into JSON)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def create_app(
    grader: Grader,
    *,
    limits: ServerLimits | None = None,
    max_queue: int | None = None,
    end_tokens: Sequence[str] = END_TOKENS,
    preset: str = "auto",
    field_map: Mapping[str, str] | None = None,
) -> FastAPI:
    """An ASGI app serving ``grader`` (see the module docstring for the endpoints), bounded by
    ``limits`` (``max_queue`` overrides its item limit); ``end_tokens`` are cut from the end of
    ``/get_reward``'s responses; a ``/grade`` row is read as a file's row is (``preset``,
    ``field_map``: ``--preset``, ``--field``); ``app.state.truegrade`` holds its admission control
    and metrics."""
    bounds = limits or ServerLimits()
    if max_queue is not None:
        bounds = ServerLimits(**{**bounds.__dict__, "max_queue": max_queue})
    state = ServerState(bounds)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        # requests of graders that grade in threads each hold one while they wait
        threads = concurrent.futures.ThreadPoolExecutor(64, thread_name_prefix="truegrade-serve")
        asyncio.get_running_loop().set_default_executor(threads)
        yield
        from truegrade.exec import default_engine

        await asyncio.to_thread(default_engine().close)
        threads.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(title="truegrade reward server", lifespan=lifespan)
    app.state.truegrade = state

    def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(status_code=status, headers=headers, content={"error": message})

    def counted(request: Request, response: JSONResponse) -> JSONResponse:
        """An error answer, counted in ``truegrade_requests_total`` unless the request was
        admitted (its release counted it): refusals, bad bodies and unknown paths are requests
        answered too. The endpoint label is the route's (``other`` for a path the server does
        not have, so a scan of random paths cannot grow the metric without bound)."""
        if not request.scope.get("truegrade.released"):
            route = request.scope.get("route")
            endpoint = getattr(route, "path", None) or "other"
            state.m_requests.labels(endpoint=endpoint, status=str(response.status_code)).inc()
        return response

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = describe_validation_error(exc, whole="body", limit=5, skip={"body"})
        if "json" not in request.headers.get("content-type", ""):
            # without the header the body is never parsed as JSON (curl -d sends a form type)
            problems += "; send the body as JSON with the header 'Content-Type: application/json'"
        return counted(request, error(422, f"invalid request: {problems}"))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # FastAPI's own errors (a body that is not UTF-8, an unknown path) in the same shape
        return counted(request, error(exc.status_code, str(exc.detail), dict(exc.headers or {})))

    @app.exception_handler(_Refused)
    async def _refused(request: Request, exc: _Refused) -> JSONResponse:
        return counted(request, error(exc.status, exc.message, exc.headers))

    async def grade_rows(request: Request, samples: list[Sample], endpoint: str) -> list[Grade]:
        body_bytes = int(request.scope.get("truegrade.body_bytes", 0))
        ticket = state.admit(len(samples), body_bytes)
        if not isinstance(ticket, Admission):
            reason, wait_s = ticket
            status = 503 if state.draining else 429
            raise _Refused(
                status,
                state.refusal(reason, wait_s)["error"],
                {"Retry-After": str(max(1, round(wait_s)))},
            )
        grades: list[Grade] = []
        status = 200
        task = asyncio.current_task()
        stopped: list[int] = []  # why this request was stopped: 504 (deadline) or 503 (shutdown)

        def stop(why: int) -> None:
            if not stopped and task is not None:
                stopped.append(why)
                task.cancel()

        left = bounds.request_timeout_s - (time.monotonic() - ticket.arrived)
        deadline = asyncio.get_running_loop().call_later(max(0.0, left), stop, 504)
        state.stoppers.add(stop)
        try:
            grades = await run_grader_async(grader, samples)
            return grades
        except asyncio.CancelledError:
            if not stopped:  # the client left (499), or the server is going down (503)
                status = 499 if request.scope.get("truegrade.disconnected") else 503
                raise
            status = stopped[0]
            if task is not None and hasattr(task, "uncancel"):  # Python 3.11+
                task.uncancel()  # the cancellation was ours, and it is handled
            if status == 503:
                raise _Refused(
                    503, "the server is shutting down; retry", {"Retry-After": "1"}
                ) from None
            raise _Refused(
                504,
                f"grading took longer than the request deadline of {bounds.request_timeout_s:g} s "
                "(--request-timeout-s); its work was cancelled",
            ) from None
        finally:
            deadline.cancel()
            state.stoppers.discard(stop)
            state.release(ticket, grades, endpoint=endpoint, status=status)
            request.scope["truegrade.released"] = True  # counted: its error answer is not again

    @app.post("/grade")
    async def grade(request: Request, body: GradeRequest) -> Any:
        samples, bad = _rows_to_samples(body.samples, preset, field_map)
        graded = iter(await grade_rows(request, samples, "grade"))
        grades = [bad[i] if i in bad else next(graded) for i in range(len(body.samples))]
        ids = [
            row.get("id", i) if isinstance(row, dict) else i for i, row in enumerate(body.samples)
        ]
        return {"grades": [g.record(sample_id) for g, sample_id in zip(grades, ids, strict=True)]}

    @app.post("/get_reward")
    async def get_reward(request: Request, body: RewardRequest) -> Any:
        n = len(body.query)
        for name, values in (("prompts", body.prompts), ("labels", body.labels)):
            if values is not None and len(values) != n:
                return counted(
                    request, error(422, f"'{name}' has {len(values)} entries for {n} queries")
                )
        prompts: list[str | None] = list(body.prompts) if body.prompts is not None else [None] * n
        labels = body.labels if body.labels is not None else [None] * n
        samples = [
            Sample(id=i, prompt=p, response=response_of(q, p, end_tokens), reference=label)
            for i, (q, p, label) in enumerate(zip(body.query, prompts, labels, strict=True))
        ]
        grades = await grade_rows(request, samples, "get_reward")
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
            "status": "draining" if state.draining else "ok",
            "grader": getattr(grader, "spec", None) or repr(grader),
            "requests_in_flight": state.requests_in,
            "items_in_flight": state.items_in,
        }

    @app.get("/metrics")
    async def metrics(request: Request, format: str = "prometheus") -> Any:
        wants_json = format == "json" or (
            "application/json" in request.headers.get("accept", "") and format != "prometheus"
        )
        if wants_json:
            return state.snapshot()
        return Response(state.prometheus(), media_type="text/plain; version=0.0.4; charset=utf-8")

    app.add_middleware(BodyGuard, max_body_bytes=bounds.max_body_bytes)
    return app
