"""The simulator's HTTP face: an OpenAI-compatible ``/v1/chat/completions`` endpoint.

It serves the scripted judge of ``_judge`` with the serving behaviours of the config (latency,
500s, 429s with or without ``Retry-After``, 429 storms, hangs, a server-side rate limit), and
keeps statistics a test can read back: requests per tag (the ``x-simulator-tag`` header), their
arrival times, statuses, tokens, obeyed injections, and the prompts themselves when the config
says ``record_prompts``. Routes:

* ``POST /v1/chat/completions``: a chat completion (``logprobs`` / ``top_logprobs`` honoured);
* ``GET /v1/models``: the one model, ``truegrade-simulator``;
* ``GET /simulator/stats?tag=T``: the statistics of one tag (all tags when omitted);
* ``POST /simulator/reset``: forget statistics and attempt counters;
* ``GET /simulator/health``: liveness.

A simulator, not a model: nothing here is a judgment of quality.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import time
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError

from truegrade.core import message_text
from truegrade.simulator._config import SimulatorConfig
from truegrade.simulator._judge import judge_reply, tokens_of

__all__ = ["create_app"]


@dataclass
class _TagStats:
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    arrivals: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    obeyed: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    prompts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "arrivals": list(self.arrivals),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "obeyed": self.obeyed,
            "max_in_flight": self.max_in_flight,
            "prompts": list(self.prompts),
        }


class _State:
    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self.tags: defaultdict[str, _TagStats] = defaultdict(_TagStats)
        self.attempts: Counter[str] = Counter()
        self.recent: defaultdict[str, deque[float]] = defaultdict(deque)
        self.counter = 0

    def over_limit(self, config: SimulatorConfig, tag: str, now: float) -> bool:
        """The server-side limit (per tag): at most a second's worth of ``max_rpm`` in any
        second; refused requests do not count."""
        if config.max_rpm is None:
            return False
        recent = self.recent[tag]
        while recent and now - recent[0] > 1.0:
            recent.popleft()
        if len(recent) >= max(1.0, config.max_rpm / 60):
            return True
        recent.append(now)
        return False


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    kind = {429: "rate_limit_exceeded", 400: "invalid_request_error"}.get(status, "server_error")
    return JSONResponse(
        {"error": {"message": message, "type": kind, "code": status}},
        status_code=status,
        headers=headers,
    )


def _logprobs(text: str, verdict: str, distribution: dict[str, float], top: int) -> dict[str, Any]:
    tokens = tokens_of(text)
    targets = {verdict, "C" if verdict == "tie" else verdict}
    at = max((i for i, t in enumerate(tokens) if t in targets), default=-1)
    content = []
    for i, token in enumerate(tokens):
        if i == at:
            ranked = sorted(distribution.items(), key=lambda kv: -kv[1])[: max(top, 1)]
            chosen = math.log(max(distribution.get(verdict, 1e-9), 1e-9))
            alternatives = [
                {"token": k, "logprob": math.log(max(v, 1e-12)), "bytes": None} for k, v in ranked
            ]
            content.append(
                {"token": token, "logprob": chosen, "bytes": None, "top_logprobs": alternatives}
            )
        else:
            content.append(
                {
                    "token": token,
                    "logprob": 0.0,
                    "bytes": None,
                    "top_logprobs": [{"token": token, "logprob": 0.0, "bytes": None}][:top],
                }
            )
    return {"content": content, "refusal": None}


def create_app(config: SimulatorConfig | None = None) -> FastAPI:
    """The simulator as an ASGI app (serve it with uvicorn, or use ``run_simulator``)."""
    state = _State(config or SimulatorConfig())
    app = FastAPI(
        title="truegrade judge simulator", docs_url=None, redoc_url=None, openapi_url=None
    )

    @app.get("/simulator/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "truegrade-simulator", "object": "model"}]}

    @app.get("/simulator/stats")
    async def stats(tag: str | None = None) -> dict[str, Any]:
        if tag is not None:
            return state.tags[tag].to_dict() if tag in state.tags else _TagStats().to_dict()
        return {name: s.to_dict() for name, s in state.tags.items()}

    @app.post("/simulator/reset")
    async def reset() -> dict[str, str]:
        state.tags.clear()
        state.attempts.clear()
        state.recent.clear()
        return {"status": "reset"}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        now = time.monotonic()
        tag = request.headers.get("x-simulator-tag", "")
        stats = state.tags[tag]
        stats.requests += 1
        stats.arrivals.append(now)
        try:
            cfg = state.config.merged(request.headers.get("x-simulator-config"))
            body = await request.json()
        except (ValueError, ValidationError) as exc:
            stats.statuses[400] += 1
            return _error(400, f"bad request: {exc}")
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not messages:
            stats.statuses[400] += 1
            return _error(400, "'messages' must be a non-empty list")
        model = str(body.get("model", "truegrade-simulator"))
        prompt = "\n\n".join(
            message_text(m.get("content")) for m in messages if isinstance(m, dict)
        )
        if cfg.record_prompts:
            stats.prompts.append(prompt)
        # attempts are counted per tag, so scenarios sharing a server do not share counters
        key = hashlib.sha256(f"{tag}\0{model}\0{prompt}".encode()).hexdigest()
        state.attempts[key] += 1
        attempt = state.attempts[key]
        rng = random.Random(f"{cfg.seed}:{key}:{attempt}")
        headers = (
            {"retry-after": f"{cfg.retry_after_s:g}"} if cfg.retry_after_s is not None else None
        )
        if state.over_limit(cfg, tag, now):
            stats.statuses[429] += 1
            return _error(429, "simulated server-side rate limit", headers)
        if attempt <= cfg.fail_first:
            stats.statuses[cfg.fail_status] += 1
            return _error(
                cfg.fail_status, f"simulated failure {attempt} of {cfg.fail_first}", headers
            )
        if rng.random() < cfg.rate_limit_rate:
            stats.statuses[429] += 1
            return _error(429, "simulated rate limit", headers)
        if rng.random() < cfg.error_rate:
            stats.statuses[500] += 1
            return _error(500, "simulated server error")
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            delay = cfg.latency_ms + cfg.latency_jitter_ms * (2 * rng.random() - 1)
            if rng.random() < cfg.hang_rate:
                delay = cfg.hang_s * 1000
            if delay > 0:
                await asyncio.sleep(delay / 1000)
        finally:
            stats.in_flight -= 1
        reply = judge_reply(prompt, cfg, salt=model)
        stats.obeyed += int(reply.obeyed)
        prompt_tokens = sum(len(tokens_of(message_text(m.get("content")))) for m in messages)
        completion_tokens = len(tokens_of(reply.text))
        stats.prompt_tokens += prompt_tokens
        stats.completion_tokens += completion_tokens
        stats.statuses[200] += 1
        state.counter += 1
        top = body.get("top_logprobs") or 1
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": reply.text},
            "finish_reason": "stop",
            "logprobs": _logprobs(reply.text, reply.verdict, reply.distribution, int(top))
            if body.get("logprobs")
            else None,
        }
        payload = {
            "id": f"chatcmpl-sim-{state.counter}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            "system_fingerprint": "truegrade-simulator",
        }
        return Response(json.dumps(payload), media_type="application/json")

    return app
