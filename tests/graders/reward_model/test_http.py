"""Served reward models against a real local server: vLLM's request and answer shapes, a plain
JSON endpoint, retries on 500 and 429, per-sample failures and the cache."""

from __future__ import annotations

import itertools
import json
import time

import pytest

from tests.graders.reward_model.rm_test_server import render, text_score
from truegrade.core import Sample, load_grader
from truegrade.graders.reward_model import RewardModelFlag
from truegrade.graders.reward_model._scale import sigmoid

_tags = itertools.count()

ROWS = [
    Sample(id=0, prompt="two plus two", response="four"),
    Sample(id=1, prompt="capital of france", response="paris"),
    Sample(id=2, prompt="hello", response="world"),
    Sample(id=3, prompt=None, response="a response without a prompt"),
]
CHAT = Sample(
    id="chat",
    prompt=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
    response="hello",
)


def served(server, path: str, tmp_path=None, **options):
    """A grader for ``server`` under a fresh tag (no cache unless a directory is given)."""
    tag = f"t{next(_tags)}"
    headers = {"x-test-tag": tag, **options.pop("headers", {})}
    spec = {
        "type": "reward_model",
        "url": server.url(path),
        "headers": headers,
        "cache": None if tmp_path is None else str(tmp_path / "rm.sqlite"),
        "backoff_initial_s": 0.01,
        "backoff_max_s": 0.05,
        **options,
    }
    return load_grader(spec), tag


def plain(sample: Sample) -> str:
    return f"{sample.prompt}\n\n{sample.response}" if sample.prompt else str(sample.response)


def test_vllm_pooling_text_and_conversations(rm_server):
    grader, tag = served(rm_server, "/pooling", model="my-rm", batch_size=3)
    grades = grader.grade_batch([*ROWS, CHAT])
    assert [g.error for g in grades] == [None] * 5
    expected = [text_score(plain(s)) for s in ROWS]
    expected.append(text_score(render([*CHAT.prompt, {"role": "assistant", "content": "hello"}])))
    assert [g.score for g in grades] == pytest.approx(expected)
    bodies = rm_server.stats(tag)["bodies"]
    # four texts in batches of three; the conversation alone, for the server's chat template
    inputs = [b["input"] for b in bodies if "input" in b]
    assert sorted(map(json.dumps, inputs)) == sorted(
        map(json.dumps, [[plain(s) for s in ROWS[:3]], plain(ROWS[3])])
    )
    (conversation,) = [b for b in bodies if "messages" in b]
    assert conversation["messages"][-1] == {"role": "assistant", "content": "hello"}
    assert all(b["model"] == "my-rm" and b["use_activation"] is False for b in bodies)


def test_token_level_pooling_reads_the_last_token_and_max_length_is_sent(rm_server):
    grader, tag = served(rm_server, "/pooling", headers={"x-test-token-level": "1"}, max_length=512)
    grades = grader.grade_batch(ROWS)
    assert [g.score for g in grades] == pytest.approx([text_score(plain(s)) for s in ROWS])
    assert {b["truncate_prompt_tokens"] for b in rm_server.stats(tag)["bodies"]} == {512}


def test_activation_is_the_servers_when_asked(rm_server):
    grader, _ = served(rm_server, "/pooling", activation=True)
    grades = grader.grade_batch(ROWS[:2])
    assert [g.score for g in grades] == pytest.approx(
        [sigmoid(text_score(plain(s))) for s in ROWS[:2]]
    )


def test_vllm_classify_and_label_index(rm_server):
    first, _ = served(rm_server, "/classify")
    second, _ = served(rm_server, "/classify", label_index=1)
    assert [g.score for g in first.grade_batch(ROWS)] == pytest.approx(
        [text_score(plain(s)) for s in ROWS]
    )
    assert [g.score for g in second.grade_batch(ROWS)] == pytest.approx(
        [-text_score(plain(s)) for s in ROWS]
    )


def test_a_plain_json_endpoint_one_at_a_time_or_batched(rm_server):
    expected = [text_score(json.dumps([s.prompt, s.response])) for s in [*ROWS, CHAT]]
    single, tag = served(rm_server, "/score")
    assert [g.score for g in single.grade_batch([*ROWS, CHAT])] == pytest.approx(expected)
    assert all(isinstance(b, dict) for b in rm_server.stats(tag)["bodies"])
    batched, tag = served(rm_server, "/score", batch_size=2)
    assert [g.score for g in batched.grade_batch([*ROWS, CHAT])] == pytest.approx(expected)
    assert sorted(len(b) for b in rm_server.stats(tag)["bodies"]) == [1, 2, 2]


