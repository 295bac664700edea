"""The sandbox's contract: isolation that is observed, not assumed; calls that only carry plain
data; sessions that forget; runs that are capped and killed on time."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.sandbox.helpers import descendants
from truegrade.sandbox import (
    Sandbox,
    SandboxConfig,
    SandboxUnavailable,
    _launch,
    layers,
)
from truegrade.sandbox._kernel import landlock_abi

ADD = "def add(a, b):\n    return a + b\n"


@pytest.fixture(scope="module")
def box():
    with Sandbox(SandboxConfig(output_bytes=1 << 16)) as sandbox:
        yield sandbox


def _layer(found, name):
    return next(layer for layer in found if layer.name == name)


def test_the_layers_that_must_hold_are_observed_from_inside(box):
    found = layers(box)
    for name in (
        "user namespace",
        "PID namespace",
        "network",
        "capabilities",
        "no new privileges",
        "seccomp",
        "not dumpable",
        "standard library only",
        "one process tree per task",
    ):
        assert _layer(found, name).active, _layer(found, name)
    assert box.hello["uid"] != 0
    assert box.hello["pid"] == 1
    memory = _launch.MemoryCgroup.create()
    if memory is not None:  # where a memory cgroup can be made, the sandbox's tasks share one
        memory.remove()
        assert _layer(found, "memory per task").active
    if landlock_abi():
        assert _layer(found, "Landlock").active
    writable = _launch.PidsCgroup.create(1)
    if writable is not None:  # where a pids cgroup can be made, the sandbox has one
        writable.remove()
        assert _layer(found, "process limit").active


def test_calls_return_plain_values_and_name_what_went_wrong(box):
    program = box.load(
        ADD
        + "def boom(x):\n    raise ValueError(f'bad {x}')\n"
        + "class Sneaky(int):\n    def __eq__(self, other):\n        return True\n"
        + "def sneaky():\n    return Sneaky(1)\n",
        entry_point="add",
    )
    result = program.call([2, 3], timeout_s=5)
    assert (result.status, result.value) == ("ok", 5)
    assert program.call([[1], [2]], timeout_s=5).value == [1, 2]
    assert program.call([(1,), (2,)], timeout_s=5).value == (1, 2)
    failed = program.call(["a", 1], timeout_s=5)
    assert failed.status == "raised"
    assert failed.exception == "TypeError"
    assert failed.builtin_exception
    program.close()
    sneaky = box.load(
        "class Sneaky(int):\n    def __eq__(self, other):\n        return True\n"
        "def f():\n    return Sneaky(1)\n",
        entry_point="f",
    )
    result = sneaky.call([], timeout_s=5)
    assert (result.status, result.value, type(result.value)) == ("ok", 1, int)  # what it holds
    sneaky.close()
    fraction = box.load(
        "from fractions import Fraction\ndef f():\n    return Fraction(1, 2)\n", entry_point="f"
    )
    result = fraction.call([], timeout_s=5)
    assert result.status == "bad_value"
    assert "fractions.Fraction object is not plain builtin data" in result.error
    fraction.close()


def test_a_program_that_does_not_compile_or_lacks_its_function_says_so(box):
    broken = box.load("def f(:\n", entry_point="f")
    assert broken.error is not None
    assert "SyntaxError" in broken.error
    assert broken.call([], timeout_s=5).status == "sandbox_error"
    missing = box.load("x = 1\n", entry_point="f")
    assert missing.call([], timeout_s=5).status == "missing_entry"
    raising = box.load("raise RuntimeError('at import')\ndef f():\n    return 1\n", entry_point="f")
    result = raising.call([], timeout_s=5)
    assert result.status == "raised"
    assert result.during_load


def test_a_session_keeps_the_program_state_until_reset(box):
    program = box.load(
        "calls = 0\ndef f():\n    global calls\n    calls += 1\n    return calls\n", entry_point="f"
    )
    assert [program.call([], timeout_s=5).value for _ in range(3)] == [1, 2, 3]
    program.reset()
    assert program.call([], timeout_s=5).value == 1
    batch = program.call_many([([], {}), ([], {})], timeout_s=5)
    assert [r.value for r in batch] == [2, 3]
    program.close()


def test_a_call_past_its_deadline_is_killed_and_the_next_call_gets_a_fresh_process(box):
    program = box.load(
        "import time\nseen = []\ndef f(x):\n    seen.append(x)\n"
        "    if x == 'hang':\n        time.sleep(60)\n    return len(seen)\n",
        entry_point="f",
    )
    assert program.call(["a"], timeout_s=5).value == 1
    started = time.monotonic()
    hung = program.call(["hang"], timeout_s=0.5)
    assert hung.status == "timeout"
    assert time.monotonic() - started < 30  # (a hang guard, not a timing assertion)
    assert program.call(["b"], timeout_s=5).value == 1  # a new session: nothing remembered
    program.close()


FORBIDDEN = """
import os, subprocess, ctypes
def spawn():
    return os.fork()
