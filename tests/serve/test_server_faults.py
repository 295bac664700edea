"""The reward server under the faults of RL-scale use, over real HTTP to real server processes:
a hanging item beside fast ones, a flood past capacity, oversized bodies, stalled and abandoned
clients, request deadlines, and SIGTERM under load.

No test asserts a duration. Where behaviour is about order ("the fast requests are answered
while the slow one is still running"), the slow item runs for seconds and the check is on which
finished first; where it is about a bound ("the freed worker answers the next request"), the
client's own timeout is far below what the unfixed behaviour would take.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import select
import signal
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from truegrade.serve import ServerProcess

SLOW = Path(__file__).with_name("slow_grader.py")

pytestmark = pytest.mark.slow


def grade(server: ServerProcess, seconds: str, *, timeout: float = 120) -> httpx.Response:
    """One request whose one item sleeps ``seconds`` in the grader."""
    return httpx.post(
        server.url + "/grade", json={"samples": [{"id": 0, "response": seconds}]}, timeout=timeout
    )


def metrics(server: ServerProcess) -> dict:
    return httpx.get(server.url + "/metrics?format=json", timeout=30).json()


def raw_request(body: bytes, path: str = "/grade") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def read_status(sock: socket.socket, timeout: float = 60) -> int | None:
    """Read the next whole response on ``sock``: its status, or None if the server closed or
    reset the connection instead."""
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += sock.recv(65536)
    except (ConnectionResetError, BrokenPipeError):
        return None
    return int(head.split(b" ", 2)[1])


def test_a_hanging_item_delays_only_its_own_request():
    with ServerProcess(f"{SLOW}:slow", workers=2) as server:
        for _ in range(5):
            assert grade(server, "0").status_code == 200
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            hanging = pool.submit(grade, server, "5")
            time.sleep(0.5)  # the hanging item is running
            beside = list(pool.map(lambda _: grade(server, "0", timeout=60), range(40)))
            # all forty were answered while the hanging one still ran
            assert not hanging.done()
            assert [r.status_code for r in beside] == [200] * 40
            assert all(r.json()["grades"][0]["score"] == 1.0 for r in beside)
            assert hanging.result().json()["grades"][0]["score"] == 1.0


@pytest.mark.system_tool("g++", package="g++")
def test_valid_programs_are_not_held_behind_hostile_ones():
    endless = "```python\nwhile True:\n    pass\n```"
    right = "```python\nprint(sum(map(int, input().split())))\n```"
    spec = {"stdio": [{"stdin": "1 2\n", "stdout": "3\n"}], "time_limit_s": 6}

    def post(response: str, timeout: float) -> httpx.Response:
        row = {"id": 0, "response": response, "reference": spec}
        return httpx.post(server.url + "/grade", json={"samples": [row]}, timeout=timeout)

    with ServerProcess("code", workers=2) as server:
        assert post(right, 120).json()["grades"][0]["score"] == 1.0  # warm
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            hostile = pool.submit(post, endless, 120)
            time.sleep(1.0)  # the hostile program is running
            valid = [post(right, 60) for _ in range(4)]
            assert not hostile.done()
            assert [r.json()["grades"][0]["score"] for r in valid] == [1.0] * 4
            assert "timeout" in hostile.result().json()["grades"][0]["flags"]


def test_a_flood_past_capacity_gets_429_with_a_retry_after_from_the_drain_rate():
    args = ["--max-wait-s", "1", "--max-requests", "24"]
    with ServerProcess(f"{SLOW}:slow", workers=2, extra_args=args) as server:
        for _ in range(4):  # a measured drain rate: about 2 workers / 0.2 s = 10 items/s
            assert grade(server, "0.2").status_code == 200
        with concurrent.futures.ThreadPoolExecutor(48) as pool:
            responses = list(pool.map(lambda _: grade(server, "0.2"), range(96)))
        codes = [r.status_code for r in responses]
        assert set(codes) == {200, 429}
        assert codes.count(200) >= 4
        for r in responses:
            if r.status_code == 200:
                assert r.json()["grades"][0]["score"] == 1.0
            else:
                assert "at capacity" in r.json()["error"]
                assert 1 <= int(r.headers["Retry-After"]) <= 60
        seen = metrics(server)
        assert seen["rejected_requests"] == codes.count(429)
        assert set(seen["rejected_by_reason"]) <= {"wait", "requests"}
        assert seen["requests_in_flight"] == 0 and seen["items_in_flight"] == 0


def test_admission_counts_requests_and_bytes_and_refuses_oversized_bodies():
    args = ["--max-requests", "2", "--max-body-mb", "0.5", "--max-pending-mb", "0.6"]
    with ServerProcess(f"{SLOW}:slow", workers=1, extra_args=args) as server:
        big = {"samples": [{"id": 0, "response": "0", "pad": "x" * 700_000}]}
        too_big = httpx.post(server.url + "/grade", json=big, timeout=60)
        assert too_big.status_code == 413 and "request body too large" in too_big.json()["error"]
        # a chunked body, with no length declared, is cut off as soon as it passes the limit
        chunks = (json.dumps(big).encode()[i : i + 65536] for i in range(0, 800_000, 65536))
        streamed = httpx.post(
            server.url + "/grade",
            content=chunks,
            headers={"content-type": "application/json"},
            timeout=60,
        )
        assert streamed.status_code == 413
        # two 350 KB requests do not fit in 0.6 MB; three requests do not fit in two
        pad = {"samples": [{"id": 0, "response": "2", "pad": "x" * 350_000}]}
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            first = pool.submit(httpx.post, server.url + "/grade", json=pad, timeout=60)
            time.sleep(0.5)
            second = httpx.post(server.url + "/grade", json=pad, timeout=60)
            assert (
                second.status_code == 429 and "MiB of requests in flight" in second.json()["error"]
            )
            assert first.result().status_code == 200
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            codes = sorted(r.status_code for r in pool.map(lambda _: grade(server, "1"), range(4)))
        assert 429 in codes and codes.count(200) >= 2
        assert {"bytes", "requests"} <= set(metrics(server)["rejected_by_reason"])


def test_stalled_and_silent_connections_are_closed():
    with ServerProcess("math", workers=1, extra_args=["--idle-timeout-s", "1"]) as server:
        host, port = "127.0.0.1", server.port
        sockets = []
        for i in range(90):
            sock = socket.create_connection((host, port))
            if i % 3 == 1:  # half a request head
                sock.sendall(b"POST /grade HTTP/1.1\r\nHost: test\r\n")
            elif i % 3 == 2:  # a head and part of the body it announces
                sock.sendall(raw_request(b'{"samples": [' + b" " * 40)[:-20])
            sockets.append(sock)
        closed = set()
        deadline = time.monotonic() + 30
        while len(closed) < len(sockets) and time.monotonic() < deadline:
            ready, _, _ = select.select([s for s in sockets if s not in closed], [], [], 1.0)
            for sock in ready:
                try:
                    if sock.recv(4096) == b"":
                        closed.add(sock)
                except ConnectionResetError:
                    closed.add(sock)
        for sock in sockets:
            sock.close()
        assert len(closed) == len(sockets)
        assert httpx.get(server.url + "/health", timeout=10).status_code == 200


def test_an_abandoned_request_has_its_work_cancelled():
    with ServerProcess(f"{SLOW}:slow", workers=1) as server:
        for _ in range(5):
            assert grade(server, "0").status_code == 200
        with pytest.raises(httpx.ReadTimeout):
            grade(server, "40", timeout=1.5)  # the client gives up and closes its connection
        # the only worker was freed: without the cancellation this waits out the 40 s item
        assert grade(server, "0", timeout=20).status_code == 200
        assert metrics(server)["cancelled_requests"] == 1


def test_a_request_past_its_deadline_gets_504_and_frees_its_worker():
    args = ["--request-timeout-s", "1"]
    with ServerProcess(f"{SLOW}:slow", workers=1, extra_args=args) as server:
        late = grade(server, "40", timeout=30)
        assert late.status_code == 504 and "request deadline of 1 s" in late.json()["error"]
        assert grade(server, "0", timeout=20).status_code == 200
        assert metrics(server)["timed_out_requests"] == 1


def test_health_and_metrics_answer_while_every_worker_is_busy():
    def abandoned(_: int) -> None:
        # the client gives up after 4 s, and the server then cancels the work it left
        with contextlib.suppress(httpx.ReadTimeout):
            grade(server, "3", timeout=4)

    with ServerProcess(f"{SLOW}:slow", workers=1) as server:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            busy = [pool.submit(abandoned, i) for i in range(16)]
            time.sleep(0.5)
            health = httpx.get(server.url + "/health", timeout=5).json()
            assert health["requests_in_flight"] >= 1
            text = httpx.get(server.url + "/metrics", timeout=5).text
            assert not all(f.done() for f in busy)
        families = {f.name: f for f in text_string_to_metric_families(text)}
        for name in (
            "truegrade_queue_wait_seconds",
            "truegrade_request_seconds",
            "truegrade_item_grading_seconds",
        ):
            assert families[name].type == "histogram"
        in_flight = families["truegrade_requests_in_flight"].samples[0].value
        assert in_flight >= 1
        assert families["truegrade_items_in_flight"].type == "gauge"
        assert "truegrade_item_errors" in families and "truegrade_rejected_requests" in families


def test_every_error_has_the_same_shape():
    with ServerProcess("math", workers=1) as server:
        bad_utf8 = httpx.post(
            server.url + "/grade",
            content=b'{"samples": ["\xff\xfe"]}',
            headers={"content-type": "application/json"},
        )
        assert 400 <= bad_utf8.status_code < 500 and set(bad_utf8.json()) == {"error"}
        missing = httpx.get(server.url + "/nowhere")
        assert missing.status_code == 404 and set(missing.json()) == {"error"}
        wrong_method = httpx.get(server.url + "/grade")
        assert wrong_method.status_code == 405 and set(wrong_method.json()) == {"error"}


def test_sigterm_under_load_answers_everything_and_exits_0():
    server = ServerProcess(f"{SLOW}:slow", workers=2, extra_args=["--graceful-s", "20"])
    with server:
        idle = []
        for _ in range(4):  # keep-alive connections that have been served and sit idle
            sock = socket.create_connection(("127.0.0.1", server.port))
            sock.sendall(raw_request(b'{"samples": [{"id": 0, "response": "0"}]}'))
            assert read_status(sock) == 200
            idle.append(sock)
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            in_flight = [pool.submit(grade, server, "2") for _ in range(6)]
            time.sleep(0.5)
            assert server.proc is not None
            server.proc.send_signal(signal.SIGTERM)
            # requests sent on the open connections as shutdown begins are answered, never reset
            for sock in idle:
                sock.sendall(raw_request(b'{"samples": [{"id": 0, "response": "0"}]}'))
            answers = [read_status(sock) for sock in idle]
            assert all(status in (200, 503) for status in answers), answers
            responses = [f.result() for f in in_flight]
            assert [r.json()["grades"][0]["score"] for r in responses] == [1.0] * 6
        assert server.proc.wait(timeout=60) == 0
        with pytest.raises(httpx.ConnectError):
            httpx.get(server.url + "/health", timeout=5)
        for sock in idle:
            sock.close()


def test_shutdown_answers_what_its_grace_cannot_finish_with_503():
    server = ServerProcess(f"{SLOW}:slow", workers=1, extra_args=["--graceful-s", "2"])
    with server, concurrent.futures.ThreadPoolExecutor(2) as pool:
        stuck = [pool.submit(grade, server, "30") for _ in range(2)]
        time.sleep(0.5)
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM)
        responses = [f.result(timeout=60) for f in stuck]
        assert [r.status_code for r in responses] == [503, 503]
        assert all("shutting down" in r.json()["error"] for r in responses)
        assert server.proc.wait(timeout=60) == 0
        said = server.proc.stderr.read().decode() if server.proc.stderr else ""
        assert "SIGTERM: stopping; 2 requests in flight get up to 1 s to finish" in said, said
        assert said.rstrip().endswith("truegrade serve: stopped")


def test_requests_arriving_during_shutdown_get_503():
    server = ServerProcess(f"{SLOW}:slow", workers=1, extra_args=["--graceful-s", "10"])
    with server, concurrent.futures.ThreadPoolExecutor(1) as pool:
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(raw_request(b'{"samples": [{"id": 0, "response": "0"}]}'))
        assert read_status(sock) == 200
        running = pool.submit(grade, server, "3")
        time.sleep(0.5)
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM)
        stopping = threading.Event()
        deadline = time.monotonic() + 10
        while not stopping.is_set() and time.monotonic() < deadline:
            # the listening socket closes first: then shutdown has begun
            try:
                socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
                time.sleep(0.01)
            except OSError:
                stopping.set()
        assert stopping.is_set()
        sock.sendall(raw_request(b'{"samples": [{"id": 0, "response": "0"}]}'))
        assert read_status(sock) == 503  # the connection lingers to answer it
        assert running.result().status_code == 200
        assert server.proc.wait(timeout=60) == 0
        sock.close()


def test_an_abandoned_request_is_cancelled_under_a_plain_uvicorn_too():
    # create_app mounted by a user's own server, without truegrade's connection handling: the
    # body guard then watches for the disconnect itself
    import uvicorn

    from truegrade import load_grader
    from truegrade.serve import create_app, free_port

    app = create_app(load_grader(f"{SLOW}:slow"))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(url + "/health", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        body = {"samples": [{"id": 0, "response": "30"}]}
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(url + "/grade", json=body, timeout=1.5)
        state = app.state.truegrade
        deadline = time.monotonic() + 20
        while state.cancelled == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert state.cancelled == 1 and state.requests_in == 0
    finally:
        server.should_exit = True
        thread.join(timeout=60)
