"""Running a task's tests in the sandbox, and reading what they did from an account no tested
process can write.

The construction (docs/repo.md argues it):

* **Two processes, and the tree is in only one.** A *keeper* (``python -I -S``: no environment
  variable, no site directory, the standard library only) unpacks the tree and starts the
  *runner*, a child in the tree's directory. The runner imports pytest and the environment's
  named plugins *before* the tree is importable, then appends the tree's directories to
  ``sys.path``, after the standard library and the environment, and runs the tests with
  ``--import-mode=append`` (pytest then appends, never prepends, the test directories too). So
  no name of the tree can stand for one the runner imports later: a module of ``_pytest`` is
  found through its package, never through ``sys.path``, and every top-level name is looked up
  in the standard library and the environment first. Nothing of the tree runs in the keeper.
* **pytest reads only the configuration the grader writes** (``-c``, from the base tree's own
  pytest section, with ``--rootdir`` and ``--confcutdir`` set): no configuration file of the
  tree, dotted or not, is read. Bytecode is never read from the tree: no ``.pyc`` file or
  ``__pycache__`` directory of it is sent (``BaseTree.overlay``), no patch may add one (the
  allow-list of ``refusal``), and nothing of the run writes one (``-B``).
* **The account travels on a channel the tested process never held.** The runner reports each
  test's outcome, as pytest reports it, on a pipe to the keeper; the keeper, once the runner has
  ended, kills every process left in the task's PID namespace (it is their reaper), and only
  then writes the account to *its own* standard output, a descriptor the runner never had. No
  path or descriptor of the account is in the runner's arguments, environment or globals; no
  file the tests can reach is read as a report; a process that outlives the runner is dead
  before the account is written. A runner that ends before pytest finished its session, that
  reports a test twice or one it never collected, or whose exit status contradicts what it
  reported, is recorded as such (``TestRun.anomalies``) and the verdict is a fail.

What the runner sets, and why: no plugin enters through an entry point (pytest's loader of
them is replaced before it runs, so no ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is needed), and no
``PYTEST_*`` variable is set while the tree's code runs (``PYTEST_VERSION`` removed before the
first conftest, ``PYTEST_CURRENT_TEST`` never set): code cannot learn from the environment that
it is under test; ``-p no:cacheprovider`` (nothing read from ``.pytest_cache``); ``HOME`` in the
scratch directory and a fixed hash seed (a run depends on nothing of the host).

What is left, and what answers it: the runner's process runs the patched code, so that code can
make the runner say anything about any test. Saying "passed" for the tests that matter without
saying it for the canaries needs telling the canaries from the real tests; that is what the
canaries are built to make impossible (``truegrade.graders.repo._canaries``).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from truegrade.sandbox import RunResult, Sandbox

__all__ = ["OUTCOMES", "TestRun", "TracedCall", "run_tests"]

OUTCOMES = ("passed", "failed", "skipped", "xfailed")
"""What a test can come to, as the runner reports it."""

_KEEPER = """\
import json, os, select, signal, subprocess, sys
job = json.loads(sys.argv[1].replace("@scratch@", json.dumps(os.getcwd())[1:-1]))
tree = job["tree"]
os.mkdir(tree)
if subprocess.call(["tar", "-x", "-f", "tree.tar", "-C", tree, "--no-same-owner"]) != 0:
    sys.exit("the tree could not be unpacked")
os.unlink("tree.tar")
reaper = False
try:
    import ctypes
    reaper = ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
except Exception:
    pass
