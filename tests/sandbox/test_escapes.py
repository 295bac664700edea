"""The escape suite: each attempt is contained, says why, and leaves the sandbox healthy.

Every assertion is on what the attempt achieved, seen from outside (a file on the host, a
secret in the output, a process left running), not on the flags the sandbox was given. Each
attempt runs under bubblewrap, under bubblewrap without Landlock (so the namespaces,
capabilities and non-dumpable zygote are tested on their own), and under the native fallback
(the ``box`` fixture, ``conftest.py``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from tests.sandbox.helpers import descendants
from truegrade.sandbox import Sandbox, _launch, layers

TIMEOUT_S = 1.5
CHECK = "print(sum(map(int, input().split())))"


@pytest.fixture(scope="module")
def outside():
    """A directory on the host, outside /tmp (which every sandbox replaces with its own)."""
    base = "/var/tmp" if os.path.isdir("/var/tmp") else None
    path = Path(tempfile.mkdtemp(prefix="truegrade-escape-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


LEFT: dict[int, list[int]] = {}


def run(box, source, stdin="", timeout_s=TIMEOUT_S):
    result = box.load(textwrap.dedent(source)).run(stdin, timeout_s=timeout_s)
    LEFT[id(box)] = descendants(box.host_pid)  # before the next program replaces this one
    assert box.load(CHECK).run("2 3", timeout_s=10).stdout == "5\n", "the sandbox is not healthy"
    return result


def only_the_zygote_is_left(box):
    """After the run, and before anything else: the sandbox's own processes alone. Bubblewrap's
    child (which made the root's namespaces) or the native launcher, the root, and the
    program's supervisor with the process that made its namespaces."""
    alive = LEFT.pop(id(box))
    expected = (2 if box.mode == "bwrap" else 1) + 2
    assert len(alive) == expected, alive


def test_network_connect_fails(box):
    result = run(
        box,
        """
        import socket
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=1)
            print("CONNECTED")
        except OSError as exc:
            print("refused", exc.errno)
        """,
    )
    assert "CONNECTED" not in result.stdout
    assert result.status in ("violation", "exited")  # killed by seccomp, or refused by the kernel


def test_writes_outside_the_scratch_directory_do_not_reach_the_host(box, outside):
    targets = [outside / "pwned", Path("/usr/pwned"), Path("/pwned"), Path("/etc/pwned")]
    result = run(
        box,
        f"""
        for path in {[str(t) for t in targets]!r}:
            try:
                with open(path, "w") as handle:
                    handle.write("x")
                print("WROTE", path)
            except OSError as exc:
                print("denied", path, exc.errno)
        """,
    )
    assert result.status == "exited"
    for target in targets:
        assert not target.exists(), target


def test_no_host_file_can_be_changed_at_all(box, outside):
    # a read-only directory shared with every build (the precompiled headers), a host file
    # outside any, the system: under Landlock alone a task owning the files (the harness's
    # user: root owns /usr) could still change their mode or times; a 'chmod 000' of the
    # headers would fail every later build
    shared = outside / f"shared-{secrets.token_hex(4)}"
    (shared / "bits").mkdir(parents=True)
    (shared / "bits" / "header.gch").write_text("pch")
    plain = outside / f"plain-{secrets.token_hex(4)}"
    plain.write_text("host")
    system = shutil.which("env") or "/usr/bin/env"
    watched = [shared, shared / "bits", shared / "bits" / "header.gch", plain, Path(system)]
    before = {p: (p.stat().st_mode, p.stat().st_mtime_ns) for p in watched}
    same = before[Path(system)][0] & 0o7777
    attempt = f"""
        import os
        base = {str(shared)!r}
        gch = base + "/bits/header.gch"
        for name, act in [
            ("chmod host file", lambda: os.chmod({str(plain)!r}, 0o600)),
            ("utime host file", lambda: os.utime({str(plain)!r}, (0, 0))),
            ("chmod system file, same mode", lambda: os.chmod({system!r}, {same})),
            ("chmod file", lambda: os.chmod(gch, 0)),
            ("chmod dir", lambda: os.chmod(base + "/bits", 0)),
            ("utime", lambda: os.utime(gch, (0, 0))),
            ("write", lambda: open(gch, "w").write("x")),
            ("rename", lambda: os.rename(gch, base + "/moved")),
            ("unlink", lambda: os.unlink(gch)),
            ("mkdir", lambda: os.mkdir(base + "/new")),
        ]:
            try:
                act()
                print("CHANGED", name)
            except OSError as exc:
                print("denied", name, exc.errno)
        print(open(gch).read())
        """
    with Sandbox(replace(box.config, read_only_dirs=(str(shared),))) as sharing:
        result = sharing.load(textwrap.dedent(attempt)).run("", timeout_s=10)
    assert "CHANGED" not in result.stdout and result.stdout.endswith("pch\n"), result
    assert (shared / "bits" / "header.gch").read_text() == "pch"
    assert sorted(p.name for p in shared.rglob("*")) == ["bits", "header.gch"]
    for path, (mode, mtime) in before.items():
        assert (path.stat().st_mode, path.stat().st_mtime_ns) == (mode, mtime), path


def test_a_secret_planted_outside_cannot_be_read(box, outside):
    token = secrets.token_hex(16)
    secret = outside / "secret.txt"
    secret.write_text(token)
    secret.chmod(0o644)  # readable by anyone: only the sandbox stands in the way
    result = run(
        box,
        f"""
        import os
        for path in [{str(secret)!r}, "/etc/shadow", os.path.expanduser("~root/.bashrc")]:
            try:
                with open(path) as handle:
                    print("READ", path, handle.read())
            except OSError as exc:
                print("denied", path, exc.errno)
        """,
    )
    assert token not in result.stdout
    assert "READ" not in result.stdout


def test_the_graders_memory_cannot_be_read_through_proc(box):
    marker = secrets.token_hex(16)  # lives in this process's memory, and its parent's
    source = f"""
        import json, os
        seen = {{}}
        for pid in (os.getppid(), 1, {os.getpid()}, {os.getppid()}):
            for name in ("mem", "environ", "maps"):
                try:
                    with open(f"/proc/{{pid}}/{{name}}", "rb") as handle:
                        data = handle.read(1 << 20)
                        seen[f"{{pid}}/{{name}}"] = "{marker}" in data.decode("latin-1")
                except OSError as exc:
                    seen[f"{{pid}}/{{name}}"] = exc.errno
        print(json.dumps(seen))
        """
    result = run(box, source)
    seen = json.loads(result.stdout)
    assert all(
        isinstance(outcome, int) and not isinstance(outcome, bool) for outcome in seen.values()
    ), seen


def test_a_fork_bomb_is_contained_and_cleaned_up(box):
    result = run(
        box,
        """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
    )
    assert result.status == "timeout"
    only_the_zygote_is_left(box)


def test_the_process_limit_binds_before_the_deadline(box):
    # children that sleep (so nothing but the limit stops the forking): the count stops near
    # max_processes, where without a limit it would reach the target well within the deadline
    result = run(
        box,
        """
        import os, time
        made = 0
        for _ in range(500):
            try:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                made += 1
            except OSError as exc:
                print("refused:", exc.strerror)
                break
        print("made", made, flush=True)
        """,
        timeout_s=5,
    )
    (limit,) = [layer for layer in layers(box) if layer.name == "process limit"]
    made = int(result.stdout.split("made")[1].split()[0])
    if limit.active:  # what the layer report claims is what the program meets
        assert "refused:" in result.stdout, result.stdout
        assert made < box.config.max_processes + 8  # (the cgroup allows the runner's own few)
    else:  # root with no pids cgroup: reported off, and the deadline still reaps them all
        assert "RLIMIT_NPROC does not bind root" in limit.detail
    only_the_zygote_is_left(box)


def test_file_size_and_descriptor_limits_bind(box):
    result = run(
        box,
        """
        import os
        try:
            with open("big", "wb") as f:
                f.write(b"x" * (64 << 20))
            print("wrote all")
        except OSError as exc:
            print("write refused:", exc.strerror)
        handles = []
        try:
            for _ in range(10_000):
                handles.append(open(os.devnull))
        except OSError as exc:
            print("open refused at", len(handles), exc.strerror)
        """,
    )
    assert "write refused: File too large" in result.stdout, (result.stdout, result.stderr)
    opened = int(result.stdout.split("open refused at")[1].split()[0])
    assert opened < box.config.open_files


def test_a_memory_bomb_fails_for_want_of_memory(box):
    result = run(box, "data = bytearray(8 * 1024 ** 3)\nprint('ALLOCATED')\n")
    assert "ALLOCATED" not in result.stdout
    assert "MemoryError" in result.stderr


def test_an_output_flood_is_cut_at_the_cap(box):
    result = run(box, "while True:\n    print('x' * 10000)\n")
    assert result.status == "output_limit"
    assert len(result.stdout) <= box.config.output_bytes


def test_an_infinite_loop_is_killed_at_its_deadline(box):
    result = run(box, "while True:\n    pass\n")
    assert result.status == "timeout"
    only_the_zygote_is_left(box)


def test_sleeping_grandchildren_do_not_outlive_their_run(box):
    result = run(
        box,
        """
        import os, time
        if os.fork() == 0:
            os.setsid()  # out of the task's process group
            if os.fork() == 0:
                time.sleep(300)
            os._exit(0)
        print("done")
        """,
    )
    assert result.stdout == "done\n"
    only_the_zygote_is_left(box)


def test_killing_the_parent_changes_nothing(box):
    starts = box.starts
    result = run(
        box,
        """
        import os, signal
        for pid in (os.getppid(), 1, -1):
            for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP, signal.SIGINT):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        print("still here")
        """,
    )
    assert result.stdout == "still here\n"
    assert box.starts == starts  # the same zygote answered the health check


def test_signal_tricks_do_not_escape_the_deadline(box):
    stopped = run(box, "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\nprint('x')\n")
    assert stopped.status == "timeout"
    ignoring = run(
        box,
        """
        import signal
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            pass
        """,
    )
    assert ignoring.status == "timeout"
    only_the_zygote_is_left(box)


def test_tracing_and_reading_other_processes_is_forbidden(box):
    if box.hello.get("seccomp_enforced") is not True:
        pytest.skip("seccomp is not available here")  # the other layers are tested above
    for call in ("ptrace(16, 1, 0, 0)", "process_vm_readv(1, 0, 0, 0, 0, 0)"):
        result = run(box, f"import ctypes\nprint(ctypes.CDLL(None).{call})\n")
        assert result.status == "violation", (call, result)


def test_function_calls_are_contained_the_same_way(box):
    program = box.load(
        textwrap.dedent(
            """
            import os, socket
            def f(kind):
                if kind == "net":
                    socket.socket()
                if kind == "fork":
                    os.fork()
                if kind == "loop":
                    while True:
                        pass
                if kind == "memory":
                    return len(bytearray(8 * 1024 ** 3))
                if kind == "huge":
                    return "x" * (1 << 20)
                if kind == "kill":
                    for pid in (os.getppid(), 1, -1):
                        try:
                            os.kill(pid, 9)
                        except OSError:
                            pass
                return kind
            """
        ),
        entry_point="f",
    )
    expected = {
        "net": "violation",
        "fork": "violation",
        "loop": "timeout",
        "memory": "memory",
        "huge": "output_limit",
        "kill": "ok",
    }
    if box.hello.get("seccomp_enforced") is not True:
        expected.update(net="raised", fork="ok")
    for kind, status in expected.items():
        result = program.call([kind], timeout_s=TIMEOUT_S)
        assert result.status == status, (kind, result)
    assert program.call(["fine"], timeout_s=5).value == "fine"
    program.close()


def _third_party() -> list[tuple[str, str]]:
    """``(sys.path entry, module)`` for third-party packages this machine's interpreter has
    where the sandbox could see them: pip and setuptools in a site directory when there, else
    the first package found in each, and the wheels kept for installing pip."""
    executable, prefix = _launch.interpreter()
    found = []
    for where in _launch.package_dirs(_launch.read_paths(executable, prefix)):
        names = sorted(os.listdir(where))
        wheels = [n for n in names if n.endswith(".whl")]
        found += [(os.path.join(where, w), w.split("-")[0]) for w in wheels]
        packages = [n for n in names if os.path.isfile(os.path.join(where, n, "__init__.py"))]
        preferred = [n for n in ("pip", "setuptools") if n in packages] or packages[:1]
        found += [(where, n) for n in preferred]
    return found


def test_third_party_packages_cannot_be_imported_only_the_standard_library(box):
    planted = _third_party()
    assert planted, "no third-party package on this machine to try"
    result = run(
        box,
        f"""
        import importlib, os, sys
        for entry, name in {planted!r}:
            sys.path.append(entry)
            try:
                importlib.import_module(name)
                print("IMPORTED", name, "from", entry)
            except ImportError:
                pass
            if os.path.isdir(entry) and os.listdir(entry):
                print("LISTED", entry)
        import ctypes, decimal, json, sqlite3
        print(json.dumps(str(decimal.Decimal(1) / 8)), sqlite3.connect(":memory:") is not None)
        """,
    )
    assert (result.status, result.stderr) == ("exited", ""), result
    assert "IMPORTED" not in result.stdout and "LISTED" not in result.stdout, result.stdout
    assert result.stdout.endswith('"0.125" True\n'), result.stdout
    assert box.hello["packages_hidden"] is True
