"""What goes to a judge and what comes back, as plain frozen records.

A ``ChatRequest`` carries everything that decides the answer (messages, sampling parameters,
seed, the template version); its ``cache_key`` is a hash of exactly that, so two requests share a
cached answer only when the endpoint would have been asked the same thing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, overload

__all__ = ["ChatRequest", "CompactLogprobs", "Completion", "TokenLogprob"]


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to ask for.

    Attributes:
        messages: OpenAI-style messages (``role``, ``content``).
        temperature: Sampling temperature (0 for judges: the verdict should not be a dice roll).
        max_tokens: Completion budget.
        seed: Sampling seed, for endpoints that honour one (part of the cache key either way).
        logprobs: Ask for token log-probabilities.
        top_logprobs: Alternatives per token, with ``logprobs``.
        logprobs_tail: Keep (and cache) the log-probabilities of the last N tokens only (None:
            all). Most uses read the end of an answer; a full set is hundreds of tokens with
            their alternatives, and decoding it dominates the cost of a cached answer.
        template_version: Which prompt template built the messages (part of the cache key, so
            a template change never reuses verdicts given to the old one).
    """

    messages: tuple[dict[str, str], ...]
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = 0
    logprobs: bool = False
    top_logprobs: int | None = None
    logprobs_tail: int | None = None
    template_version: str = ""

    def cache_key(self, model: str) -> str:
        """Content address of this request to ``model``: SHA-256 of the canonical JSON of the
        model, template version, messages, sampling parameters and seed."""
        payload = {
            "model": model,
            "template_version": self.template_version,
            "messages": list(self.messages),
            "params": {
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "logprobs": self.logprobs,
                "top_logprobs": self.top_logprobs,
                "logprobs_tail": self.logprobs_tail,
            },
            "seed": self.seed,
        }
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def estimated_tokens(self) -> int:
        """A pessimistic token count for rate limiting before the endpoint says the real one:
        a token per 4 characters of prompt, plus the whole completion budget."""
        chars = sum(len(str(m.get("content", ""))) for m in self.messages)
        return chars // 4 + 1 + self.max_tokens


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability and the top alternatives at that position."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


class CompactLogprobs(Sequence[TokenLogprob]):
    """Cached log-probabilities, decoded token by token as they are read (a reader of the
    answer's last line touches a handful of them)."""

    def __init__(self, rows: list[list[Any]]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> TokenLogprob: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[TokenLogprob]: ...

    def __getitem__(self, index: int | slice) -> TokenLogprob | Sequence[TokenLogprob]:
        if isinstance(index, slice):
            return [self._decode(row) for row in self._rows[index]]
        return self._decode(self._rows[index])

    def token_text(self, index: int) -> str:
        """The token at ``index``, without decoding its alternatives."""
        return str(self._rows[index][0])

    @staticmethod
    def _decode(row: list[Any]) -> TokenLogprob:
        token, logprob, top = row
        pairs = tuple((str(top[i]), float(top[i + 1])) for i in range(0, len(top), 2))
        return TokenLogprob(str(token), float(logprob), pairs)


@dataclass(frozen=True)
class Completion:
    """A judge's answer.

    Attributes:
        text: The generated text.
        model: The model that answered (as the endpoint reports it).
        prompt_tokens / completion_tokens: Usage as reported (0 when the endpoint gave none).
        finish_reason: ``stop``, ``length``...
        logprobs: Per-token log-probabilities, when asked for and returned.
        cached: True when this came from the cache (no request was made).
        attempts: Requests sent (retries included); 0 for a cached answer.
        latency_ms: Wall time to get it.
    """

    text: str
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    logprobs: Sequence[TokenLogprob] | None = None
    cached: bool = False
    attempts: int = 1
    latency_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_cache(self) -> dict[str, Any]:
        """What the cache stores (no timing, no attempt count: those belong to one run).
        Log-probabilities are stored as compact lists: ``[token, logprob, [alt, lp, ...]]``."""
        logprobs = None
        if self.logprobs is not None:
            logprobs = [
                [t.token, t.logprob, [x for pair in t.top for x in pair]] for t in self.logprobs
            ]
        return {
            "text": self.text,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
            "logprobs": logprobs,
        }

    @classmethod
    def from_cache(cls, data: dict[str, Any]) -> Completion:
        """Rebuild a cached completion (marked ``cached``, zero attempts)."""
        logprobs = data.get("logprobs")
        tokens = None if logprobs is None else CompactLogprobs(logprobs)
        return cls(
            text=str(data.get("text", "")),
            model=str(data.get("model", "")),
            prompt_tokens=int(data.get("prompt_tokens", 0)),
            completion_tokens=int(data.get("completion_tokens", 0)),
            finish_reason=data.get("finish_reason"),
            logprobs=tokens,
            cached=True,
            attempts=0,
        )