def test_concurrency_and_the_request_rate_are_bounded_as_for_a_judge(rm_server):
    rows = [Sample(id=i, prompt="q", response=f"answer {i}") for i in range(24)]
    slow = {"x-test-latency-ms": "50"}
    bounded, tag = served(rm_server, "/score", headers=slow, concurrency=3)
    assert all(g.error is None for g in bounded.grade_batch(rows))
    assert 1 < rm_server.stats(tag)["max_in_flight"] <= 3
    # 600 a minute is 10 a second with one second of burst: 24 requests span >= 1.4 s
    # (timed from the client: a lower bound the limiter guarantees however loaded the machine)
    paced, tag = served(rm_server, "/score", headers=slow, concurrency=24, requests_per_minute=600)
    started = time.monotonic()
    assert all(g.error is None for g in paced.grade_batch(rows))
    assert time.monotonic() - started >= (24 - 10) / 10 * 0.95
    assert len(rm_server.stats(tag)["arrivals"]) == 24


@pytest.mark.parametrize(
    ("status", "extra"), [("500", {}), ("429", {"x-test-retry-after": "0.05"})]
)
def test_server_errors_and_rate_limits_are_retried(rm_server, status, extra):
    headers = {"x-test-fail-first": "2", "x-test-fail-status": status, **extra}
    grader, tag = served(rm_server, "/pooling", headers=headers)
    grades = grader.grade_batch(ROWS)
    assert [g.error for g in grades] == [None] * 4
    stats = rm_server.stats(tag)
    assert stats["statuses"] == {status: 8, "200": 4}
    assert grader.usage_report()["retries"] == 8


def test_a_failed_request_fails_its_samples_and_the_batch_goes_on(rm_server):
    rows = [*ROWS[:2], Sample(id="boom", prompt="hello", response="explode"), ROWS[2]]
    grader, tag = served(rm_server, "/pooling", max_retries=2)
    grades = grader.grade_batch(rows)
    assert [g.error is None for g in grades] == [True, True, False, True]
    boom = grades[2]
    assert RewardModelFlag.REQUEST_FAILED in boom.flags and "server_error" in boom.flags
    assert "after 3 attempts" in (boom.error or "")
    assert boom.score == 0.0 and boom.passed is None
    refused, tag = served(
        rm_server, "/pooling", headers={"x-test-fail-first": "9", "x-test-fail-status": "400"}
    )
    (bad,) = refused.grade_batch(ROWS[:1])
    assert "bad_request" in bad.flags and rm_server.stats(tag)["requests"] == 1  # no retry


def test_a_malformed_answer_and_an_unreachable_server_are_errors_with_their_kind(rm_server):
    grader, _ = served(rm_server, "/score", headers={"x-test-malformed": "1"})
    (g,) = grader.grade_batch(ROWS[:1])
    assert "bad_response" in g.flags and 'no "score"' in (g.error or "")
    unreachable = load_grader(
        {
            "type": "reward_model",
            "url": "http://127.0.0.1:9/score",
            "cache": None,
            "max_retries": 1,
            "backoff_initial_s": 0.01,
        }
    )
    (down,) = unreachable.grade_batch(ROWS[:1])
    assert "connection_error" in down.flags


def test_a_rerun_is_served_from_the_cache(rm_server, tmp_path):
    grader, tag = served(rm_server, "/pooling", tmp_path, batch_size=2)
    first = grader.grade_batch([*ROWS, CHAT])
    sent = rm_server.stats(tag)["requests"]
    again, again_tag = served(rm_server, "/pooling", tmp_path)  # batching is not in the key
    second = again.grade_batch([*ROWS, CHAT])
    assert [g.score for g in second] == [g.score for g in first]
    assert rm_server.stats(again_tag)["requests"] == 0
    assert again.usage_report()["cache_hits"] == 5
    assert sent == 3
    # what decides a score is in the key: another model is asked
    other, other_tag = served(rm_server, "/pooling", tmp_path, model="m2")
    other.grade_batch(ROWS[:1])
    assert rm_server.stats(other_tag)["requests"] == 1


def test_an_async_caller_is_not_blocked(rm_server):
    import asyncio

    grader, _ = served(rm_server, "/pooling")

    async def both():
        return await asyncio.gather(grader.agrade_batch(ROWS[:2]), grader.agrade_batch(ROWS[2:]))

    first, second = asyncio.run(both())
    assert [g.score for g in first + second] == pytest.approx([text_score(plain(s)) for s in ROWS])
