"""The engine's contract: every item gets an outcome, in order, whatever the item does."""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
import subprocess
import sys
import threading
import time

import pytest

from tests.exec import engine_tasks as t
from truegrade.core import EngineError
from truegrade.exec import Engine, Failure, default_engine, default_worker_count
from truegrade.exec._protocol import POS_IDLE, Progress, dumps, make_progress_fd, safe_loads


@pytest.fixture(scope="module")
def engine():
    with Engine(workers=2, memory_mb=2048) as eng:
        yield eng


def test_results_come_back_in_input_order(engine):
    payloads = [("nap", d) for d in (0.05, 0.0, 0.03, 0.0, 0.01, 0.0)] + list(range(500))
    outcomes = engine.map(t.misbehave, payloads, timeout_s=5)
    assert [o.value for o in outcomes] == [p[1] if isinstance(p, tuple) else p for p in payloads]
    assert all(o.ok for o in outcomes)


def test_payloads_and_answers_larger_than_a_pipe_never_deadlock():
    # chunks of 3.6 MB, answers of 1.8 MB: the chunk sent ahead to a busy worker must not leave the
    # dispatcher blocked on the worker's full inbox while the worker blocks on its full outbox
    payloads = [(f"{i}" + "x" * 600_000, 300_000) for i in range(12)]
    engine = Engine(workers=1, memory_mb=2048)
    try:
        future = engine.submit(t.sized_answer, payloads, timeout_s=60)
        try:
            outcomes = future.result(timeout=30)
        except concurrent.futures.TimeoutError:
            for worker in engine._workers:
                worker.proc.kill()
            pytest.fail("the dispatcher and the worker each waited for the other")
        assert [len(o.value) for o in outcomes] == [300_000] * 12
    finally:
        engine.close()


def test_a_hung_item_is_killed_at_its_deadline_and_the_batch_goes_on(engine):
    engine.map(t.square, [1, 2, 3, 4], timeout_s=30)  # both workers up before counting
    started = engine.counters["workers_started"]
    timeouts = engine.counters[Failure.TIMEOUT]
    payloads = [1, "spin", 2, "sleep", 3] + list(range(100, 200))
    outcomes = engine.map(t.misbehave, payloads, timeout_s=0.5)
    assert [o.failure for o in outcomes[:5]] == [None, Failure.TIMEOUT, None, Failure.TIMEOUT, None]
    assert "0.5 s deadline" in outcomes[1].message
    assert outcomes[1].elapsed_s >= 0.5
    assert [o.value for o in outcomes[5:]] == list(range(100, 200))
    assert engine.counters[Failure.TIMEOUT] - timeouts == 2
    # two kills, two replacements (the last one may still be starting: wait for it, bounded)
    waited = 0
    while engine.counters["workers_started"] - started < 2 and waited < 300:
        time.sleep(0.1)
        waited += 1
    assert engine.counters["workers_started"] - started == 2
    # the pool is healthy afterwards
    assert [o.value for o in engine.map(t.square, [3, 4], timeout_s=5)] == [9, 16]


def test_a_hung_item_in_the_middle_of_a_large_chunk_blames_only_that_item():
    with Engine(workers=1, max_chunk=64) as eng:
        payloads = list(range(30)) + ["spin"] + list(range(30, 60))
        outcomes = eng.map(t.misbehave, payloads, timeout_s=0.5)
    assert [o.failure for o in outcomes].count(Failure.TIMEOUT) == 1
    assert outcomes[30].failure == Failure.TIMEOUT
    assert [o.value for i, o in enumerate(outcomes) if i != 30] == list(range(60))


def test_crashes_segfaults_and_memory_bombs_are_contained(engine):
    payloads = ["exit", 1, "segv", 2, "memory", 3, "kill_self", 4]
    # a generous deadline: on a loaded machine a worker that just freed gigabytes can take
    # seconds to be scheduled again, and a crash must not be misread as a timeout here
    outcomes = engine.map(t.misbehave, payloads, timeout_s=30)
    assert outcomes[0].failure == Failure.CRASHED
    assert "exited with code 3" in outcomes[0].message
    assert outcomes[2].failure == Failure.CRASHED
    assert "SIGSEGV" in outcomes[2].message
    assert outcomes[4].failure == Failure.MEMORY
    assert outcomes[6].failure == Failure.CRASHED
    assert "SIGKILL" in outcomes[6].message
    assert [outcomes[i].value for i in (1, 3, 5, 7)] == [1, 2, 3, 4]


