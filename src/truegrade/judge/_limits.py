"""Requests-per-minute and tokens-per-minute buckets that an async client waits on.

Each bucket refills continuously at its rate and holds at most one second's worth, so traffic is
spread evenly instead of spent in a burst at the top of each minute (which is what earns 429s).
A caller *reserves* what it needs, possibly driving the level below zero, and sleeps until the
reservation is covered: reservations are served in order and nobody starves. The state is
guarded by a thread lock and holds no asyncio objects, so one limiter serves every event loop
and thread of a process.
"""

from __future__ import annotations

import asyncio
import threading
import time

__all__ = ["RateLimiter", "TokenBucket"]


class TokenBucket:
    """A continuously refilling bucket of ``rate_per_s`` units, capacity ``burst``."""

    def __init__(self, rate_per_s: float, burst: float | None = None) -> None:
        if rate_per_s <= 0:
            raise ValueError("a rate limit must be positive")
        self.rate_per_s = rate_per_s
        self.burst = burst if burst is not None else max(1.0, rate_per_s)
        self.level = self.burst
        self.updated = time.monotonic()

    def reserve(self, amount: float, now: float) -> float:
        """Take ``amount`` (possibly into debt); return the seconds until it is covered."""
        self.level = min(self.burst, self.level + (now - self.updated) * self.rate_per_s)
        self.updated = now
        self.level -= amount
        return 0.0 if self.level >= 0 else -self.level / self.rate_per_s

    def refund(self, amount: float) -> None:
        """Give back (or, negative, take more than) what a reservation estimated."""
        self.level = min(self.burst, self.level + amount)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits (either may be None: unlimited).

    Examples:
        >>> limiter = RateLimiter(requests_per_minute=600)   # 10 requests/s, evenly spread
    """

    def __init__(
        self, *, requests_per_minute: float | None = None, tokens_per_minute: float | None = None
    ) -> None:
        self._lock = threading.Lock()
        self.requests = (
            None if requests_per_minute is None else TokenBucket(requests_per_minute / 60)
        )
        self.tokens = None if tokens_per_minute is None else TokenBucket(tokens_per_minute / 60)
        self.waited_s = 0.0

    @property
    def active(self) -> bool:
        return self.requests is not None or self.tokens is not None

    async def acquire(self, tokens: int) -> float:
        """Wait until one request of about ``tokens`` tokens may be sent.

        Returns the monotonic time the request was cleared for. The sleep may overrun it on a
        loaded machine (the event loop wakes late); the schedule itself never exceeds the rate.
        """
        if not self.active:
            return time.monotonic()
        with self._lock:
            now = time.monotonic()
            wait = 0.0
            if self.requests is not None:
                wait = max(wait, self.requests.reserve(1, now))
            if self.tokens is not None:
                wait = max(wait, self.tokens.reserve(tokens, now))
            self.waited_s += wait
        if wait > 0:
            await asyncio.sleep(wait)
        return now + wait

    def settle(self, estimated: int, actual: int) -> None:
        """Correct a token reservation once the endpoint reports the real usage."""
        if self.tokens is not None and actual > 0:
            with self._lock:
                self.tokens.refund(estimated - actual)
