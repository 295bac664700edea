"""Talking to LLM judges: an async client for any OpenAI-compatible endpoint.

``JudgeClient`` sends chat completions with bounded concurrency, rate-limit buckets, retries
with backoff, timeouts, token and cost accounting (``Usage``) and a content-addressed SQLite
cache (``JudgeCache``). It is a mechanism only: it knows nothing about graders, prompts or
verdicts (those live in ``truegrade.graders.judge``), and importing it does not import the SDK.
"""

from truegrade.judge._cache import JudgeCache, default_cache_path
from truegrade.judge._client import EndpointConfig, JudgeClient
from truegrade.judge._errors import JudgeRequestError, RequestErrorKind
from truegrade.judge._limits import RateLimiter, TokenBucket
from truegrade.judge._types import ChatRequest, CompactLogprobs, Completion, TokenLogprob
from truegrade.judge._usage import Usage

__all__ = [
    "ChatRequest",
    "CompactLogprobs",
    "Completion",
    "EndpointConfig",
    "JudgeCache",
    "JudgeClient",
    "JudgeRequestError",
    "RateLimiter",
    "RequestErrorKind",
    "TokenBucket",
    "TokenLogprob",
    "Usage",
    "default_cache_path",
]
