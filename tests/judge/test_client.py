"""The judge client against the simulator: retries, timeouts, rate limits, cache, accounting."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.simulator.fixtures import endpoint
from truegrade.judge import (
    ChatRequest,
    EndpointConfig,
    JudgeCache,
    JudgeClient,
    JudgeRequestError,
    RateLimiter,
)
from truegrade.judge._limits import TokenBucket


def config(sim, tag=None, **behaviour):
    opts = endpoint(sim, tag, **behaviour)
    return EndpointConfig(
        base_url=opts["endpoint"],
        model=opts["model"],
        headers=opts["headers"],
        backoff_initial_s=0.01,
        backoff_max_s=0.05,
    ), opts["headers"]["x-simulator-tag"]


def request(i: int, **kw) -> ChatRequest:
    text = f'Rate from 1 to 10.\n<response>answer number {i}</response>\nEnd with {{"score": n}}'
    return ChatRequest(({"role": "user", "content": text},), **kw)


def run(cfg, requests, **kw):
    async def go():
        async with JudgeClient(cfg, **kw) as client:
            results = await asyncio.gather(
                *(client.complete(r) for r in requests), return_exceptions=True
            )
            return client, results

    return asyncio.run(go())


def test_a_429_storm_is_survived_by_retries(simulator):
    cfg, tag = config(simulator, fail_first=4, fail_status=429)
    client, results = run(cfg, [request(i) for i in range(30)])
    assert all(not isinstance(r, Exception) for r in results), results
    assert {r.attempts for r in results} == {5}
    stats = simulator.stats(tag)
    assert stats["statuses"] == {"200": 30, "429": 120}
    assert client.usage.retries == 120
    assert client.usage.requests == 150


def test_a_storm_longer_than_the_retry_budget_fails_with_its_kind(simulator):
    cfg, tag = config(simulator, fail_first=100, fail_status=429)
    cfg = cfg.model_copy(update={"max_retries": 2})
    client, results = run(cfg, [request(1)])
    (error,) = results
    assert isinstance(error, JudgeRequestError)
    assert (error.kind, error.attempts, error.status) == ("rate_limited", 3, 429)
    assert client.usage.failures == {"rate_limited": 1}
    assert simulator.stats(tag)["requests"] == 3


def test_server_errors_are_retried_and_client_errors_are_not(simulator):
    flaky, _ = config(simulator, error_rate=0.5)
    _, results = run(flaky.model_copy(update={"max_retries": 20}), [request(i) for i in range(20)])
    assert all(not isinstance(r, Exception) for r in results)
    assert any(r.attempts > 1 for r in results)
    bad, tag = config(simulator, fail_first=5, fail_status=400)
    _, results = run(bad, [request(1)])
    assert isinstance(results[0], JudgeRequestError)
    assert results[0].kind == "bad_request"
    assert simulator.stats(tag)["requests"] == 1  # a 400 is not retried


def test_retry_after_is_honoured(simulator):
    cfg, tag = config(simulator, fail_first=1, retry_after_s=0.4)
    _, results = run(cfg, [request(1)])
    assert results[0].attempts == 2
    first, second = simulator.stats(tag)["arrivals"]
    assert second - first >= 0.35


def test_timeouts_are_retried_then_reported(simulator):
    hang, _tag = config(simulator, hang_rate=1.0, hang_s=3.0)
    cfg = hang.model_copy(update={"timeout_s": 0.2, "max_retries": 1})
    _, results = run(cfg, [request(1)])
    assert isinstance(results[0], JudgeRequestError)
    assert (results[0].kind, results[0].attempts) == ("timeout", 2)
    # a judge that hangs now and then: the retries get every answer through
    sometimes, _ = config(simulator, hang_rate=0.3, hang_s=3.0)
    cfg = sometimes.model_copy(update={"timeout_s": 0.3, "max_retries": 8})
    _, results = run(cfg, [request(i) for i in range(12)])
    assert all(not isinstance(r, Exception) for r in results), results


def test_concurrency_is_bounded(simulator):
    cfg, tag = config(simulator, latency_ms=50)
    _, results = run(cfg.model_copy(update={"concurrency": 5}), [request(i) for i in range(40)])
    assert all(not isinstance(r, Exception) for r in results)
    assert 1 < simulator.stats(tag)["max_in_flight"] <= 5


class RecordingLimiter(RateLimiter):
    """The real limiter, keeping the time it cleared each request for."""

    def __init__(self, **limits):
        super().__init__(**limits)
        self.cleared: list[float] = []

    async def acquire(self, tokens: int) -> float:
        cleared = await super().acquire(tokens)
        self.cleared.append(cleared)
        return cleared


def most_in_one_second(times):
    times = sorted(times)
    return max(sum(1 for t in times if s <= t < s + 1) for s in times)


def test_requests_per_minute_are_respected(simulator):
    # 1,200/min is 20/s with one second of burst: 50 requests cannot take less than ~1.5 s
    cfg, tag = config(simulator)
    limiter = RecordingLimiter(requests_per_minute=1200)
    start = time.monotonic()
    _, results = run(cfg, [request(i) for i in range(50)], limiter=limiter)
    assert all(not isinstance(r, Exception) for r in results)
    assert time.monotonic() - start >= (50 - 20) / 20 * 0.95
    assert len(simulator.stats(tag)["arrivals"]) == 50
    # the schedule: no one-second window clears more than the burst plus a second's rate. (The
    # server's arrival times are not the test: on a loaded machine the first connections land
    # late and bunch with the paced ones, which says nothing about the limiter.)
    assert len(limiter.cleared) == 50
    assert most_in_one_second(limiter.cleared) <= 20 + 20 + 1


def test_a_bucket_spreads_a_burst_evenly():
    bucket = TokenBucket(rate_per_s=10)  # holds one second: 10
    t0 = bucket.updated
    waits = [bucket.reserve(1, now=t0) for _ in range(30)]
    assert waits[:10] == [0.0] * 10  # the burst goes at once
    assert waits[10:] == pytest.approx([0.1 * k for k in range(1, 21)])  # then 10/s, in order
    assert most_in_one_second([t0 + w for w in waits]) <= 10 + 10
    bucket.refund(50)  # a refund never lifts the level past one second's worth
    assert bucket.reserve(0, now=t0 + 10) == 0.0 and bucket.level == 10


def test_a_client_under_the_servers_limit_is_never_refused(simulator):
    cfg, tag = config(simulator, max_rpm=1200)
    _unlimited, _ = run(cfg.model_copy(update={"max_retries": 20}), [request(i) for i in range(30)])
    assert simulator.stats(tag)["statuses"].get("429", 0) > 0  # unlimited: the server pushes back
    # the same 30 at 5/s: at most a second's burst plus a second's rate (10) leave in any second,
    # half the server's 20, so even requests a loaded machine delays and bunches are not refused
    polite, tag2 = config(simulator, max_rpm=1200)
    limited = polite.model_copy(update={"requests_per_minute": 300})
    run(limited, [request(i) for i in range(30)])
    assert simulator.stats(tag2)["statuses"] == {"200": 30}


def test_tokens_per_minute_are_respected(simulator):
    cfg, tag = config(simulator)
    # each request is estimated at ~25 prompt tokens + 50 completion tokens = ~75
    cfg = cfg.model_copy(update={"tokens_per_minute": 60 * 750})  # ~10 requests/s
    _, results = run(cfg, [request(i, max_tokens=50) for i in range(25)])
    assert all(not isinstance(r, Exception) for r in results)
    arrivals = sorted(simulator.stats(tag)["arrivals"])
    assert arrivals[-1] - arrivals[0] >= 0.5


def test_the_cache_makes_a_rerun_free(simulator, tmp_path):
    cfg, tag = config(simulator)
    cache = JudgeCache(tmp_path / "judge.sqlite")
    requests = [request(i) for i in range(20)]
    _first_client, first = run(cfg, requests, cache=cache)
    assert simulator.stats(tag)["requests"] == 20
    second_client, second = run(cfg, requests, cache=JudgeCache(tmp_path / "judge.sqlite"))
    assert simulator.stats(tag)["requests"] == 20  # nothing sent
    assert [a.text for a in first] == [b.text for b in second]
    assert all(r.cached and r.attempts == 0 for r in second)
    assert second_client.usage.cache_hits == 20 and second_client.usage.requests == 0
    # anything that decides the answer is part of the key
    run(
        cfg,
        [request(0, seed=1), request(0, temperature=0.5), request(0, template_version="v2")],
        cache=cache,
    )
    assert simulator.stats(tag)["requests"] == 23


def test_failures_are_not_cached(simulator, tmp_path):
    cfg, _tag = config(simulator, fail_first=1, fail_status=500)
    cache = JudgeCache(tmp_path / "c.sqlite")
    _, results = run(cfg.model_copy(update={"max_retries": 0}), [request(1)], cache=cache)
    assert isinstance(results[0], JudgeRequestError)
    assert len(cache) == 0
    _, results = run(cfg, [request(1)], cache=cache)
    assert results[0].text and len(cache) == 1


def test_tokens_and_cost_are_accounted(simulator):
    cfg, tag = config(simulator)
    cfg = cfg.model_copy(update={"price_input_per_mtok": 2.0, "price_output_per_mtok": 8.0})
    client, _ = run(cfg, [request(i) for i in range(10)])
    stats = simulator.stats(tag)
    assert client.usage.prompt_tokens == stats["prompt_tokens"] > 0
    assert client.usage.completion_tokens == stats["completion_tokens"] > 0
    expected = (stats["prompt_tokens"] * 2.0 + stats["completion_tokens"] * 8.0) / 1e6
    assert client.usage.cost_usd == pytest.approx(expected)
    assert client.usage.to_dict()["completions"] == 10


def test_logprobs_come_back_per_token(simulator):
    cfg, _ = config(simulator)
    _, (done,) = run(cfg, [request(1, logprobs=True, top_logprobs=3)])
    assert done.logprobs is not None
    verdict = [t for t in done.logprobs if len(t.top) == 3]
    assert len(verdict) == 1 and verdict[0].token.isdigit()


def test_an_unreachable_endpoint_is_a_connection_error():
    cfg = EndpointConfig(
        base_url="http://127.0.0.1:9/v1", model="x", max_retries=1, backoff_initial_s=0.01
    )
    _, (error,) = run(cfg, [request(1)])
    assert isinstance(error, JudgeRequestError)
    assert error.kind == "connection_error" and error.attempts == 2


def test_a_limiter_is_shared_across_event_loops():
    limiter = RateLimiter(requests_per_minute=6000)

    async def take(n):
        for _ in range(n):
            await limiter.acquire(1)

    asyncio.run(take(110))
    asyncio.run(take(10))  # a new loop: no asyncio object of the old one is reused
    assert limiter.waited_s > 0


def test_a_real_key_is_sent_only_where_it_belongs(monkeypatch):
    from truegrade.judge._client import _api_key

    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    monkeypatch.setenv("LOCAL_KEY", "local-secret")
    local = EndpointConfig(base_url="http://127.0.0.1:8000/v1", model="m")
    assert _api_key(local) == "not-needed"  # never OpenAI's key to another host
    assert _api_key(EndpointConfig(model="m")) == "sk-real"  # api.openai.com by default
    named = EndpointConfig(base_url="http://gpu:8000/v1", model="m", api_key_env="LOCAL_KEY")
    assert _api_key(named) == "local-secret"
    assert "local-secret" not in named.model_dump_json()