def run():
    return subprocess.run(['true']).returncode
def write():
    open('state.txt', 'w').write('1')
    return 'wrote'
def pipe():
    return os.pipe()
def tee():  # peek at the calls queued on the request pipe
    return ctypes.CDLL(None, use_errno=True).tee(3, 4, 1 << 16, 2), ctypes.get_errno()
def fionread():
    import fcntl, termios, array
    buf = array.array('i', [0])
    fcntl.ioctl(3, termios.FIONREAD, buf)
    return buf[0]
def pidfd():
    return os.pidfd_open(os.getpid())
def signal_root():
    os.kill(1, 9)
    return 'sent'
def nonblocking():
    os.set_blocking(3, False)
    return 'set'
"""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("spawn", "violation"),  # killed: a second process
        ("run", "raised"),  # its pipes are refused before it could fork
        ("write", "raised"),
        ("pipe", "raised"),
        ("fionread", "raised"),
        ("pidfd", "raised"),
        ("signal_root", "raised"),
        ("nonblocking", "raised"),
    ],
)
def test_function_calls_may_not_create_processes_files_or_signals(box, name, expected):
    # a call session computes: every system call off its allow-list fails (or, for a new
    # process or an escape, kills it), so nothing it does outlives it or reaches another
    program = box.load(FORBIDDEN, entry_point=name)
    result = program.call([], timeout_s=5)
    assert result.status == expected, (name, result)
    program.close()


def test_a_call_cannot_peek_at_the_calls_queued_for_it(box):
    program = box.load(FORBIDDEN, entry_point="tee")
    moved, errno = program.call([], timeout_s=5).value
    assert moved == -1 and errno == 38  # ENOSYS: tee is not on the list


def test_a_program_cannot_fake_a_sandbox_failure_or_a_second_answer(box):
    # the ready byte comes before the program runs: writing "setup failed" and exiting is an
    # exit, not an error; a record the program writes itself is caught (the harness numbers its
    # own), fails the call it lands on and ends the session
    program = box.load(
        "import os\n"
        "def f(x):\n"
        "    if x == 'fake-setup':\n"
        "        os.write(4, b'sandbox setup failed: no'); os._exit(70)\n"
        "    if x == 'extra':\n"
        '        rec = b\'{"status":"ok","value":42}\'\n'
        "        os.write(4, len(rec).to_bytes(4, 'big') + rec)\n"
        "    return 1\n",
        entry_point="f",
    )
    faked = program.call(["fake-setup"], timeout_s=5)
    assert faked.status not in ("ok", "sandbox_error")
    forged = program.call_many([(["extra"], {}), (["x"], {})], timeout_s=5)
    assert [r.status for r in forged] == ["bad_record"]
    assert forged[0].value is None and "duplicated or out-of-order" in (forged[0].error or "")
    numbered = (
        "import os\n"
        "def f(x):\n"
        '    rec = b\'{"status":"ok","value":42,"call":0}\'\n'
        "    os.write(4, len(rec).to_bytes(4, 'big') + rec)\n"
        "    return 1\n"
    )  # even one that guesses the index: the genuine record then repeats it
    guessed = box.load(numbered, entry_point="f").call_many([([1], {}), ([2], {})], timeout_s=5)
    assert [r.status for r in guessed] == ["ok", "bad_record"]
    # the zygote holds one program: the first handle may not start a session of the second
    stale = program.call(["x"], timeout_s=5)
    assert stale.status == "sandbox_error" and "another program was loaded" in (stale.error or "")
    program.close()


def test_runs_feed_stdin_and_report_exit_status(box):
    echo = box.load("import sys\nprint(sys.stdin.read().upper(), end='')\n")
    assert echo.run("abc\n", timeout_s=5).stdout == "ABC\n"
    big = "x" * 200_000  # more than a pipe holds
    assert (
        len(box.load("import sys\nprint(len(sys.stdin.read()))").run(big, timeout_s=5).stdout) > 0
    )
    exits = box.load("import sys\nprint('partial')\nsys.exit(3)\n").run("", timeout_s=5)
    assert (exits.status, exits.exit_code, exits.stdout) == ("exited", 3, "partial\n")
    crash = box.load("raise KeyError('k')\n").run("", timeout_s=5)
    assert crash.exit_code == 1
    assert "KeyError" in crash.stderr


def test_a_run_leaves_nothing_for_the_next_one(box):
    writer = box.load("import os\nopen('note', 'w').write('x')\nprint(os.listdir('.'))\n")
    assert "note" in writer.run("", timeout_s=5).stdout
    reader = box.load("import os\nprint(os.listdir('.'))\n")
    assert reader.run("", timeout_s=5).stdout.strip() == "[]"


def test_isolation_none_must_be_asked_for_and_says_so():
    with pytest.raises(ValueError, match="unsafe-no-sandbox"):
        SandboxConfig(isolation="none")
    with Sandbox(SandboxConfig(isolation="none", allow_unsandboxed=True)) as box:
        assert box.mode == "none"
        assert not box.sandboxed
        assert not _layer(layers(box), "user namespace").active
        assert box.load(ADD, entry_point="add").call([1, 1], timeout_s=5).value == 2


def test_the_native_fallback_isolates_without_bubblewrap():
    if not landlock_abi():
        with pytest.raises(SandboxUnavailable, match="needs Landlock"):
            Sandbox(SandboxConfig(isolation="native")).start()
        return
    with Sandbox(SandboxConfig(isolation="native")) as box:
        found = layers(box)
        for name in (
            "user namespace",
            "PID namespace",
            "network",
            "capabilities",
            "seccomp",
            "standard library only",
        ):
            assert _layer(found, name).active, _layer(found, name)
        if landlock_abi():
            assert _layer(found, "Landlock").active
        assert box.load(ADD, entry_point="add").call([1, 2], timeout_s=5).value == 3


def test_a_missing_layer_is_reported_with_a_hint(monkeypatch):
    monkeypatch.setattr(_launch, "bwrap_path", lambda: None)
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        Sandbox(SandboxConfig(isolation="bwrap")).start()
    if not landlock_abi():
        return  # no fallback on this kernel: covered by the test above
    with Sandbox(SandboxConfig(isolation="auto")) as box:  # falls back, and says so
        assert box.mode == "native"
        assert not _layer(layers(box), "bubblewrap").active


@pytest.mark.slow
def test_a_zygote_that_stops_answering_is_killed_and_a_new_one_started():
    with Sandbox() as box:
        program = box.load(ADD, entry_point="add")
        assert program.call([1, 2], timeout_s=5).value == 3
        for pid in descendants(box.host_pid):  # the root and its session
            os.kill(pid, signal.SIGSTOP)
        program.reset()  # the harness waits a little for the root's answer,
        stuck = program.call([1, 2], timeout_s=0.5)
        assert stuck.status == "sandbox_error"  # then gives up on the zygote...
        assert not box.running  # ...and kills the whole sandbox
        assert program.call([1, 2], timeout_s=5).status == "sandbox_error"
        assert box.load(ADD, entry_point="add").call([1, 2], timeout_s=5).value == 3
        assert box.starts == 2


SPIN = """
import time
def f(x, spin):
    end = time.process_time() + spin
    while time.process_time() < end:
        pass
    return x
