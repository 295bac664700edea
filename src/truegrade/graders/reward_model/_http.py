"""Served reward models: vLLM's pooling and classification endpoints, or a plain JSON one.

vLLM serves a reward model behind ``POST /pooling`` and ``POST /classify``. Both take text as
``input`` (a string, or a list of them in one request) or one conversation as ``messages``
(the server applies the model's chat template), and answer with ``data``: one entry per input,
in ``index`` order. ``/pooling`` gives the pooled output as ``data`` (a list of floats, or one
list per token for token-level reward models, whose last token's is the reward); ``/classify``
gives ``probs``. ``use_activation: false`` asks for raw logits, so scores match a local model.
A ``json`` endpoint is anything that takes ``{"prompt": ..., "response": ...}`` and answers
``{"score": x}`` (or, batched, a list of those and ``{"scores": [...]}``).

Requests go through ``truegrade.judge.JsonClient`` (concurrency, rate limit, retries with
backoff, timeouts), and each sample's score is cached on its own, under a hash of everything
that decides it, so a rerun (batched or not) sends nothing. A failed request fails its own
samples, with a flag, and the batch goes on.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from truegrade.core import Flag, Sample
from truegrade.graders.reward_model._inputs import conversation, plain_text, uses_chat
from truegrade.graders.reward_model._options import RewardModelOptions
from truegrade.graders.reward_model._raw import RawScore, RewardModelFlag
from truegrade.judge import JsonClient, JudgeCache, JudgeRequestError, RateLimiter, Usage

__all__ = ["HttpBackend"]


@dataclass(frozen=True)
class _Item:
    payload: Any  # text, {"messages": [...]}, or {"prompt": ..., "response": ...}
    alone: bool  # must go in a request of its own
    key: str


def _bad(message: str) -> JudgeRequestError:
    return JudgeRequestError("bad_response", message)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(f"{where} is not a number: {str(value)[:80]}")
    return float(value)


class HttpBackend:
    """Scores samples with a served reward model; see the module docstring."""

    def __init__(self, options: RewardModelOptions, *, cache: JudgeCache | None) -> None:
        self.endpoint = options.endpoint()
        self.protocol = options.resolved_protocol
        self.options = options
        self.batch_size = options.batch_size or 1
        self.cache = cache
        self.usage = Usage()
        self.limiter = RateLimiter(requests_per_minute=options.requests_per_minute)

    def __repr__(self) -> str:
        return f"HttpBackend({self.endpoint.url!r}, protocol={self.protocol!r})"

    # -- requests --------------------------------------------------------------------------------

    def _item(self, sample: Sample) -> _Item:
        o = self.options
        alone = False
        payload: Any
        if self.protocol == "json":
            payload = {"prompt": sample.prompt, "response": sample.response}
        elif uses_chat(sample, o.chat_template):
            payload, alone = {"messages": conversation(sample)}, True
        else:
            payload = plain_text(sample, o.separator)
        decided_by = {
            "url": self.endpoint.url,
            "protocol": self.protocol,
            "model": o.model,
            "activation": o.activation,
            "max_length": o.max_length,
            "label_index": o.label_index,
            "item": payload,
        }
        text = json.dumps(decided_by, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return _Item(payload, alone, hashlib.sha256(text.encode("utf-8")).hexdigest())

    def _body(self, items: Sequence[_Item]) -> Any:
        if self.protocol == "json":
            return items[0].payload if self.batch_size == 1 else [i.payload for i in items]
        o = self.options
        body: dict[str, Any] = {} if o.model is None else {"model": o.model}
        if len(items) == 1 and isinstance(items[0].payload, dict):
            body["messages"] = items[0].payload["messages"]
        else:
            texts = [i.payload for i in items]
            body["input"] = texts[0] if len(texts) == 1 else texts
        body["use_activation"] = o.activation
        if o.max_length is not None:
            body["truncate_prompt_tokens"] = o.max_length
        return body

    def _read(self, answer: Any, n: int) -> list[float]:
        """The scores in an answer to a request of ``n`` items (``bad_response`` if it is not
        the shape the protocol promises)."""
        label = self.options.label_index
        if self.protocol == "json":
            if self.batch_size == 1:
                if not isinstance(answer, dict) or "score" not in answer:
                    raise _bad('the answer has no "score"')
                return [_number(answer["score"], '"score"')]
            scores = answer.get("scores") if isinstance(answer, dict) else None
            if not isinstance(scores, list) or len(scores) != n:
                raise _bad(f'the answer has no "scores" list of {n}')
            return [_number(s, '"scores"') for s in scores]
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or len(data) != n:
            raise _bad(f'the answer has no "data" list of {n}')
        field = "probs" if self.protocol == "vllm_classify" else "data"
        out: list[float] = []
        for entry in sorted(data, key=lambda d: d.get("index", 0) if isinstance(d, dict) else 0):
            values = entry.get(field) if isinstance(entry, dict) else None
            if isinstance(values, list) and values and isinstance(values[-1], list):
                values = values[-1]  # one output per token: the reward is the last token's
            if not isinstance(values, list) or len(values) <= label:
                raise _bad(f'"{field}" has no output {label} (label_index)')
            out.append(_number(values[label], f'"{field}"[{label}]'))
        return out

    def _groups(self, todo: list[int], items: Sequence[_Item]) -> list[list[int]]:
        groups = [[i] for i in todo if items[i].alone]
        rest = [i for i in todo if not items[i].alone]
        groups += [rest[k : k + self.batch_size] for k in range(0, len(rest), self.batch_size)]
        return groups

    async def _request(self, client: JsonClient, items: Sequence[_Item]) -> list[float]:
        return self._read(await client.post(self._body(items)), len(items))

    # -- scoring ---------------------------------------------------------------------------------

    async def ascore(self, samples: Sequence[Sample]) -> list[RawScore]:
        """One raw score (or error) per sample, in order."""
        items = [self._item(s) for s in samples]
        results: list[RawScore | None] = [None] * len(items)
        todo: list[int] = []
        for i, item in enumerate(items):
            hit = self.cache.get(item.key) if self.cache is not None else None
            if hit is not None and isinstance(hit.get("score"), (int, float)):
                self.usage.add_cache_hit()
                results[i] = RawScore.of(float(hit["score"]))
            else:
                todo.append(i)
        groups = self._groups(todo, items)
        async with JsonClient(self.endpoint, limiter=self.limiter, usage=self.usage) as client:
            outcomes = await asyncio.gather(
                *(self._request(client, [items[i] for i in g]) for g in groups),
                return_exceptions=True,
            )
        for group, outcome in zip(groups, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                failure = self._failure(outcome)
                for i in group:
                    results[i] = failure
                continue
            for i, value in zip(group, outcome, strict=True):
                raw = results[i] = RawScore.of(value)
                if self.cache is not None and raw.value is not None:
                    self.cache.put(items[i].key, {"score": value})
        return [r if r is not None else RawScore.failed("not scored") for r in results]

    def _failure(self, exc: BaseException) -> RawScore:
        if isinstance(exc, JudgeRequestError):  # its kind is the flag (``timeout``...)
            return RawScore.failed(
                f"reward model at {self.endpoint.url}: {exc} (after {exc.attempts} attempts)",
                RewardModelFlag.REQUEST_FAILED,
                exc.kind,
            )
        if isinstance(exc, Exception):  # a bug, not a server failure: these samples only
            return RawScore.failed(f"{type(exc).__name__}: {exc}", Flag.GRADER_EXCEPTION)
        raise exc
