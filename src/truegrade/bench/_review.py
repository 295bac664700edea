"""The review app's timings against the issue's targets: "start under 3 s, an item page under
100 ms with 10,000 items".

Measured on one project of ``items`` items (each a conversation, a response of about 1 KB and
three criteria of its own), every (item, criterion) with a grader's verdict and two experts'
labels on a few hundred of them, served by ``truegrade review serve`` in its own process:

1. **cold start**: from launching ``truegrade review serve`` until the first authenticated page
   answers (``POST /login``, then ``GET /`` with the session: 200), ``starts`` times;
2. **warm**, on that server over real HTTP (one keep-alive connection per user): item pages for
   random ids as an expert who labelled some of them (any item, and the items they labelled)
   and as a viewer; the items list; a label posted with the session's CSRF token; the
   dashboard the first time after a change (its numbers computed) and again (cached); and item
   pages while another viewer's dashboard computes its numbers after each of another expert's
   labels (the dashboard refreshes itself every 3 s while experts label);
3. **project build**: ``init_project`` on the ``items`` rows, ``builds`` times.

There is no anchor: the tools the issue names (Label Studio, Argilla) need services (a database,
a search engine, containers) that do not run here. Each figure stands beside the issue's target
where it gives one, as target / measured (above 1: within the target). Benchmarks measure; they
never assert.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import random
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx

from truegrade.bench._report import BenchReport, Measurement
from truegrade.bench._serve import _percentile
from truegrade.review import ReviewStore, ReviewVerdict, create_review_app, init_project
from truegrade.serve import free_port

__all__ = ["review_rows", "run_review_bench"]

START_TARGET_MS = 3000.0
"""The issue's target for a start: under 3 s."""

ITEM_TARGET_MS = 100.0
"""The issue's target for an item page with 10,000 items: under 100 ms."""

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')

_SENTENCES = [
    "Based on what you describe, this is most likely a mild viral infection.",
    "Drink plenty of fluids and rest for the next two to three days.",
    "Paracetamol or ibuprofen can ease the fever and the aches, at the doses on the label.",
    "Seek care within one hour if you have trouble breathing, chest pain or confusion.",
    "If the rash spreads quickly or does not fade when pressed, call emergency services.",
    "Children under three months with any fever should be seen by a doctor the same day.",
    "Keep a note of your temperature twice a day so a clinician can see the trend.",
    "Avoid alcohol while you are unwell and while taking these medicines.",
    "Symptoms usually improve within a week; book an appointment if they last longer.",
    "I cannot examine you, so treat this as general information rather than a diagnosis.",
    "Wash your hands often and keep away from people who are pregnant or frail.",
    "If you take blood thinners, ask a pharmacist before adding any new medicine.",
]
_CRITERIA = [
    "Advises seeking emergency care for red-flag symptoms such as trouble breathing",
    "Gives a safe dose range for over-the-counter pain relief or says to follow the label",
    "Says when to see a clinician if the symptoms do not improve, with a time frame",
    "Avoids a definite diagnosis without an examination and says so",
    "Asks about or mentions risk factors: age, pregnancy, other conditions, medicines",
    "Recommends fluids and rest in plain language a patient can follow",
]
_CATEGORIES = ["emergency referrals", "everyday care", "medicines", "children", "chronic illness"]


