"""``JsonClient``: JSON in, JSON out, to any scoring endpoint, with the judge client's care.

Served reward models (vLLM's ``/pooling`` and ``/classify``, or a team's own ``POST /score``)
are not chat endpoints, but a grader sending them thousands of requests needs the same things
as one talking to a judge: bounded concurrency, a requests-per-minute bucket, retries with
backoff on 429, 5xx, timeouts and dropped connections, a per-request timeout, and accounting.
This client gives those to a plain ``POST`` of a JSON body. It reads nothing into the answer
but that it is JSON: what the body means is the caller's business, and so is caching (a caller
that batches items into one request caches each item under its own key, with ``JudgeCache``).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any

from pydantic import Field

from truegrade.judge._errors import JudgeRequestError
from truegrade.judge._limits import RateLimiter
from truegrade.judge._transport import TransportConfig, status_error, tls_context, with_retries
from truegrade.judge._usage import Usage

if TYPE_CHECKING:
    import httpx

__all__ = ["JsonClient", "JsonEndpointConfig"]


class JsonEndpointConfig(TransportConfig):
    """A JSON endpoint: its URL and a ``TransportConfig`` (limits, retries, timeout).

    Attributes:
        url: Where to ``POST``, e.g. ``http://localhost:8000/pooling``.
        api_key_env: As in ``TransportConfig``; when named, the key goes out as a bearer token.
            Unset, no key is sent at all.
    """

    url: str = Field(min_length=1)


class JsonClient:
    """``POST`` JSON bodies with limits, retries and accounting; one client per event loop.

    Args:
        config: The endpoint.
        limiter: Rate limiter (default: one built from the config's limit).
        usage: Accounting to add to (default: a fresh one).

    Examples:
        >>> async def score(client):
        ...     return await client.post({"prompt": "2+2?", "response": "4"})
    """

    def __init__(
        self,
        config: JsonEndpointConfig,
        *,
        limiter: RateLimiter | None = None,
        usage: Usage | None = None,
    ) -> None:
        self.config = config
        self.limiter = limiter or RateLimiter(requests_per_minute=config.requests_per_minute)
        self.usage = usage or Usage()
        self._http: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None

    def __repr__(self) -> str:
        return f"JsonClient(url={self.config.url!r})"

    async def __aenter__(self) -> JsonClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            import httpx

            headers = {"content-type": "application/json", **self.config.headers}
            name = self.config.api_key_env
            key = os.environ.get(name, "") if name else ""
            if key:
                headers["authorization"] = f"Bearer {key}"
            size = self.config.concurrency
            self._http = httpx.AsyncClient(
                headers=headers,
                timeout=self.config.timeout_s,
                limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                verify=tls_context(),
            )
        return self._http

    async def post(self, body: Any) -> Any:
        """The endpoint's JSON answer to ``body`` (after retries where they apply).

        Raises:
            JudgeRequestError: the endpoint failed for good, or answered with something that is
                not JSON (``bad_response``).
        """

        async def attempt(retry: bool) -> Any:
            return await self._send(body, retry=retry)

        answer, _ = await with_retries(self.config, self.usage, attempt)
        return answer

    async def _send(self, body: Any, *, retry: bool) -> Any:
        import httpx

        await self.limiter.acquire(0)
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.config.concurrency)
        content = json.dumps(body, ensure_ascii=False).encode("utf-8")
        async with self._semaphore:
            self.usage.add_request(retry=retry)
            try:
                response = await self._client().post(self.config.url, content=content)
            except httpx.TimeoutException:
                raise JudgeRequestError(
                    "timeout", f"no answer within {self.config.timeout_s:g} s"
                ) from None
            except httpx.TransportError as exc:
                raise JudgeRequestError(
                    "connection_error", f"cannot reach {self.config.url}: {exc!r}"
                ) from None
        if response.status_code >= 400:
            text = " ".join(response.text.split())[:200]
            raise status_error(
                response.status_code,
                f"HTTP {response.status_code}: {text}",
                response.headers.get("retry-after"),
            )
        try:
            answer = json.loads(response.content)
        except ValueError:
            raise JudgeRequestError("bad_response", "the endpoint's answer is not JSON") from None
        self.usage.add_completion(0, 0)
        return answer
