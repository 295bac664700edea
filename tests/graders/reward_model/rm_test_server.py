"""A test server that stands in for a served reward model: vLLM's ``/pooling`` and
``/classify`` shapes, and a plain JSON ``/score`` endpoint.

It is not vLLM and runs no model: a text's score is a fixed function of the text
(``text_score``), and a conversation is rendered by ``render`` (standing in for the server-side
chat template), so a test knows exactly what every request should get back. Per-test
behaviour comes from request headers:

* ``x-test-tag``: requests are recorded and counted under this tag (``/test/stats?tag=``);
* ``x-test-fail-first: N`` and ``x-test-fail-status: S`` (default 500): the first N attempts
  of each distinct body fail with status S (``x-test-retry-after`` is sent with a 429);
* ``x-test-token-level: 1``: ``/pooling`` answers one row per token, the reward in the last;
* ``x-test-malformed: 1``: the answer is JSON of the wrong shape.

Any input containing ``explode`` always fails with a 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import socket
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI, Request  # at module level: the routes' annotations resolve here
from fastapi.responses import JSONResponse

__all__ = ["RewardModelTestServer", "render", "run_test_server", "text_score"]


def text_score(text: str) -> float:
    """A deterministic pseudo-reward in [-3, 3]."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return round(int.from_bytes(digest[:4], "big") / 2**32 * 6 - 3, 6)


def render(messages: list[dict[str, Any]]) -> str:
    """The test server's stand-in for a chat template."""
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages)


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bodies: dict[str, list[Any]] = defaultdict(list)
        self.statuses: dict[str, Counter[int]] = defaultdict(Counter)
        self.attempts: Counter[tuple[str, str]] = Counter()
        self.in_flight: Counter[str] = Counter()
        self.max_in_flight: Counter[str] = Counter()
        self.arrivals: dict[str, list[float]] = defaultdict(list)


def create_app() -> FastAPI:
    app = FastAPI()
    state = _State()

    async def intake(request: Request, inputs: list[str]) -> tuple[str, Any, JSONResponse | None]:
        body = await request.json()
        h = request.headers
        tag = h.get("x-test-tag", "")
        key = json.dumps(body, sort_keys=True)
        with state.lock:
            state.bodies[tag].append(body)
            state.attempts[(tag, key)] += 1
            attempt = state.attempts[(tag, key)]
        failure = None
        if any("explode" in text for text in inputs):
            failure = JSONResponse({"error": "the model exploded"}, status_code=500)
        elif attempt <= int(h.get("x-test-fail-first", "0")):
            status = int(h.get("x-test-fail-status", "500"))
            headers = {}
            if status == 429 and "x-test-retry-after" in h:
                headers["retry-after"] = h["x-test-retry-after"]
            failure = JSONResponse({"error": "try again"}, status_code=status, headers=headers)
        with state.lock:
            state.statuses[tag][failure.status_code if failure else 200] += 1
        return tag, body, failure

    async def vllm_intake(request: Request) -> tuple[dict[str, Any], list[str], bool, Any]:
        """The body, its texts, whether to apply the activation, and a failure to answer."""
        body = await request.json()
        if "messages" in body:
            texts = [render(body["messages"])]
        else:
            given = body["input"]
            texts = [given] if isinstance(given, str) else list(given)
        _, _, failure = await intake(request, texts)
        return body, texts, body.get("use_activation") is not False, failure

    def envelope(body: dict[str, Any], data: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
        return {
            "id": f"{prefix}-test",
            "object": "list",
            "created": int(time.time()),
            "model": body.get("model", "test-rm"),
            "data": data,
            "usage": {"prompt_tokens": 0, "total_tokens": 0, "completion_tokens": 0},
        }

    @app.post("/pooling")
    async def pooling(request: Request) -> Any:
        body, texts, activate, failure = await vllm_intake(request)
        if failure is not None:
            return failure
        if request.headers.get("x-test-malformed"):
            return {"data": "nope"}
        data = []
        for i, text in enumerate(reversed(texts)):  # out of order: the client sorts by index
            index = len(texts) - 1 - i
            score = text_score(text)
            score = _sigmoid(score) if activate else score
            value: Any = [score]
            if request.headers.get("x-test-token-level"):
                value = [[0.0] for _ in text.split()[:-1]] + [[score]]
            data.append({"index": index, "object": "pooling", "data": value})
        return envelope(body, data, "pool")

    @app.post("/classify")
    async def classify(request: Request) -> Any:
        body, texts, activate, failure = await vllm_intake(request)
        if failure is not None:
            return failure
        data = []
        for index, text in enumerate(texts):
            logits = [text_score(text), -text_score(text)]
            if activate:
                total = sum(math.exp(v) for v in logits)
                logits = [math.exp(v) / total for v in logits]
            data.append({"index": index, "label": "good", "probs": logits, "num_classes": 2})
        return envelope(body, data, "classify")

    @app.post("/score")
    async def score(request: Request) -> Any:
        body = await request.json()
        items = body if isinstance(body, list) else [body]
        texts = [json.dumps([item["prompt"], item["response"]]) for item in items]
        tag, body, failure = await intake(request, texts)
        if failure is not None:
            return failure
        latency = float(request.headers.get("x-test-latency-ms", "0")) / 1000
        if latency:  # a slow model: how many requests overlap is what the client controls
            with state.lock:
                state.arrivals[tag].append(time.monotonic())
                state.in_flight[tag] += 1
                state.max_in_flight[tag] = max(state.max_in_flight[tag], state.in_flight[tag])
            await asyncio.sleep(latency)
            with state.lock:
                state.in_flight[tag] -= 1
        if request.headers.get("x-test-malformed"):
            return {"value": 1}
        values = [text_score(t) for t in texts]
        return {"scores": values} if isinstance(body, list) else {"score": values[0]}

    @app.get("/test/stats")
    async def stats(tag: str = "") -> Any:
        with state.lock:
            return {
                "requests": len(state.bodies[tag]),
                "statuses": {str(k): v for k, v in state.statuses[tag].items()},
                "bodies": state.bodies[tag],
                "max_in_flight": state.max_in_flight[tag],
                "arrivals": state.arrivals[tag],
            }

    return app


class RewardModelTestServer:
    """A running test server; ``url(path)`` gives an endpoint, ``stats(tag)`` what it saw."""

    def __init__(self, root: str) -> None:
        self.root = root

    def url(self, path: str) -> str:
        return self.root + path

    def stats(self, tag: str) -> dict[str, Any]:
        import httpx

        result: dict[str, Any] = httpx.get(f"{self.root}/test/stats", params={"tag": tag}).json()
        return result


@contextlib.contextmanager
def run_test_server() -> Iterator[RewardModelTestServer]:
    """Serve the test app on a free local port, in a thread, for the ``with`` block."""
    import httpx
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(), log_level="warning", access_log=False, lifespan="off")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    handle = RewardModelTestServer(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(handle.url("/test/stats"))
            break
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise RuntimeError("the reward model test server did not start") from None
            time.sleep(0.02)
    try:
        yield handle
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