def nap(x):
    time.sleep(x)
    return x
"""


def test_a_batch_stops_at_its_budget_of_cpu_time(box):
    # the first call ends well inside the budget, the second well after it, however busy the
    # machine: the budget and each call's limit count the session's CPU time
    program = box.load(SPIN, entry_point="f")
    calls = [([1, 1.0], {}), ([2, 1.0], {}), ([3, 1.0], {})]
    results = program.call_many(calls, timeout_s=5, budget_s=1.8)
    assert [r.status for r in results] == ["ok", "timeout"]
    assert results[0].value == 1
    assert results[0].cpu_s >= 1.0  # as the kernel counted it
    assert "time budget" in results[1].error
    program.close()


def test_a_call_that_waits_is_stopped_by_the_wall_clock_backstop(box):
    # a sleeping call uses no CPU time: the backstop (3 x the limit + 2 s) ends it
    program = box.load(SPIN, entry_point="nap")
    started = time.monotonic()
    result = program.call([30], timeout_s=0.2)
    assert result.status == "timeout"
    assert result.cpu_s < 0.2
    assert time.monotonic() - started < 25  # (a hang guard, not a timing assertion)
    program.close()


def test_module_code_cannot_answer_before_it_is_asked(box):
    forged = b'{"status":"ok","value":42}'
    program = box.load(
        f"import os\nos.write(4, len({forged!r}).to_bytes(4, 'big') + {forged!r})\n"
        "def f(x):\n    return x\n",
        entry_point="f",
    )
    result = program.call([1], timeout_s=5)
    assert result.status == "bad_record"
    program.close()


def test_a_session_that_never_says_it_started_is_the_sandboxs_failure_not_a_timeout(box):
    # a session's process says "R" before any code of the program runs; one that never says it
    # (its start went wrong in the sandbox) must not become the program's timeout
    import os

    from truegrade.sandbox._sandbox import _Channel

    program = box.load("def f(x):\n    return x\n", entry_point="f")
    with program:
        assert program.call_many([([1], {})], timeout_s=10)[0].value == 1
        program._end()
        requests_r, requests_w = os.pipe()
        responses_r, responses_w = os.pipe()  # this test holds the writing end: no "R" comes
        program._channel = _Channel(requests_w, responses_r, 0)
        try:
            result = program.call_many([([2], {})], timeout_s=0.5)[0]
        finally:
            for fd in (requests_r, responses_w):
                os.close(fd)
        assert result.status == "sandbox_error" and "did not start" in (result.error or "")
        # the program is still usable: the next call gets a session of its own
        assert program.call_many([([3], {})], timeout_s=10)[0].value == 3
