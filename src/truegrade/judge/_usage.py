"""Token and cost accounting for judge calls: what was sent, what came back, what it cost.

One ``Usage`` is shared by every request of a grader (thread-safe), so a run can report how many
requests, retries, cache hits and tokens it took, and what that cost at the configured prices.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Usage"]


@dataclass
class Usage:
    """Running totals of a judge's work.

    Attributes:
        price_input_per_mtok / price_output_per_mtok: Prices in USD per million tokens (0: free).
        requests: HTTP requests sent (retries included).
        completions: Completions obtained from the endpoint.
        cache_hits: Completions served from the cache (no request).
        retries: Requests that were retries of a failed attempt.
        failures: Completions that failed for good, by kind.
        prompt_tokens / completion_tokens: As reported by the endpoint (cache hits excluded).
    """

    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    requests: int = 0
    completions: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def cost_usd(self) -> float:
        """What the tokens cost at the configured prices."""
        return (
            self.prompt_tokens * self.price_input_per_mtok
            + self.completion_tokens * self.price_output_per_mtok
        ) / 1e6

    def add_request(self, *, retry: bool) -> None:
        with self._lock:
            self.requests += 1
            self.retries += int(retry)

    def add_completion(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self.completions += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens

    def add_cache_hit(self) -> None:
        with self._lock:
            self.cache_hits += 1

    def add_failure(self, kind: str) -> None:
        with self._lock:
            self.failures[kind] += 1

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready totals, the cost included."""
        with self._lock:
            return {
                "requests": self.requests,
                "completions": self.completions,
                "cache_hits": self.cache_hits,
                "retries": self.retries,
                "failures": dict(self.failures),
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "cost_usd": self.cost_usd,
            }
