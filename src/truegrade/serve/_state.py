"""What the reward server admits, and what it measures.

Admission is by requests, items and bytes at once, and by the wait a new request would face:
a request is refused (429) when admitting it would exceed a count limit, or when the items
already admitted would take longer than ``max_wait_s`` to drain at the measured rate. So under a
flood the requests that are accepted are answered in bounded time, and the rest are told when to
come back: ``Retry-After`` is the time the excess takes to drain at that rate.

The drain rate is measured, not assumed: items finished per second of busy time (time with
something in flight) over the last ``_WINDOW_S`` seconds. An idle server that suddenly gets a
burst has no rate yet; the count limits alone bound it until ``_MIN_ITEMS`` items have finished
(the first ones include the workers' start, and would make the rate look far lower than it is).

Metrics are kept with ``prometheus_client`` (the format every scraper reads), in a registry of the
server's own, so two servers in one process never mix their numbers.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Gauge, Histogram, generate_latest
from prometheus_client import Counter as PromCounter

from truegrade.core import Grade

__all__ = ["Admission", "ServerLimits", "ServerState"]

_WINDOW_S = 10.0
#: Items the window must hold before its rate is trusted.
_MIN_ITEMS = 32
#: Seconds: from a quick item graded in a warm worker to a code item that builds and runs tests.
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


def _default_max_requests() -> int:
    """Requests admitted at once: enough to keep every core's worker fed with one-item requests
    (OpenRLHF's shape) many times over, few enough that their bodies and tasks stay small."""
    return 256 * max(1, len(os.sched_getaffinity(0)))


@dataclass(frozen=True)
class ServerLimits:
    """The reward server's bounds (``truegrade serve`` options of the same names).

    Attributes:
        max_requests: Requests admitted at once (being graded or waiting for a worker); default
            256 per core.
        max_queue: Items admitted at once, over all requests.
        max_body_mb: Largest request body; a larger one gets 413 before it is read.
        max_pending_mb: Bodies of all admitted requests together (memory stays bounded).
        max_wait_s: Refuse a request when the items already admitted would take longer than
            this to drain at the measured rate.
        request_timeout_s: Deadline of one request, from its arrival: past it the request gets
            504 and the work left for it is cancelled (a slow item never holds a client forever).
        idle_timeout_s: A connection must deliver a whole request within this after it opens or
            after its last response; a stalled or silent one is closed (slow-loris clients).
        graceful_s: On shutdown, how long in-flight requests may take to finish; the ones left
            then get 503.
    """

    max_requests: int = 0
    max_queue: int = 65_536
    max_body_mb: float = 32.0
    max_pending_mb: float = 512.0
    max_wait_s: float = 30.0
    request_timeout_s: float = 600.0
    idle_timeout_s: float = 15.0
    graceful_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_requests <= 0:
            object.__setattr__(self, "max_requests", _default_max_requests())
        for name, value in asdict(self).items():
            if not value > 0:
                raise ValueError(f"{name} must be > 0, got {value}")

    @property
    def max_body_bytes(self) -> int:
        return int(self.max_body_mb * 1024 * 1024)


@dataclass
class Admission:
    """A request's reservation: released when it is answered."""

    items: int
    body_bytes: int
    arrived: float


class _Drain:
    """Items finished per second of busy time, over a sliding window (running totals, so a
    look costs nothing however many requests the window holds)."""

    def __init__(self) -> None:
        self.done: deque[tuple[float, int]] = deque()
        self.done_items = 0
        self.busy: deque[tuple[float, float]] = deque()  # closed busy intervals
        self.busy_s = 0.0
        self.busy_since: float | None = None

    def start(self, now: float) -> None:
        if self.busy_since is None:
            self.busy_since = now

    def stop(self, now: float) -> None:
        if self.busy_since is not None:
            self.busy.append((self.busy_since, now))
            self.busy_s += now - self.busy_since
            self.busy_since = None

    def finished(self, now: float, items: int) -> None:
        self.done.append((now, items))
        self.done_items += items

    def rate(self, now: float) -> float | None:
        horizon = now - _WINDOW_S
        while self.done and self.done[0][0] < horizon:
            self.done_items -= self.done.popleft()[1]
        while self.busy and self.busy[0][1] < horizon:
            start, end = self.busy.popleft()
            self.busy_s -= end - start
        busy = self.busy_s
        if self.busy:  # the oldest interval counts only from the window's start
            busy -= max(0.0, horizon - self.busy[0][0])
        if self.busy_since is not None:
            busy += now - max(self.busy_since, horizon)
        if self.done_items < _MIN_ITEMS or busy <= 0:
            return None  # too few to say: a cold start's first items include the workers' boot
        return self.done_items / busy


class ServerState:
    """Admission control and metrics of one server."""

    def __init__(self, limits: ServerLimits, *, grader_name: str = "grader") -> None:
        self.limits = limits
        self.started = time.monotonic()
        self.requests_in = 0  # admitted and not yet answered
        self.items_in = 0
        self.bytes_in = 0
        self.draining = False
        self.drain = _Drain()
        self.flags: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.answered = 0
        self.items = 0
        self.rejected: Counter[str] = Counter()
        self.cancelled = 0
        self.timed_out = 0
        #: One per request being graded: called with 503 when shutdown's grace runs out.
        self.stoppers: set[Callable[[int], None]] = set()
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.m_requests = PromCounter(
            "truegrade_requests", "Requests answered, by endpoint and status.",
            ["endpoint", "status"], registry=r,
        )  # fmt: skip
        self.m_items = PromCounter("truegrade_items", "Items graded.", registry=r)
        self.m_errors = PromCounter(
            "truegrade_item_errors", "Items that could not be graded, by kind.", ["kind"],
            registry=r,
        )  # fmt: skip
        self.m_rejected = PromCounter(
            "truegrade_rejected_requests", "Requests refused, by reason.", ["reason"], registry=r
        )
        self.m_cancelled = PromCounter(
            "truegrade_cancelled_requests",
            "Requests whose client left before the answer; their work was cancelled.",
            registry=r,
        )
        self.m_wait = Histogram(
            "truegrade_queue_wait_seconds",
            "Per request: end-to-end time minus its longest item's grading time (for a one-item "
            "request, the time it waited for a worker).",
            buckets=_BUCKETS,
            registry=r,
        )
        self.m_e2e = Histogram(
            "truegrade_request_seconds",
            "Per request: from its arrival to its answer.",
            buckets=_BUCKETS,
            registry=r,
        )
        self.m_grading = Histogram(
            "truegrade_item_grading_seconds",
            "Per item: grading time in a worker.",
            buckets=_BUCKETS,
            registry=r,
        )
        self.m_requests_in = Gauge(
            "truegrade_requests_in_flight", "Requests admitted and not yet answered.", registry=r
        )
        self.m_items_in = Gauge(
            "truegrade_items_in_flight", "Items admitted and not yet graded.", registry=r
        )
        self.m_bytes_in = Gauge(
            "truegrade_bytes_in_flight", "Request bytes admitted and not yet answered.", registry=r
        )
        self.m_rate = Gauge(
            "truegrade_drain_rate", "Items graded per busy second, last 10 s.", registry=r
        )
        self.m_rate.set_function(lambda: self.drain.rate(time.monotonic()) or 0.0)
        self.m_requests_in.set_function(lambda: self.requests_in)
        self.m_items_in.set_function(lambda: self.items_in)
        self.m_bytes_in.set_function(lambda: self.bytes_in)
        self.grader_name = grader_name

    def begin_drain(self, grace_s: float) -> None:
        """Shutdown has begun: refuse new requests (503) and, ``grace_s`` from now, answer the
        ones still being graded with 503 so none is left unanswered when the process exits."""
        if self.draining:
            return
        self.draining = True
        asyncio.get_running_loop().call_later(max(0.0, grace_s), self._abort)

    def _abort(self) -> None:
        for stop in list(self.stoppers):
            stop(503)

    # -- admission ---------------------------------------------------------------------------------

    def admit(self, items: int, body_bytes: int) -> Admission | tuple[str, float]:
        """Reserve room for a request, or say why not and how many seconds to wait."""
        now = time.monotonic()
        limits = self.limits
        rate = self.drain.rate(now)
        kind = reason = ""
        excess_items = 0.0
        if self.draining:
            kind, reason = "shutting_down", "shutting down"
        elif self.requests_in > 0:
            if self.requests_in + 1 > limits.max_requests:
                kind = "requests"
                reason = f"{self.requests_in} requests in flight (limit {limits.max_requests})"
                # requests drain about as fast as their items do: one request's worth
                excess_items = self.items_in / max(1, self.requests_in)
            elif self.items_in + items > limits.max_queue:
                kind = "items"
                reason = f"{self.items_in} items in flight (limit {limits.max_queue})"
                excess_items = self.items_in + items - limits.max_queue
            elif self.bytes_in + body_bytes > limits.max_pending_mb * 1024 * 1024:
                kind = "bytes"
                reason = (
                    f"{self.bytes_in / 2**20:.0f} MiB of requests in flight (limit "
                    f"{limits.max_pending_mb:g} MiB)"
                )
                excess_items = self.items_in / 2
            elif rate is not None and (self.items_in + items) / rate > limits.max_wait_s:
                kind = "wait"
                reason = (
                    f"about {(self.items_in + items) / rate:.0f} s of work queued (limit "
                    f"{limits.max_wait_s:g} s)"
                )
                excess_items = self.items_in + items - limits.max_wait_s * rate
        if kind:
            self.rejected[kind] += 1
            self.m_rejected.labels(reason=kind).inc()
            wait_s = 1.0 if rate is None else excess_items / rate
            return reason, max(1.0, min(60.0, wait_s))
        self.requests_in += 1
        self.items_in += items
        self.bytes_in += body_bytes
        self.drain.start(now)
        return Admission(items, body_bytes, now)

    def release(
        self, ticket: Admission, grades: list[Grade], *, endpoint: str, status: int
    ) -> None:
        """Free a request's reservation and record how it went."""
        now = time.monotonic()
        self.requests_in -= 1
        self.items_in -= ticket.items
        self.bytes_in -= ticket.body_bytes
        if self.requests_in == 0:
            self.drain.stop(now)
        self.drain.finished(now, len(grades))
        self.answered += 1
        self.m_requests.labels(endpoint=endpoint, status=str(status)).inc()
        if status == 499:
            self.cancelled += 1
            self.m_cancelled.inc()
        elif status == 504:
            self.timed_out += 1
        if not grades:
            return
        e2e = now - ticket.arrived
        longest = max(g.latency_ms for g in grades) / 1000
        self.m_e2e.observe(e2e)
        self.m_wait.observe(max(0.0, e2e - longest))
        self.items += len(grades)
        self.m_items.inc(len(grades))
        for grade in grades:
            self.m_grading.observe(grade.latency_ms / 1000)
            self.flags.update(grade.flags)
            if grade.error is not None:
                kind = next((f for f in grade.flags), "error")
                self.errors[kind] += 1
                self.m_errors.labels(kind=kind).inc()

    def refusal(self, reason: str, wait_s: float) -> dict[str, Any]:
        return {"error": f"server at capacity ({reason}); retry in {math.ceil(wait_s)} s"}

    # -- reporting ---------------------------------------------------------------------------------

    def prometheus(self) -> bytes:
        return generate_latest(self.registry)

    def snapshot(self) -> dict[str, Any]:
        """The same numbers as JSON (``/metrics?format=json``)."""

        def quantiles(histogram: Histogram) -> dict[str, float | None]:
            samples = {
                s.labels["le"]: s.value
                for metric in histogram.collect()
                for s in metric.samples
                if s.name.endswith("_bucket")
            }
            total = samples.get("+Inf", 0.0)
            out: dict[str, float | None] = {}
            for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
                bound = next(
                    (float(le) for le, count in samples.items() if total and count >= q * total),
                    None,
                )
                out[name] = None if bound is None or math.isinf(bound) else bound
            out["count"] = total
            return out

        now = time.monotonic()
        return {
            "uptime_s": round(now - self.started, 3),
            "requests": self.answered,
            "items": self.items,
            "requests_in_flight": self.requests_in,
            "items_in_flight": self.items_in,
            "bytes_in_flight": self.bytes_in,
            "drain_rate_items_per_s": self.drain.rate(now),
            "limits": asdict(self.limits),
            "rejected_requests": sum(self.rejected.values()),
            "rejected_by_reason": dict(self.rejected),
            "cancelled_requests": self.cancelled,
            "timed_out_requests": self.timed_out,
            "item_errors": dict(self.errors),
            "flags": dict(self.flags.most_common()),
            # upper bounds of the histogram buckets the quantiles fall in, in seconds
            "request_seconds": quantiles(self.m_e2e),
            "queue_wait_seconds": quantiles(self.m_wait),
            "item_grading_seconds": quantiles(self.m_grading),
        }