records_in, records_out = os.pipe()
args = dict(job["args"], fd=records_out)
runner = subprocess.Popen(
    [sys.executable, "-B", os.path.abspath("runner.py"), json.dumps(args)],
    cwd=tree, env=job["env"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
    stderr=subprocess.STDOUT, pass_fds=(records_out,), start_new_session=True,
)
os.close(records_out)
log_fd = runner.stdout.fileno()
got = {log_fd: bytearray(), records_in: bytearray()}
caps = {log_fd: job["log_cap"], records_in: job["record_cap"]}
over = set()
live = set(got)
def take(fd):
    data = os.read(fd, 1 << 16)
    if not data:
        live.discard(fd)
        return
    got[fd] += data
    if len(got[fd]) > caps[fd]:
        if fd == records_in:
            over.add(fd)
        del got[fd][: len(got[fd]) - caps[fd]]
while live and runner.poll() is None:
    for fd in select.select(list(live), [], [], 0.2)[0]:
        take(fd)
status = runner.wait()
own = job["own_namespace"] and os.getppid() == 1
def children():
    found = []
    try:
        for tid in os.listdir("/proc/self/task"):
            with open("/proc/self/task/%s/children" % tid) as handle:
                found += [int(p) for p in handle.read().split()]
    except (OSError, ValueError):
        pass
    return found
for _ in range(10000):
    try:
        if own:
            os.kill(-1, signal.SIGKILL)
        else:
            os.killpg(runner.pid, signal.SIGKILL)
    except OSError:
        pass
    for pid in [] if own else children():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not reaper:
        break
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
while live:
    for fd in select.select(list(live), [], [], 1.0)[0] or list(live):
        take(fd)
tests, dup, errors, exits, collected, garbled, in_tree = {}, [], [], [], None, 0, False
calls = []
for line in bytes(got[records_in]).split(b"\\n"):
    if not line:
        continue
    try:
        rec = json.loads(line.decode("utf-8"))
    except ValueError:
        garbled += 1
        continue
    kind = rec[0] if isinstance(rec, list) and rec else None
    if kind == "test" and len(rec) == 3 and isinstance(rec[1], str) and rec[2] in job["outcomes"]:
        if rec[1] in tests:
            dup.append(rec[1])
        tests[rec[1]] = rec[2]
    elif kind == "collected" and len(rec) == 2 and isinstance(rec[1], list) and collected is None:
        collected = [str(n) for n in rec[1]]
    elif kind == "collect_error" and len(rec) == 2:
        errors.append(str(rec[1]))
    elif kind == "exit" and len(rec) == 2 and type(rec[1]) is int:
        exits.append(rec[1])
    elif kind == "runner_in_tree":
        in_tree = True
    elif (kind == "call" and len(rec) == 8 and isinstance(rec[6], dict)
          and isinstance(rec[7], bool) and all(isinstance(x, str) for x in rec[1:6])):
        calls.append(rec[1:])
    else:
        garbled += 1
anomalies = []
if over:
    anomalies.append("the runner's account ran past %d bytes" % job["record_cap"])
if garbled:
    anomalies.append("the runner's account held %d unreadable records" % garbled)
if dup:
    anomalies.append("tests reported more than once: " + ", ".join(sorted(set(dup))[:3]))
if len(exits) > 1:
    anomalies.append("the runner reported %d ends" % len(exits))
if exits and exits[0] != status:
    anomalies.append("the runner reported exit status %d but ended with %d" % (exits[0], status))
if collected is not None:
    known = set(collected)
    stray = [n for n in tests if n not in known]
    if stray:
        anomalies.append("tests reported that were never collected: " + ", ".join(stray[:3]))
    if exits and exits[0] in (0, 1):
        unseen = [n for n in collected if n not in tests]
        if unseen:
            anomalies.append("collected tests never reported: " + ", ".join(unseen[:3]))
elif tests:
    anomalies.append("tests reported with no collection")
wanted = job["wanted"]
asked = {}
def is_wanted(n):
    if n not in asked:
        asked[n] = any(n.startswith(w) for w in wanted)
    return asked[n]
account = {
    "tests": {n: o for n, o in tests.items() if is_wanted(n)},
    "calls": [c for c in calls if is_wanted(c[0])],
    "failed": sum(1 for o in tests.values() if o == "failed"),
    "collect_errors": errors[:20],
    "exit": exits[0] if len(exits) == 1 else None,
    "status": status,
    "anomalies": anomalies,
    "runner_in_tree": in_tree,
}
os.write(2, bytes(got[log_fd]))
sys.stdout.write(json.dumps(account))
sys.stdout.flush()
"""
"""The keeper: runs in the task's Python (3.6 and later) with ``-I -S``, from the scratch
directory. It never imports anything of the tree, the environment or the site; the account it
writes to its standard output is the only thing the host reads as outcomes."""

_RUNNER = """\
import json, os, sys
def install_trace(targets, tests, send, current):
    import functools, importlib.machinery, inspect, re, reprlib, threading
    wanted = dict((name, (rel, set(everywhere))) for name, rel, everywhere in targets)
    address = re.compile("0x[0-9a-fA-F]+")
    local = threading.local()
    seen = {}
    budget = [20000]
    shorten = reprlib.Repr()
    shorten.maxstring = shorten.maxother = shorten.maxlong = 240
    shorten.maxlist = shorten.maxtuple = shorten.maxdict = shorten.maxset = 24
    shorten.maxfrozenset = shorten.maxdeque = shorten.maxarray = 24
    shorten.maxlevel = 4
    sized = (list, tuple, dict, set, frozenset)
    def show(value):
        try:
            if isinstance(value, sized) and len(value) > 24:
                text = shorten.repr(value)
            else:
                text = repr(value)
                if len(text) > 480:
                    text = text[:240] + "..." + text[-240:]
        except Exception:
            text = "<unrepresentable %s>" % type_name(value)
        return address.sub("0x?", text)
    def type_name(value):
        kind = type(value)
        return "%s.%s" % (getattr(kind, "__module__", "?"), getattr(kind, "__qualname__", "?"))
    simple = (bool, int, float, complex, str, bytes)
    def state_of(obj, home, prefix, out, depth):
        try:
            items = sorted(vars(obj).items())
        except Exception:
            return
        for name, value in items:
            if name.startswith("_") or len(out) >= 32:
                continue
            if value is None or type(value) in simple:
                out[prefix + name] = show(value)
            elif depth and getattr(type(value), "__module__", None) == home:
                state_of(value, home, prefix + name + ".", out, depth - 1)
    def note(keys, key, core, message, after, direct):
        outcome = (core, message, tuple(sorted(after.items())))
        if outcome in keys[key][1] or len(keys[key][1]) >= 4:
            return
        keys[key][1].add(outcome)
        budget[0] -= 1
        send(["call", current[0], key[0], key[1], core, message, after, direct])
    def wrap(func, filename, method, everywhere):
        qualname = getattr(func, "__qualname__", func.__name__)
        home = getattr(func, "__module__", None)
        inside = not (qualname in everywhere)
        @functools.wraps(func)
        def traced(*a, **k):
            if getattr(local, "busy", False):
                return func(*a, **k)
            caller = sys._getframe(1).f_code.co_filename
            if inside and caller == filename:
                return func(*a, **k)
            direct = caller in tests
            test = seen.get(current[0])
            if test is None:
                test = seen[current[0]] = [{}, {}]
            keys = test[direct]
            if not direct and (budget[0] <= 0 or len(keys) >= 64):
                return func(*a, **k)
            if direct and len(keys) >= 256:
                return func(*a, **k)
            local.busy = True
            try:
                key = (qualname, show(a) + " " + show(sorted(k.items())))
                if key not in keys:
                    keys[key] = [0, set()]
                keys[key][0] += 1
                again = keys[key][0] > 2
            finally:
                local.busy = False
            if again:
                return func(*a, **k)
            try:
                result = func(*a, **k)
            except BaseException as exc:
                local.busy = True
                try:
                    note(keys, key, "raise " + type_name(exc), show(str(exc)), {}, direct)
                finally:
                    local.busy = False
                raise
            local.busy = True
            try:
                after = {}
                if method and a:
                    state_of(a[0], home, "", after, 1)
                shown = "return %s %s" % (type_name(result), show(result))
                note(keys, key, shown, "", after, direct)
            finally:
                local.busy = False
            return result
        return traced
    def owned(func, filename):
        code = getattr(func, "__code__", None)
        return code is not None and code.co_filename == filename
    def instrument_class(cls, filename, everywhere, depth, done):
        if id(cls) in done:
            return
        done.add(id(cls))
        for name, value in list(vars(cls).items()):
            if name.startswith("__") and name not in ("__init__", "__call__"):
                continue
            try:
                if inspect.isfunction(value) and owned(value, filename):
                    setattr(cls, name, wrap(value, filename, True, everywhere))
                elif isinstance(value, staticmethod) and owned(value.__func__, filename):
                    wrapped = wrap(value.__func__, filename, False, everywhere)
                    setattr(cls, name, staticmethod(wrapped))
                elif isinstance(value, classmethod) and owned(value.__func__, filename):
                    wrapped = wrap(value.__func__, filename, False, everywhere)
                    setattr(cls, name, classmethod(wrapped))
                elif isinstance(value, property) and owned(value.fget, filename):
                    wrapped = wrap(value.fget, filename, False, everywhere)
                    setattr(cls, name, property(wrapped, value.fset, value.fdel, value.__doc__))
                elif inspect.isclass(value) and depth < 2 and value.__module__ == cls.__module__:
                    instrument_class(value, filename, everywhere, depth + 1, done)
            except (AttributeError, TypeError, ValueError):
                pass
    def instrument(module, filename, everywhere):
        done = set()
        classes = set(q.split(".")[0] for q in everywhere if "." in q)
        for name, value in list(vars(module).items()):
            if inspect.isfunction(value) and owned(value, filename):
                setattr(module, name, wrap(value, filename, False, everywhere))
            elif inspect.isclass(value) and value.__module__ == module.__name__:
                if name in classes or not everywhere:
                    instrument_class(value, filename, everywhere, 0, done)
    class Loader(object):
        def __init__(self, inner, filename, everywhere):
            self.inner = inner
            self.filename = filename
            self.everywhere = everywhere
        def create_module(self, spec):
            return self.inner.create_module(spec)
        def exec_module(self, module):
            self.inner.exec_module(module)
            instrument(module, self.filename, self.everywhere)
        def __getattr__(self, name):
            return getattr(self.inner, name)
    root = os.path.realpath(os.getcwd())
    class Finder(object):
        def find_spec(self, fullname, path=None, target=None):
            if fullname not in wanted:
                return None
            rel, everywhere = wanted[fullname]
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.loader is None or not spec.origin:
                return None
            if os.path.realpath(spec.origin) != os.path.join(root, rel):
                return None
            spec.loader = Loader(spec.loader, spec.origin, everywhere)
            return spec
        def invalidate_caches(self):
            pass
    sys.meta_path.insert(0, Finder())
def main():
    del sys.path[0]
    args = json.loads(sys.argv.pop(1))
    sys.dont_write_bytecode = True
    import importlib
    try:
        import pytest
        in_tree = False
    except ImportError:
        sys.path.extend(args["path"])
        import pytest
        in_tree = True
    import _pytest.config
    import _pytest.runner
    # nothing of the run tells code that it is under test: no plugin is loaded by entry point
    # (without the variable that says so), and no PYTEST_* variable is set while tests run
    _pytest.config.PytestPluginManager.load_setuptools_entrypoints = lambda *a, **k: 0
    def no_plugins_to_mark(self, hook, *rest, **named):
        self.pluginmanager.rewrite_hook = hook
    _pytest.config.Config._mark_plugins_for_rewrite = no_plugins_to_mark
    _pytest.runner._update_current_test_var = lambda item, when: None
    for name in args["plugins"]:
        importlib.import_module(name)
    FD = args["fd"]
    CURRENT = [""]
    def send(record):
        data = (json.dumps(record) + "\\n").encode("utf-8")
        while data:
            data = data[os.write(FD, data):]
    class Account(object):
        def __init__(self):
            self.pending = {}
        @pytest.hookimpl(tryfirst=True)
        def pytest_load_initial_conftests(self, early_config, parser, args):
            os.environ.pop("PYTEST_VERSION", None)
        def pytest_collectreport(self, report):
            if report.failed:
                send(["collect_error", report.nodeid])
        def pytest_runtest_logstart(self, nodeid, location):
            CURRENT[0] = nodeid
        def pytest_runtest_logfinish(self, nodeid, location):
            CURRENT[0] = ""
        def pytest_collection_finish(self, session):
            send(["collected", [item.nodeid for item in session.items]])
        def pytest_runtest_logreport(self, report):
            if report.when == "teardown":
                outcome = self.pending.pop(report.nodeid, "failed")
                send(["test", report.nodeid, "failed" if report.failed else outcome])
            elif report.when == "call" or not report.passed:
                if hasattr(report, "wasxfail"):
                    outcome = "xfailed" if report.skipped else report.outcome
                else:
                    outcome = report.outcome
                self.pending[report.nodeid] = outcome
    class Rotation(object):
        def pytest_collection_modifyitems(self, session, config, items):
            k = args["rotate"] % len(items) if items else 0
            items[:] = items[k:] + items[:k]
    if in_tree:
        send(["runner_in_tree"])
    plugins = [Account()] + ([Rotation()] if args["rotate"] else [])
    if args.get("trace"):
        tests = set(os.path.join(os.getcwd(), f) for f in args["tests"])
        install_trace(args["trace"], tests, send, CURRENT)
    sys.path.extend(args["path"])
    os.environ["PYTHONPATH"] = os.pathsep.join(args["path"])
    code = int(pytest.main(args["argv"], plugins=plugins))
    send(["exit", code])
    sys.stdout.flush()
    sys.exit(code)
main()
"""
"""The runner: imports pytest and the named plugins while the tree is not importable, then
appends the tree's directories to ``sys.path`` (its own first entry, the
scratch directory, removed) and runs pytest with the account plugin; ``rotate`` turns the
collected tests (the audit's order check)."""

_NAIVE_RUNNER = """\
import importlib, json, os, subprocess, sys
tree = os.path.abspath(sys.argv[1])
path = [os.path.join(tree, d) for d in json.loads(sys.argv[2])]
os.mkdir(tree)
if subprocess.call(["tar", "-x", "-f", "tree.tar", "-C", tree, "--no-same-owner"]) != 0:
    sys.exit("the tree could not be unpacked")
os.unlink("tree.tar")
os.chdir(tree)
sys.argv = ["pytest"] + sys.argv[3:]
sys.path[0:1] = [tree] + path
os.environ["PYTHONPATH"] = os.pathsep.join(path)
sys.path_importer_cache.clear()
importlib.invalidate_caches()
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""
"""How SWE-bench-style harnesses run pytest (``python -m pytest`` from the tree's root, the
tree first on ``sys.path``, the outcomes only in the printed log): for the naive harness the
card measures, never for grading."""

_LOG_CAP = 256 << 10
_RECORD_CAP = 32 << 20


@dataclass(frozen=True)
class TracedCall:
    """One call into a traced module, from outside it, as the runner recorded it.

    ``arguments`` and the value in ``outcome`` are ``repr`` shortened (``reprlib``) with memory
    addresses blanked; ``outcome`` is ``return <type> <repr>`` or ``raise <type>``; ``message``
    the exception's text; ``state`` the public attributes of the instance a method was called
    on, after the call (and theirs, one level down); ``direct`` whether a test file made the
    call.
    """

    test: str
    function: str
    arguments: str
    outcome: str
    message: str
    state: tuple[tuple[str, str], ...] = ()
    direct: bool = False

    @staticmethod
    def valid(raw: Any) -> bool:
        return (
            isinstance(raw, list)
            and len(raw) == 7
            and all(isinstance(x, str) for x in raw[:5])
            and isinstance(raw[5], dict)
            and isinstance(raw[6], bool)
        )

    @classmethod
    def read(cls, raw: list[Any]) -> TracedCall:
        state = tuple(sorted((str(k), str(v)) for k, v in raw[5].items()))
        return cls(raw[0], raw[1], raw[2], raw[3], raw[4], state, raw[6])


@dataclass
class TestRun:
    """What one run of the tests came to, as the keeper accounted for it.

    Attributes:
        outcomes: Test id -> ``passed``, ``failed``, ``skipped`` or ``xfailed`` (``failed``
            covers errors in setup and teardown), for the ids the run was asked about (and the
            ids that start with one: parametrized and truncated ids).
        exit_code: pytest's exit status as the runner reported it (None: not reported, the
            runner ended before pytest returned).
        status: The runner process's own exit status, as the keeper saw it.
        failed: How many tests of the whole run failed.
        anomalies: What was wrong with the runner's account (a test reported twice, one never
            collected, an exit status that contradicts the report...): any is a fail.
        sandbox: The sandbox's account of the whole run (``exited``, ``cpu_limit``...).
        reported: Whether the keeper's account was read at all.
    """

    __test__ = False  # not a pytest class, whatever its name

    outcomes: dict[str, str] = field(default_factory=dict)
    exit_code: int | None = None
    status: int | None = None
    failed: int = 0
    anomalies: list[str] = field(default_factory=list)
    sandbox: RunResult | None = None
    reported: bool = False
    collection_errors: list[str] = field(default_factory=list)
    runner_in_tree: bool = False
    """The environment had no pytest: the runner is the tree's own (pytest's repository)."""
    calls: list[TracedCall] = field(default_factory=list)
    """Calls into the traced modules from outside them, during the wanted tests (``trace``)."""

    @property
    def output(self) -> str:
        """The end of the run's printed output (for the explanation; never for the verdict)."""
        return self.log[-4000:]

    @property
    def log(self) -> str:
        """What the tests printed (for the naive harness: everything the run printed)."""
        if self.sandbox is None:
            return ""
        if self.reported:
            return self.sandbox.stderr
        return self.sandbox.stdout + self.sandbox.stderr


