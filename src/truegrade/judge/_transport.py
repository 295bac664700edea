"""What every HTTP client of an endpoint shares: its limits, its retries and its error kinds.

The chat client (``JudgeClient``) and the plain JSON client (``JsonClient``) differ in what they
send and how they read the answer, not in how hard they push a server or how they recover from
it. ``TransportConfig`` holds the limits, ``with_retries`` runs an attempt under the retry policy
(exponential backoff with full jitter, never sooner than a server's ``Retry-After``), and
``status_error`` turns an HTTP status into the ``JudgeRequestError`` kind a grader flags.
"""

from __future__ import annotations

import functools
import random
import ssl
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from truegrade.judge._errors import JudgeRequestError
from truegrade.judge._usage import Usage

__all__ = ["TransportConfig", "status_error", "tls_context", "with_retries"]

T = TypeVar("T")

_MAX_RETRY_AFTER_S = 120.0


class TransportConfig(BaseModel):
    """How hard to push an endpoint and how to recover when it pushes back.

    Attributes:
        api_key_env: Name of the environment variable holding the key; the key itself never
            appears in a config or a spec.
        headers: Extra HTTP headers sent with every request (not for credentials: a grader's
            spec, headers included, is recorded with its results).
        timeout_s: Per-request timeout.
        max_retries: Retries after the first attempt (429, 5xx, timeouts, connection errors).
        backoff_initial_s / backoff_max_s: Exponential backoff with full jitter between retries.
        concurrency: Requests in flight at most.
        requests_per_minute: Rate limit (None: none).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_key_env: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    backoff_initial_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    concurrency: int = Field(default=64, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One certificate-verifying TLS context for every client of the process: loading the CA
    bundle takes tens of milliseconds, too long to repeat for each connection pool."""
    context = ssl.create_default_context()
    try:
        import certifi  # the CA bundle the HTTP client would load itself

        context.load_verify_locations(certifi.where())
    except (ImportError, OSError):
        pass  # the system's CA store, as loaded above
    return context


def status_error(status: int, message: str, retry_after: str | None = None) -> JudgeRequestError:
    """The error for an HTTP status: 429 and 5xx are retryable, other 4xx are not."""
    if status == 429:
        try:
            seconds = float(retry_after) if retry_after is not None else None
        except ValueError:
            seconds = None  # an HTTP date: fall back to our own backoff
        return JudgeRequestError("rate_limited", message, status=status, retry_after_s=seconds)
    if status >= 500:
        return JudgeRequestError("server_error", message, status=status)
    if status in (401, 403):
        return JudgeRequestError("auth", message, status=status)
    return JudgeRequestError("bad_request", message, status=status)


def _backoff(config: TransportConfig) -> Callable[[RetryCallState], float]:
    def wait(state: RetryCallState) -> float:
        """Full-jitter exponential backoff, never shorter than a server's ``Retry-After``
        (which is honoured up to two minutes)."""
        ceiling = min(
            config.backoff_max_s,
            config.backoff_initial_s * 2 ** max(0, state.attempt_number - 1),
        )
        seconds = random.uniform(0, ceiling)
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, JudgeRequestError) and exc.retry_after_s is not None:
            # the server knows when it will take requests again: asking sooner earns another 429
            seconds = max(seconds, min(exc.retry_after_s, _MAX_RETRY_AFTER_S))
        return seconds

    return wait


async def with_retries(
    config: TransportConfig, usage: Usage, attempt: Callable[[bool], Awaitable[T]]
) -> tuple[T, int]:
    """Run ``attempt(is_retry)`` until it succeeds or fails for good; returns the result and
    the attempts made.

    Raises:
        JudgeRequestError: the last failure, with ``attempts`` set and counted in ``usage``.
    """
    attempts = 0

    async def once() -> T:
        nonlocal attempts
        attempts += 1
        return await attempt(attempts > 1)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(config.max_retries + 1),
        wait=_backoff(config),
        retry=retry_if_exception(lambda exc: isinstance(exc, JudgeRequestError) and exc.retryable),
        reraise=True,
    )
    try:
        result: T = await retrying(once)
    except JudgeRequestError as exc:
        exc.attempts = attempts
        usage.add_failure(exc.kind)
        raise
    return result, attempts
