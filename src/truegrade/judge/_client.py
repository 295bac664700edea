"""``JudgeClient``: chat completions from any OpenAI-compatible endpoint, done carefully.

vLLM, SGLang, ollama, llama.cpp's server and OpenAI itself all speak the same chat-completions
API, so one client serves them all, through the official ``openai`` SDK. Around each request it
adds what a grader sending thousands of them needs:

* bounded concurrency (a semaphore per event loop) and requests/tokens-per-minute buckets;
* retries with exponential backoff and jitter on 429, 5xx, timeouts and dropped connections
  (``tenacity``), honouring ``Retry-After``; other 4xx fail at once;
* a per-request timeout;
* token and cost accounting (``Usage``);
* a content-addressed SQLite cache (``JudgeCache``): a rerun sends nothing.

Every failure comes out as one ``JudgeRequestError`` with a kind and the attempts made. The
client knows nothing about graders, prompts or verdicts, and never logs the API key (it reads
the key from an environment variable named in the config, never from the config itself).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field

from truegrade.judge._cache import JudgeCache
from truegrade.judge._errors import JudgeRequestError
from truegrade.judge._limits import RateLimiter
from truegrade.judge._transport import TransportConfig, status_error, tls_context, with_retries
from truegrade.judge._types import ChatRequest, Completion, TokenLogprob
from truegrade.judge._usage import Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["EndpointConfig", "JudgeClient"]

_POOL = 16


def _api_key(config: EndpointConfig) -> str:
    """The key for this endpoint: from the named variable; OpenAI's own variable only for
    OpenAI's own host (local servers take any key, and should never receive a real one)."""
    name = config.api_key_env
    if name is None and urlsplit(config.base_url).hostname == "api.openai.com":
        name = "OPENAI_API_KEY"
    return (os.environ.get(name, "") if name else "") or "not-needed"


class EndpointConfig(TransportConfig):
    """Where a judge lives and how hard to push it: a ``TransportConfig`` (``api_key_env``,
    ``headers``, ``timeout_s``, ``max_retries``, backoff, ``concurrency``,
    ``requests_per_minute``) with the model and its prices.

    Attributes:
        base_url: The OpenAI-compatible API root (``http://localhost:8000/v1`` for vLLM);
            ``endpoint`` is accepted as its name too.
        model: The model name to request.
        api_key_env: As in ``TransportConfig``; unset, ``OPENAI_API_KEY`` is used for
            ``api.openai.com`` only, so a key is never sent to another host unless named.
        tokens_per_minute: Rate limit on tokens (None: none).
        price_input_per_mtok / price_output_per_mtok: USD per million tokens, for cost reports.
    """

    base_url: str = Field(
        default="https://api.openai.com/v1",
        validation_alias=AliasChoices("base_url", "endpoint"),
    )
    model: str = Field(min_length=1)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    price_input_per_mtok: float = Field(default=0.0, ge=0)
    price_output_per_mtok: float = Field(default=0.0, ge=0)


