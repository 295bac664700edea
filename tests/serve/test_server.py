"""The reward server's contract, over real HTTP to a real server process."""

from __future__ import annotations

import concurrent.futures
import signal
import time
from pathlib import Path

import httpx
import pytest

from truegrade.serve import ServerProcess

SLOW = Path(__file__).with_name("slow_grader.py")


@pytest.fixture(scope="module")
def server():
    with ServerProcess("math", workers=2) as running:
        yield running


def test_grade_keeps_order_and_reports_bad_rows_per_item(server):
    rows = [
        {"id": f"r{i}", "response": f"\\boxed{{{i}}}", "reference": str(i % 3)} for i in range(50)
    ]
    rows.insert(7, {"id": "bad", "response": "x", "label": "perhaps"})
    response = httpx.post(server.url + "/grade", json={"samples": rows}, timeout=60)
    assert response.status_code == 200
    grades = response.json()["grades"]
    assert [g["id"] for g in grades] == [r["id"] for r in rows]
    assert grades[7]["error"].startswith("row 7: field 'label'")
    assert [g["passed"] for g in grades if g["id"] != "bad"] == [i % 3 == i for i in range(50)]


def test_openrlhf_get_reward(server):
    body = {
        "query": ["Q: 1+1? A: \\boxed{2}", "Q: 1+1? A: \\boxed{1} or \\boxed{2}", "Q: 1+1? A: two"],
        "prompts": ["Q: 1+1? A:"] * 3,
        "labels": ["2", "2", "2"],
    }
    response = httpx.post(server.url + "/get_reward", json=body, timeout=60)
    assert response.status_code == 200
    data = response.json()
    assert data["rewards"] == [1.0, 0.0, 0.0] == data["scores"]
    assert data["extra_logs"]["hedged"] == [0.0, 1.0, 0.0]


def test_invalid_requests_get_clear_4xx(server):
    missing = httpx.post(server.url + "/grade", json={"rows": []})
    assert missing.status_code == 422 and "samples" in missing.json()["error"]
    mismatched = httpx.post(server.url + "/get_reward", json={"query": ["a", "b"], "labels": ["1"]})
    assert mismatched.status_code == 422
    assert "'labels' has 1 entries for 2 queries" in mismatched.json()["error"]
    not_json = httpx.post(
        server.url + "/grade", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert not_json.status_code == 422
    # curl -d without -H sends a form type: the body is never read as JSON, and the error says so
    form = httpx.post(
        server.url + "/grade",
        content=b'{"samples": []}',
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 422 and "Content-Type: application/json" in form.json()["error"]
    assert "Content-Type" not in missing.json()["error"]


def test_health_and_metrics(server):
    health = httpx.get(server.url + "/health").json()
    assert health["status"] == "ok" and health["grader"] == {"type": "math"}
    metrics = httpx.get(server.url + "/metrics").json()
    assert metrics["items"] >= 3 and metrics["latency_ms"]["p99"] is not None
    assert "hedged" in metrics["flags"]


def test_overload_gets_429_with_retry_after(tmp_path):
    with ServerProcess(f"{SLOW}:slow", workers=2, max_queue=2) as server:

        def post(i: int) -> httpx.Response:
            return httpx.post(
                server.url + "/grade", json={"samples": [{"id": i, "response": "0.8"}]}, timeout=60
            )

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            responses = list(pool.map(post, range(8)))
        codes = sorted(r.status_code for r in responses)
        assert codes.count(200) >= 2 and 429 in codes
        refused = next(r for r in responses if r.status_code == 429)
        assert int(refused.headers["Retry-After"]) >= 1
        assert "at capacity" in refused.json()["error"]
        assert httpx.get(server.url + "/metrics").json()["rejected_requests"] >= 1


def test_graceful_shutdown_finishes_in_flight_work():
    server = ServerProcess(f"{SLOW}:slow", workers=1)
    with server, concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            httpx.post,
            server.url + "/grade",
            json={"samples": [{"id": 1, "response": "1.5"}]},
            timeout=60,
        )
        time.sleep(0.5)  # the request is being graded
        status = server.stop(graceful=True)
        response = pending.result()
    assert response.status_code == 200
    assert response.json()["grades"][0]["score"] == 1.0
    # uvicorn re-raises SIGTERM once it has drained, so the exit is by that signal, not a crash
    assert status in (0, -signal.SIGTERM)


def test_many_concurrent_single_item_requests_each_get_their_own_answer(server):
    import asyncio

    from truegrade.bench._serve import _load, _requests

    _, latencies, wrong, lost = asyncio.run(_load(server.url, _requests(600), 48))
    assert (wrong, lost) == (0, 0)
    assert len(latencies) == 600
