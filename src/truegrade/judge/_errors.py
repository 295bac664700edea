"""Why a judge request failed, in a form a grader can turn into a flag.

The client never lets a transport error escape as an SDK exception: after its retries, a failure
is one ``JudgeRequestError`` with a ``kind`` (``timeout``, ``rate_limited``, ``server_error``,
``connection_error``, ``bad_request``, ``auth``, ``bad_response``) and the number of attempts made.
"""

from __future__ import annotations

from truegrade.core import TruegradeError

__all__ = ["JudgeRequestError", "RequestErrorKind"]

RequestErrorKind = str
"""One of ``timeout``, ``rate_limited``, ``server_error``, ``connection_error``, ``bad_request``,
``auth``, ``bad_response``."""


class JudgeRequestError(TruegradeError, RuntimeError):
    """A judge request failed for good (after the retries it was allowed).

    Attributes:
        kind: The kind of failure (see ``RequestErrorKind``).
        attempts: Requests sent for this completion, the failed ones included.
        status: The HTTP status of the last response, when there was one.
        retry_after_s: The server's ``Retry-After``, in seconds, when it sent one.
    """

    def __init__(
        self,
        kind: RequestErrorKind,
        message: str,
        *,
        attempts: int = 1,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.attempts = attempts
        self.status = status
        self.retry_after_s = retry_after_s

    @property
    def retryable(self) -> bool:
        """Whether trying again later could succeed."""
        return self.kind in {"timeout", "rate_limited", "server_error", "connection_error"}
