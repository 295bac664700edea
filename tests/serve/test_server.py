"""The reward server's contract, over real HTTP to a real server process."""

from __future__ import annotations

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
    assert grades[7]["score"] is None  # an error is never shown as a 0
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
    body = {"query": ["A: \\boxed{2}", "A: \\boxed{1} or \\boxed{2}"], "labels": ["2", "2"]}
    assert httpx.post(server.url + "/get_reward", json=body, timeout=60).status_code == 200
    metrics = httpx.get(server.url + "/metrics?format=json").json()
    assert metrics["items"] >= 2 and metrics["request_seconds"]["p99"] is not None
    assert metrics["queue_wait_seconds"]["count"] >= 1
    assert "hedged" in metrics["flags"]
    # refusals, bad bodies and unknown paths are requests answered too, by route
    assert httpx.post(server.url + "/grade", json={"rows": []}).status_code == 422
    assert httpx.get(server.url + "/no/such/path/12345").status_code == 404
    text = httpx.get(server.url + "/metrics").text
    # the module's other tests share this server: their bad requests count too
    assert 'truegrade_requests_total{endpoint="/grade",status="422"}' in text
    assert 'truegrade_requests_total{endpoint="other",status="404"}' in text
    assert "/no/such/path" not in text  # a scan of paths cannot grow the metric


def test_many_concurrent_single_item_requests_each_get_their_own_answer(server):
    import asyncio

    from truegrade.bench._serve import _load, _requests

    _, latencies, wrong, lost = asyncio.run(_load(server.url, _requests(600), 48))
    assert (wrong, lost) == (0, 0)
    assert len(latencies) == 600
