"""Talking to LLM judges and scoring endpoints: async clients that push servers carefully.

``JudgeClient`` sends chat completions to any OpenAI-compatible endpoint with bounded
concurrency, rate-limit buckets, retries with backoff, timeouts, token and cost accounting
(``Usage``) and a content-addressed SQLite cache (``JudgeCache``). ``JsonClient`` gives the same
limits, retries and accounting to a plain JSON ``POST`` (served reward models); both take their
limits from a ``TransportConfig``. These are mechanisms only: they know nothing about graders,
prompts or verdicts (those live in ``truegrade.graders``), and importing them does not import
the SDK.
"""

from truegrade.judge._cache import JudgeCache, open_cache
from truegrade.judge._client import EndpointConfig, JudgeClient
from truegrade.judge._errors import JudgeRequestError, RequestErrorKind
from truegrade.judge._json import JsonClient, JsonEndpointConfig
from truegrade.judge._limits import RateLimiter
from truegrade.judge._transport import TransportConfig
from truegrade.judge._types import ChatRequest, Completion, TokenLogprob
from truegrade.judge._usage import Usage

__all__ = [
    "ChatRequest",
    "Completion",
    "EndpointConfig",
    "JsonClient",
    "JsonEndpointConfig",
    "JudgeCache",
    "JudgeClient",
    "JudgeRequestError",
    "RateLimiter",
    "RequestErrorKind",
    "TokenLogprob",
    "TransportConfig",
    "Usage",
    "open_cache",
]