class JudgeClient:
    """Async chat completions with limits, retries, a cache and accounting.

    Use one client per event loop (its HTTP connections and semaphore belong to the loop that
    first uses it); the cache, limiter and usage passed in may be shared by many clients.

    Args:
        config: The endpoint.
        cache: Completions cache, or None.
        limiter: Rate limiter (default: one built from the config's limits).
        usage: Accounting to add to (default: a fresh one with the config's prices).

    Examples:
        >>> async def ask(client):
        ...     done = await client.complete(ChatRequest(({"role": "user", "content": "Hi"},)))
        ...     return done.text
    """

    def __init__(
        self,
        config: EndpointConfig,
        *,
        cache: JudgeCache | None = None,
        limiter: RateLimiter | None = None,
        usage: Usage | None = None,
    ) -> None:
        self.config = config
        self.cache = cache
        self.limiter = limiter or RateLimiter(
            requests_per_minute=config.requests_per_minute,
            tokens_per_minute=config.tokens_per_minute,
        )
        self.usage = usage or Usage(
            price_input_per_mtok=config.price_input_per_mtok,
            price_output_per_mtok=config.price_output_per_mtok,
        )
        self._sdks: list[AsyncOpenAI] = []
        self._next = 0
        self._semaphore: asyncio.Semaphore | None = None

    def __repr__(self) -> str:
        return f"JudgeClient(model={self.config.model!r}, base_url={self.config.base_url!r})"

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections (the cache stays open: it may be shared)."""
        sdks, self._sdks = self._sdks, []
        for sdk in sdks:
            await sdk.close()

    def _client(self) -> AsyncOpenAI:
        """One of the SDK clients, in turn.

        Requests are spread over several SDK clients of at most ``_POOL`` connections each:
        the HTTP pool scans every connection it holds for each request, so one pool of hundreds
        of connections spends more CPU choosing a connection than sending on it.
        """
        if not self._sdks:
            from openai import AsyncOpenAI, DefaultAsyncHttpxClient
            from openai._constants import DEFAULT_CONNECTION_LIMITS

            pools = max(1, -(-self.config.concurrency // _POOL))
            size = -(-self.config.concurrency // pools)
            key = _api_key(self.config)
            for _ in range(pools):
                # every connection of a pool stays alive between requests (the SDK keeps 100
                # per client): reopening connections under load is all handshakes
                limits = type(DEFAULT_CONNECTION_LIMITS)(
                    max_connections=size, max_keepalive_connections=size, keepalive_expiry=30.0
                )
                self._sdks.append(
                    AsyncOpenAI(
                        base_url=self.config.base_url,
                        api_key=key,
                        timeout=self.config.timeout_s,
                        max_retries=0,  # retries are ours: they must see 429s and count attempts
                        default_headers=self.config.headers or None,
                        http_client=DefaultAsyncHttpxClient(
                            limits=limits, timeout=self.config.timeout_s, verify=tls_context()
                        ),
                    )
                )
        self._next = (self._next + 1) % len(self._sdks)
        return self._sdks[self._next]

    def cached(self, request: ChatRequest) -> Completion | None:
        """The cached completion for ``request``, or None (no request is ever sent): lets a
        caller answer cache hits without scheduling anything."""
        if self.cache is None:
            return None
        hit = self.cache.get(request.cache_key(self.config.model))
        if hit is None:
            return None
        self.usage.add_cache_hit()
        return Completion.from_cache(hit)

    async def complete(self, request: ChatRequest) -> Completion:
        """The completion for ``request``: from the cache, or from the endpoint.

        Raises:
            JudgeRequestError: the endpoint failed for good (after retries where they apply).
        """
        key = None
        if self.cache is not None:
            key = request.cache_key(self.config.model)
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.add_cache_hit()
                return Completion.from_cache(hit)

        async def attempt(retry: bool) -> Completion:
            return await self._send(request, retry=retry)

        start = time.perf_counter()
        completion, attempts = await with_retries(self.config, self.usage, attempt)
        completion = dataclasses.replace(
            completion, attempts=attempts, latency_ms=(time.perf_counter() - start) * 1000
        )
        if self.cache is not None and key is not None:
            self.cache.put(key, completion.to_cache())
        return completion

    async def _send(self, request: ChatRequest, *, retry: bool) -> Completion:
        import openai

        estimate = request.estimated_tokens()
        await self.limiter.acquire(estimate)
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.config.concurrency)
        params: dict[str, Any] = {
            "model": self.config.model,
            "messages": list(request.messages),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            params["seed"] = request.seed
        if request.logprobs:
            params["logprobs"] = True
            if request.top_logprobs:
                params["top_logprobs"] = request.top_logprobs
        async with self._semaphore:
            self.usage.add_request(retry=retry)
            try:
                # the SDK's own endpoint, auth, timeouts and error types, but the body goes out
                # as built here and comes back as bytes: its per-call type transforms and
                # response models cost more CPU than the rest of a judgment
                raw = await self._client().post("/chat/completions", body=params, cast_to=bytes)
            except openai.APITimeoutError:
                raise JudgeRequestError(
                    "timeout", f"no answer within {self.config.timeout_s:g} s"
                ) from None
            except openai.APIStatusError as exc:
                raise _status_error(exc) from None
            except openai.APIConnectionError as exc:
                raise JudgeRequestError(
                    "connection_error", f"cannot reach {self.config.base_url}: {exc}"
                ) from None
        try:
            response = json.loads(raw)
            choice = response["choices"][0]
            text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            raise JudgeRequestError(
                "bad_response", "the endpoint's answer is not a chat completion"
            ) from None
        usage = response.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        completion_tokens = int(usage.get("completion_tokens") or 0)
        self.usage.add_completion(prompt_tokens, completion_tokens)
        self.limiter.settle(estimate, prompt_tokens + completion_tokens)
        content = (choice.get("logprobs") or {}).get("content")
        tokens = None
        if isinstance(content, list):
            if request.logprobs_tail is not None:
                content = content[-request.logprobs_tail :] if request.logprobs_tail else []
            tokens = tuple(
                TokenLogprob(
                    str(t["token"]),
                    float(t["logprob"]),
                    tuple(
                        (str(a["token"]), float(a["logprob"])) for a in t.get("top_logprobs") or ()
                    ),
                )
                for t in content
            )
        return Completion(
            text=text,
            model=str(response.get("model") or self.config.model),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=choice.get("finish_reason"),
            logprobs=tokens,
        )


def _status_error(exc: Any) -> JudgeRequestError:
    status = int(getattr(exc, "status_code", 0) or 0)
    response = getattr(exc, "response", None)
    retry_after = response.headers.get("retry-after") if response is not None else None
    return status_error(status, f"HTTP {status}: {getattr(exc, 'message', exc)}", retry_after)