def test_exceptions_including_system_exit_are_outcomes_not_worker_deaths(engine):
    deaths = engine.counters["worker_deaths"]
    outcomes = engine.map(t.misbehave, ["raise", "system_exit", "keyboard", 5], timeout_s=5)
    assert outcomes[0].failure == Failure.EXCEPTION
    assert "ValueError: planted failure" in outcomes[0].message
    assert "engine_tasks.py" in outcomes[0].message
    assert outcomes[1].failure == Failure.EXCEPTION and "SystemExit" in outcomes[1].message
    assert outcomes[2].failure == Failure.EXCEPTION and "KeyboardInterrupt" in outcomes[2].message
    assert outcomes[3].value == 5
    assert engine.counters["worker_deaths"] == deaths


def test_only_plain_builtin_data_leaves_a_worker(engine):
    outcomes = engine.map(t.misbehave, ["fraction", "int_subclass"], timeout_s=5)
    assert outcomes[0].failure == Failure.EXCEPTION
    assert "fractions.Fraction" in outcomes[0].message
    assert outcomes[1].failure == Failure.EXCEPTION  # an always-equal int cannot get out
    assert "Sneaky" in outcomes[1].message


def test_the_parent_refuses_to_unpickle_anything_but_builtin_values():
    assert safe_loads(dumps({"a": [1, 2.0, "x", None, (True,)], "s": {1}})) == {
        "a": [1, 2.0, "x", None, (True,)],
        "s": {1},
    }
    with pytest.raises(Exception, match=r"posix\.system"):
        safe_loads(dumps(os.system))


def test_the_whole_process_group_dies_with_a_timed_out_worker(engine, tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    [outcome] = engine.map(t.misbehave, [("grandchild", str(pid_file))], timeout_s=1.0)
    assert outcome.failure == Failure.TIMEOUT
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid), "the grandchild survived its worker"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_setup_runs_once_per_worker_and_a_failing_setup_is_reported(engine):
    outcomes = engine.map(t.Counter(), list(range(200)), timeout_s=5)
    per_pid = {o.value[0]: o.value[1] for o in outcomes}
    assert set(per_pid.values()) == {1}
    failed = engine.map(t.Counter(fail_setup=True), [1, 2], timeout_s=5)
    assert all(o.failure == Failure.EXCEPTION for o in failed)
    assert "setup failed: RuntimeError: setup refused" in failed[0].message


def test_concurrent_callers_from_threads_each_get_their_own_results(engine):
    def job(k: int) -> list[int]:
        return [o.value for o in engine.map(t.square, list(range(k, k + 300)), timeout_s=5)]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(job, range(0, 8000, 1000)))
    for k, values in zip(range(0, 8000, 1000), results, strict=True):
        assert values == [x * x for x in range(k, k + 300)]


def test_async_callers_share_the_engine_without_blocking_the_loop(engine):
    async def main() -> list[list[int]]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        tick_task = asyncio.create_task(ticker())
        jobs = [engine.amap(t.misbehave, [("nap", 0.2), k], timeout_s=5) for k in range(4)]
        outcomes = await asyncio.gather(*jobs)
        tick_task.cancel()
        assert ticks >= 5, "the event loop was blocked while waiting"
        return [[o.value for o in job] for job in outcomes]

    assert asyncio.run(main()) == [[0.2, k] for k in range(4)]


def _engine_in_child(n: int) -> list[int]:
    with Engine(workers=1) as eng:
        return [o.value for o in eng.map(t.square, list(range(n)), timeout_s=5)]


def test_works_inside_other_process_pools_including_daemonic_ones():
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        assert pool.submit(_engine_in_child, 5).result(timeout=60) == [0, 1, 4, 9, 16]
    with ctx.Pool(1) as pool:  # multiprocessing.Pool workers are daemonic
        assert pool.apply(_engine_in_child, (4,)) == [0, 1, 4, 9]


def test_streaming_callback_sees_every_outcome(engine):
    seen: dict[int, object] = {}
    lock = threading.Lock()

    def record(index: int, outcome) -> None:
        with lock:
            seen[index] = outcome.value

    engine.map(t.square, list(range(50)), timeout_s=5, on_outcome=record)
    assert seen == {i: i * i for i in range(50)}


def test_close_cancels_pending_work_and_refuses_new_work():
    eng = Engine(workers=1)
    future = eng.submit(t.misbehave, [("nap", 0.3)] * 20, timeout_s=5)
    time.sleep(0.1)
    eng.close()
    outcomes = future.result(timeout=30)
    assert any(o.failure == Failure.CANCELLED for o in outcomes)
    with pytest.raises(EngineError, match="closed"):
        eng.map(t.square, [1], timeout_s=1)