def _read_account(text: str, run: TestRun) -> None:
    try:
        account = json.loads(text)
    except ValueError:
        return
    if not isinstance(account, dict) or not isinstance(account.get("tests"), dict):
        return
    run.outcomes = {str(k): str(v) for k, v in account["tests"].items() if v in OUTCOMES}
    exit_code, status = account.get("exit"), account.get("status")
    run.exit_code = exit_code if type(exit_code) is int else None
    run.status = status if type(status) is int else None
    run.failed = int(account.get("failed") or 0)
    run.anomalies = [str(a) for a in account.get("anomalies") or []]
    run.collection_errors = [str(e) for e in account.get("collect_errors") or []]
    run.runner_in_tree = account.get("runner_in_tree") is True
    run.calls = [TracedCall.read(c) for c in account.get("calls") or [] if TracedCall.valid(c)]
    run.reported = True


def run_tests(
    box: Sandbox,
    *,
    python: str,
    tree_tar: bytes,
    files: Sequence[str],
    path_dirs: Sequence[str],
    cpu_s: float,
    wall_s: float,
    plugins: Sequence[str] = (),
    rotate: int = 0,
    config: str = "[pytest]\n",
    wanted: Sequence[str] = (),
    log_only: bool = False,
    trace: Sequence[Sequence[Any]] = (),
) -> TestRun:
    """Run pytest on ``files`` of the packed tree with the venv's ``python``, in ``box``.

    ``path_dirs`` are the tree's directories put on ``sys.path`` (relative to its root);
    ``config`` the pytest configuration the grader wrote (``pytest_config``); ``wanted`` the
    test ids whose outcomes the account carries. ``log_only`` runs the tests as SWE-bench's
    harness does (``-rA``, plugins autoloaded, the tree first on ``sys.path``, no account:
    the outcomes are then only in the printed log, ``TestRun.log``). ``trace`` names modules
    (``[module name, path in the tree, [qualified names]]``) whose functions and methods are
    wrapped as they are imported, so each call into them from outside them, and every call of
    the named ones, is recorded (``TestRun.calls``) with its arguments and outcome: the
    differential check against the gold patch.
    """
    token = secrets.token_hex(8)
    # the scratch directory's path is the keeper's working directory, whatever the isolation
    # (``@scratch@`` is put in by the keeper): ``/tmp`` in the sandbox, a host directory without
    tree = f"@scratch@/t{token}"
    relative = [d.strip("/") for d in path_dirs if d not in ("", ".")]
    python_path = [f"{tree}/{d}" for d in relative] + [tree] * (len(relative) < len(path_dirs))
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",  # noqa: S108
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TZ": "UTC",
    }
    if log_only:
        dirs = [*relative, *[""] * (len(relative) < len(path_dirs))]
        argv = [python, "run.py", f"t{token}", json.dumps(dirs), "-rA", "-p", "no:cacheprovider"]
        argv += ["--", *files]
        sandbox_files = {"tree.tar": tree_tar, "run.py": _NAIVE_RUNNER.encode()}
        keep = ["run.py"]
    else:
        env["PYTHONNOUSERSITE"] = "1"
        pytest_argv = ["-c", f"@scratch@/g{token}.ini", f"--rootdir={tree}", f"--confcutdir={tree}"]
        pytest_argv += ["-p", "no:cacheprovider", "--import-mode=append", "-q", "--color=no"]
        pytest_argv += ["--tb=line"]  # a failure's reason in one line: the mutants fail
        for plugin in plugins:
            pytest_argv += ["-p", plugin]
        pytest_argv += ["--", *files]
        job: dict[str, Any] = {
            "tree": tree,
            "env": env,
            "args": {
                "argv": pytest_argv,
                "plugins": list(plugins),
                "path": python_path,
                "rotate": int(rotate),
                "trace": [list(t) for t in trace],
                "tests": list(files),
            },
            "own_namespace": box.sandboxed,
            "wanted": sorted(set(wanted)),
            "outcomes": list(OUTCOMES),
            "log_cap": _LOG_CAP,
            "record_cap": _RECORD_CAP,
        }
        argv = [python, "-I", "-S", "keeper.py", json.dumps(job)]
        sandbox_files = {
            "tree.tar": tree_tar,
            "keeper.py": _KEEPER.encode(),
            "runner.py": _RUNNER.encode(),
            f"g{token}.ini": config.encode("utf-8"),
        }
        keep = ["keeper.py"]  # the build must keep a file; the account is the keeper's stdout
    built = box.build(sandbox_files, argv, keep=keep, timeout_s=wall_s, cpu_s=cpu_s, env=env)
    run = TestRun(sandbox=built.build)
    if built.build.status == "exited" and not log_only:
        _read_account(built.build.stdout, run)
    return run