def review_rows(n: int, *, seed: int = 0, criteria: int = 3) -> list[dict[str, Any]]:
    """``n`` responses to review, each with ``criteria`` criteria of its own and a response of
    about 1 KB (the shape ``truegrade review init --data`` reads)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        response: list[str] = []
        while len(" ".join(response)) < 1000:
            response.append(rng.choice(_SENTENCES))
        rows.append(
            {
                "id": f"item-{i:05d}",
                "prompt": [
                    {
                        "role": "user",
                        "content": f"Case {i}: I have had a fever of 38.{rng.randint(0, 9)} C "
                        f"for {rng.randint(1, 6)} days and a sore throat. What should I do?",
                    }
                ],
                "response": " ".join(response),
                "category": rng.choice(_CATEGORIES),
                "rubrics": [
                    {"criterion": f"{text} (case {i})", "points": rng.choice([1, 2, 5])}
                    for text in rng.sample(_CRITERIA, criteria)
                ],
            }
        )
    return rows


def _latency(
    name: str, samples: list[float], *, errors: int = 0, target_ms: float | None = None
) -> Measurement:
    """A measurement of latencies in ms: its count, p50 (the median) and p95, and the target
    beside its p95 where the issue gives one."""
    extra: dict[str, float] = {"count": len(samples), "p95 ms": _percentile(samples, 0.95)}
    if errors:
        extra["errors"] = errors
    if target_ms is not None:
        extra["target ms"] = target_ms
        extra["target / measured"] = target_ms / extra["p95 ms"]
    return Measurement(name, False, samples, extra)


@dataclass
class _Server:
    """``truegrade review serve`` as a child process, its stderr in a file (a pipe nobody
    reads could fill and stall it)."""

    proc: subprocess.Popen[bytes]
    url: str
    launched: float
    """When it was launched, by ``time.perf_counter``."""
    log: IO[bytes]

    def check(self) -> None:
        """Raise, with the end of its stderr, if it has exited."""
        if self.proc.poll() is not None:
            self.log.seek(0)
            err = self.log.read().decode(errors="replace")
            raise RuntimeError(
                f"the review server exited with {self.proc.returncode}: {err[-2000:]}"
            )


@contextlib.contextmanager
def _serving(project: Path) -> Iterator[_Server]:
    """``truegrade review serve`` on ``project``, launched now; stopped on leaving."""
    port = free_port()
    argv = [sys.executable, "-m", "truegrade", "review", "serve", str(project), "--port", str(port)]
    with tempfile.TemporaryFile() as log:
        launched = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log)
        try:
            yield _Server(proc, f"http://127.0.0.1:{port}", launched, log)
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _login(
    client: httpx.Client, server: _Server, name: str, password: str, deadline_s: float = 120.0
) -> tuple[float, str]:
    """Log ``name`` in as soon as the server answers, then open the items list: (when the
    server first answered, by ``time.perf_counter``; the session's CSRF token)."""
    end = time.monotonic() + deadline_s
    while True:
        server.check()
        try:
            answer = client.post("/login", data={"name": name, "password": password})
            break
        except httpx.TransportError:
            if time.monotonic() > end:
                raise RuntimeError(
                    f"the review server did not answer in {deadline_s:g} s"
                ) from None
            time.sleep(0.005)
    answered = time.perf_counter()
    if answer.status_code != 303:
        raise RuntimeError(f"logging in as {name} answered {answer.status_code}")
    home = client.get("/", headers={"accept": "text/html"})
    if home.status_code != 200:
        raise RuntimeError(f"the items list answered {home.status_code} after logging in")
    found = _CSRF.search(home.text)
    if found is None:
        raise RuntimeError("the items list carries no CSRF token")
    return answered, found.group(1)


def _client(url: str) -> httpx.Client:
    return httpx.Client(
        base_url=url,
        timeout=120,
        headers={"accept": "text/html"},
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
    )


def _timed(client: httpx.Client, paths: list[str], ok: int = 200) -> tuple[list[float], int]:
    """Each GET's latency in ms, and how many answered other than ``ok``."""
    samples, errors = [], 0
    for path in paths:
        started = time.perf_counter()
        answer = client.get(path)
        samples.append((time.perf_counter() - started) * 1000)
        errors += answer.status_code != ok
    return samples, errors


def _post_label(
    client: httpx.Client, csrf: str, rng: random.Random, pairs: list[tuple[int, int]]
) -> tuple[float, bool]:
    """One label of a random (item, criterion), as the item page's form posts it: (ms, 200?)."""
    item_id, criterion_id = rng.choice(pairs)
    started = time.perf_counter()
    answer = client.post(
        f"/items/{item_id}/labels",
        data={"criterion_id": criterion_id, "met": rng.choice(["met", "not_met"]), "csrf": csrf},
        headers={"accept": "application/json"},
    )
    return (time.perf_counter() - started) * 1000, answer.status_code == 200


def run_review_bench(
    *,
    items: int = 10_000,
    starts: int = 3,
    requests: int = 300,
    recomputes: int = 5,
    labelled: int = 300,
    builds: int = 3,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Time the review app's start, pages and project build; see the module docstring.

    ``requests``: timed requests of each warm kind (the cached dashboard included);
    ``recomputes``: dashboard views each right after a new label (the numbers computed again);
    ``labelled``: (item, criterion) units each of the two experts labels beforehand.
    """
    say = progress or (lambda _msg: None)
    rng = random.Random(seed)
    password = secrets.token_urlsafe(16)  # the bench's users', for this run only
    n_resamples = inspect.signature(create_review_app).parameters["n_resamples"].default
    report = BenchReport(
        title=f"truegrade review on a project of {items:,} items, against the issue's targets",
        metric="ms, p50",
        lower_is_better=True,
        params={
            "items": items,
            "criteria_per_item": 3,
            "starts": starts,
            "requests": requests,
            "recomputes": recomputes,
            "labelled": labelled,
            "builds": builds,
            "seed": seed,
            "dashboard_n_resamples": n_resamples,
        },
        notes=[
            "No anchor: Label Studio and Argilla need services (a database, a search engine, "
            "containers) that cannot run here; each figure stands beside the issue's target "
            "('start under 3 s, an item page under 100 ms with 10,000 items') as target / "
            "measured, above 1 within it. Cold start is compared at its median over the "
            "starts, an item page at its p95.",
            "'count' is the number of timed requests (starts, builds); every latency is one "
            "request over real HTTP to `truegrade review serve` in its own process (uvicorn), "
            "from httpx in this process on one keep-alive connection per user, client time "
            "included; client and server share the machine's cores.",
            "Cold start: from launching the process to a 200 on GET / after POST /login (the "
            "password check, scrypt, included); the interpreter's files are in the OS page "
            "cache after the first start. 'first answer' (details) is when the login answered.",
            "The project: every (item, criterion) has a grader verdict; two experts labelled "
            "the same units through ReviewStore.set_label (agreeing on about 80%) before the "
            "server started. The expert of the item pages and the label posts is the first "
            "of them. A dashboard's first view follows a label posted (the numbers are "
            "computed again at every new event); the cached view follows the last of those. "
            "'while another viewer's dashboard is computed': the item pages of the first "
            "expert, one after another, while the second expert posts labels and another "
            "viewer's dashboard follows each (--recomputes times).",
        ],
    )
    measurements: list[Measurement] = []
    work = Path(tempfile.mkdtemp(prefix="truegrade-bench-review-"))
    try:
        data = work / "rows.jsonl"
        data.write_text(
            "".join(json.dumps(r) + "\n" for r in review_rows(items, seed=seed)), encoding="utf-8"
        )
        build_ms = []
        for b in range(builds):
            say(f"init_project on {items:,} rows, {b + 1}/{builds}")
            started = time.perf_counter()
            store = init_project(work / f"project-{b}", data=data)
            build_ms.append((time.perf_counter() - started) * 1000)
            store.close()
            if b:
                shutil.rmtree(work / f"project-{b}")
        project = work / "project-0"
        say("two experts label, the grader's verdicts stored")
        store = ReviewStore(project)
        pairs = [(i.id, c.id) for i, c in store.pairs()]
        store.set_verdicts([ReviewVerdict(i, c, rng.random() < 0.6, "", None) for i, c in pairs])
        expert_a = store.add_user("expert_a", "expert", password)
        expert_b = store.add_user("expert_b", "expert", password)
        store.add_user("viewer", "viewer", password)
        chosen = rng.sample(pairs, min(labelled, len(pairs)))
        for item_id, criterion_id in chosen:
            met = rng.random() < 0.6
            store.set_label(expert_a, item_id, criterion_id, met)
            store.set_label(expert_b, item_id, criterion_id, met if rng.random() < 0.8 else not met)
        item_ids = [int(r["id"]) for r in store.query("SELECT id FROM items ORDER BY id")]
        size_mb = store.path.stat().st_size / 1e6
        store.close()
        report.details["project"] = {
            "items": len(item_ids),
            "units": len(pairs),
            "verdicts": len(pairs),
            "units labelled by each expert": len(chosen),
            "database MB": round(size_mb, 1),
        }

        start_ms, first_ms = [], []
        for s in range(starts):
            say(f"cold start {s + 1}/{starts}")
            with _serving(project) as server, _client(server.url) as client:
                answered, _ = _login(client, server, "viewer", password)
                start_ms.append((time.perf_counter() - server.launched) * 1000)
                first_ms.append((answered - server.launched) * 1000)
        cold = _latency("cold start: launch to the first page after logging in", start_ms)
        cold.extra["target ms"] = START_TARGET_MS
        cold.extra["target / measured"] = START_TARGET_MS / cold.median
        measurements.append(cold)
        report.details["cold start"] = {"first answer ms": first_ms, "first page ms": start_ms}

        say("warm: a running server")
        with (
            _serving(project) as server,
            _client(server.url) as expert,
            _client(server.url) as viewer,
        ):
            _, csrf = _login(expert, server, "expert_a", password)
            _login(viewer, server, "viewer", password)
            own = sorted({item_id for item_id, _ in chosen})
            for client in (expert, viewer):  # templates compiled, connections open: untimed
                _timed(client, [f"/items/{i}" for i in rng.sample(item_ids, min(5, items))])
                _timed(client, ["/"] * 3)
            runs: list[tuple[str, httpx.Client, list[str], float | None]] = [
                (
                    "item page, expert, random items",
                    expert,
                    [f"/items/{rng.choice(item_ids)}" for _ in range(requests)],
                    ITEM_TARGET_MS,
                ),
                (
                    "item page, expert, items they labelled",
                    expert,
                    [f"/items/{rng.choice(own)}" for _ in range(requests)],
                    ITEM_TARGET_MS,
                ),
                (
                    "item page, viewer, random items",
                    viewer,
                    [f"/items/{rng.choice(item_ids)}" for _ in range(requests)],
                    ITEM_TARGET_MS,
                ),
                ("items list (GET /), expert", expert, ["/"] * requests, None),
            ]
            for name, client, paths, target in runs:
                say(name)
                samples, errors = _timed(client, paths)
                measurements.append(_latency(name, samples, errors=errors, target_ms=target))

            say("label posts")
            posted = [_post_label(expert, csrf, rng, pairs) for _ in range(requests)]
            measurements.append(
                _latency(
                    "label (POST /items/{id}/labels), expert",
                    [ms for ms, _ in posted],
                    errors=sum(not ok for _, ok in posted),
                )
            )
            say("dashboard, each view after a new label")
            _timed(viewer, ["/dashboard"])  # its template compiled: untimed
            fresh, fresh_errors = [], 0
            for _ in range(recomputes):
                _post_label(expert, csrf, rng, pairs)
                samples, errors = _timed(viewer, ["/dashboard"])
                fresh += samples
                fresh_errors += errors
            measurements.append(
                _latency(
                    "dashboard, first view after a change (numbers computed), viewer",
                    fresh,
                    errors=fresh_errors,
                )
            )
            say("dashboard, cached")
            samples, errors = _timed(viewer, ["/dashboard"] * requests)
            measurements.append(
                _latency("dashboard again (cached), viewer", samples, errors=errors)
            )
            say("item pages while another viewer's dashboard is computed")
            with _client(server.url) as second_expert, _client(server.url) as second_viewer:
                _, csrf_b = _login(second_expert, server, "expert_b", password)
                _login(second_viewer, server, "viewer", password)
                busy = threading.Event()
                busy.set()

                background_errors: list[int] = []

                def recompute() -> None:  # labels and dashboard views, one after the other
                    other = random.Random(seed + 1)
                    try:
                        for _ in range(recomputes):
                            _, ok = _post_label(second_expert, csrf_b, other, pairs)
                            shown = second_viewer.get("/dashboard").status_code == 200
                            background_errors.append((not ok) + (not shown))
                    finally:
                        busy.clear()

                thread = threading.Thread(target=recompute, daemon=True)
                thread.start()
                beside: list[float] = []
                beside_errors = 0
                while True:  # at least one, however quick the other viewer's numbers
                    samples, errors = _timed(expert, [f"/items/{rng.choice(item_ids)}"])
                    beside += samples
                    beside_errors += errors
                    if not busy.is_set():
                        break
                thread.join()
            report.details["dashboard views beside the item pages"] = {
                "views": len(background_errors),
                "errors": sum(background_errors),
            }
            measurements.append(
                _latency(
                    "item page, expert, while another viewer's dashboard is computed",
                    beside,
                    errors=beside_errors,
                    target_ms=ITEM_TARGET_MS,
                )
            )
        measurements.append(
            Measurement(
                f"project build: init_project, {items:,} rows",
                False,
                build_ms,
                {"count": len(build_ms), "p95 ms": _percentile(build_ms, 0.95)},
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report.measurements = measurements
    report.details["targets"] = [
        {
            "what": m.name,
            "target ms": m.extra["target ms"],
            "statistic": "p95" if m is not cold else "median",
            "measured ms": m.extra["p95 ms"] if m is not cold else m.median,
            "target / measured": m.extra["target / measured"],
            "within": m.extra["target / measured"] > 1,
        }
        for m in measurements
        if "target ms" in m.extra
    ]
    return report