def test_unpicklable_tasks_are_refused_with_a_clear_error(engine):
    with pytest.raises(TypeError, match="module-level"):
        engine.map(lambda x: x, [1], timeout_s=1)


def test_workers_that_cannot_start_break_the_engine_with_a_clear_error(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")
    eng = Engine(workers=1, setup_timeout_s=10)
    try:
        outcomes = eng.map(t.square, [1, 2], timeout_s=5)
        assert all(o.failure == Failure.CRASHED for o in outcomes)
        assert "die before they start" in outcomes[0].message
        with pytest.raises(EngineError, match="die before they start"):
            eng.map(t.square, [1], timeout_s=1)
    finally:
        eng.close()


def test_an_empty_job_needs_no_workers():
    with Engine(workers=1) as eng:
        assert eng.map(t.square, [], timeout_s=1) == []
        assert eng.counters["workers_started"] == 0


def test_default_engine_is_shared_and_rebuilt_after_fork():
    assert default_engine() is default_engine()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: the parent's engine is not usable here; the default is rebuilt
        try:
            ok = default_engine().map(t.square, [7], timeout_s=5)[0].value == 49
        except BaseException:
            ok = False
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"


def test_a_new_workers_progress_block_reads_idle_until_the_worker_writes():
    # zeros read as item 0 of a chunk running since the clock's zero: a deadline check that
    # caught a replacement worker between its writes of seq and pos killed it for a timeout
    # (an "ok" item of the hostile mixes below, once, on a machine slowed by coverage)
    fd = make_progress_fd()
    progress = Progress(fd)
    try:
        assert progress.read()[1] == POS_IDLE
        progress.slots[0] = 7  # the new chunk's seq, its pos not yet written
        assert progress.read()[:2] == (7, POS_IDLE)
    finally:
        progress.close()
        os.close(fd)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_random_mixes_of_hostile_items_always_settle_exactly(seed):
    import random

    rng = random.Random(seed)
    kinds = ["ok"] * 40 + ["raise", "exit", "segv", "spin", "nap"]
    payloads = []
    for i in range(160):
        kind = rng.choice(kinds)
        payloads.append(i if kind == "ok" else ("nap", 0.02) if kind == "nap" else kind)
    with Engine(workers=2, max_chunk=rng.choice([1, 7, 64])) as eng:
        # a deadline far above the 20 ms naps, so a loaded machine cannot push one past it
        outcomes = eng.map(t.misbehave, payloads, timeout_s=1.0)
    expected = {
        "raise": Failure.EXCEPTION,
        "exit": Failure.CRASHED,
        "segv": Failure.CRASHED,
        "spin": Failure.TIMEOUT,
    }
    assert len(outcomes) == len(payloads)
    for payload, outcome in zip(payloads, outcomes, strict=True):
        if isinstance(payload, int):
            assert outcome.ok and outcome.value == payload, (payload, outcome)
        elif isinstance(payload, tuple):
            assert outcome.ok and outcome.value == 0.02, (payload, outcome)
        else:
            assert outcome.failure == expected[payload], (payload, outcome)


@pytest.mark.system_tool("taskset", package="util-linux")
def test_workers_default_to_the_cores_this_process_may_use():
    cores = len(os.sched_getaffinity(0))
    assert default_worker_count() == cores
    with Engine() as eng:
        assert eng.config.workers == cores
    # a process pinned to one core gets one worker
    done = subprocess.run(
        [
            "taskset",
            "-c",
            "0",
            sys.executable,
            "-c",
            "from truegrade.exec import default_worker_count as d; print(d())",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "1", done.stderr


def test_a_slow_tasks_items_never_wait_behind_a_hanging_one():
    # items that take a while go one at a time to idle workers: a job beside a hanging item
    # finishes while that item still runs, whatever order the dispatcher took them in
    with Engine(workers=2) as eng:
        eng.map(t.misbehave, [("nap", 0.05)] * 4, timeout_s=30)  # the task is known to be slow
        hanging = eng.submit(t.misbehave, ["sleep"], timeout_s=60)
        beside = eng.submit(t.misbehave, [("nap", 0.05)] * 6, timeout_s=60)
        assert [o.value for o in beside.result(timeout=50)] == [0.05] * 6
        assert not hanging.done()
        hanging.cancel()
        eng._cancel(hanging)
        # the cancelled item's worker is freed at once, not at the 60 s deadline
        assert [o.value for o in eng.map(t.misbehave, [1, 2, 3], timeout_s=50)] == [1, 2, 3]
        assert eng.counters[Failure.CANCELLED] >= 1


def test_items_queued_behind_a_stalled_quick_item_go_to_another_worker():
    with Engine(workers=2, max_chunk=64) as eng:
        eng.map(t.square, list(range(200)), timeout_s=5)  # the task is known to be quick
        order: list[int] = []
        lock = threading.Lock()

        def record(index: int, outcome) -> None:
            with lock:
                order.append(index)

        payloads = list(range(30)) + ["spin"] + list(range(30, 60))
        outcomes = eng.map(t.misbehave, payloads, timeout_s=5, on_outcome=record)
    assert outcomes[30].failure == Failure.TIMEOUT
    assert [o.value for i, o in enumerate(outcomes) if i != 30] == list(range(60))
    # every other item was answered before the stalled one reached its deadline
    assert order[-1] == 30 and sorted(order) == list(range(61))


def test_concurrent_one_item_jobs_of_a_quick_task_travel_together():
    with Engine(workers=1) as eng:
        eng.map(t.square, list(range(100)), timeout_s=5)
        eng.submit(t.misbehave, [("nap", 0.3)], timeout_s=5)  # keeps the worker busy
        futures = [eng.submit(t.square, [k], timeout_s=5) for k in range(200)]
        assert [f.result(timeout=30)[0].value for f in futures] == [k * k for k in range(200)]
        # fewer messages than jobs: the waiting one-item jobs were sent in shared chunks
        assert eng._seq.__reduce__()[1][0] < 150


def test_a_cpu_timed_item_that_waits_is_not_timed_out_by_the_wall_clock(engine):
    # half a second of sleep uses no CPU time: past its 0.2 s deadline by the wall clock, well
    # within it by the CPU's
    [cpu] = engine.map(t.CpuTimed(), [("nap", 0.5)], timeout_s=0.2)
    [wall] = engine.map(t.CpuTimed("wall"), [("nap", 0.5)], timeout_s=0.2)
    assert (cpu.ok, cpu.value) == (True, 0.5)
    assert wall.failure == Failure.TIMEOUT


def test_a_cpu_timed_item_is_killed_when_its_cpu_time_runs_out(engine):
    outcomes = engine.map(t.CpuTimed(), [1, "spin", ("burn", 0.05), 2], timeout_s=0.3)
    assert [o.failure for o in outcomes] == [None, Failure.TIMEOUT, None, None]
    assert "0.3 s of CPU time" in outcomes[1].message
    assert outcomes[1].elapsed_s >= 0.3


def test_a_cpu_timed_item_that_never_gets_its_budget_is_starved_not_timed_out(engine):
    # it waits past the wall-clock backstop (3 x 0.1 + 2 s) having used no CPU time: that says
    # nothing about the item, so there is no verdict (an error), never a timeout
    [outcome] = engine.map(t.CpuTimed(), ["sleep"], timeout_s=0.1)
    assert outcome.failure == Failure.STARVED
    assert "not graded" in outcome.message
    assert 2.3 <= outcome.elapsed_s < 10


def test_a_loaded_machine_does_not_change_a_cpu_timed_verdict():
    # the worker shares one core with three processes that never stop: 0.3 s of CPU time takes
    # about 1.2 s. By the wall clock it would time out at 0.5 s; by its CPU time it passes.
    # (each in its own session, as the worker is: the scheduler shares a core between sessions)
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(3)
    ]
    try:
        with Engine(workers=1, memory_mb=2048) as eng:
            eng.map(t.square, [1], timeout_s=30)  # the worker is up
            core = min(os.sched_getaffinity(0))
            for pid in [eng._workers[0].proc.pid] + [p.pid for p in spinners]:
                os.sched_setaffinity(pid, {core})
            [cpu] = eng.map(t.CpuTimed(), [("burn", 0.3)], timeout_s=0.5)
            [wall] = eng.map(t.CpuTimed("wall"), [("burn", 0.3)], timeout_s=0.5)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert (cpu.ok, cpu.value) == (True, 0.3)
    assert cpu.elapsed_s > 0.5  # it did wait for the machine
    assert wall.failure == Failure.TIMEOUT


def test_a_task_names_its_clock_as_wall_or_cpu(engine):
    with pytest.raises(ValueError, match="deadline_clock"):
        engine.map(t.CpuTimed("gpu"), [1], timeout_s=1)
