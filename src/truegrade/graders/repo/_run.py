"""Running a task's tests in the sandbox, and reading what they did from a JUnit report.

The run: the packed tree and a short runner go into the sandbox's empty scratch directory; the
runner (trusted, started before any of the tree's code) unpacks the tree, runs pytest on the
test files in the task's read-only venv, and records pytest's exit status. Outcomes are read from
the JUnit report pytest writes *outside* the tree, under a random name: never from the printed
log, where a test can print ``PASSED`` lines of its own.

What the run sets, and why:

* ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``: no plugin enters through an entry point (the env's
  ``plugins`` are loaded by name);
* ``-p no:cacheprovider``: nothing is read from or written to ``.pytest_cache`` (a patch could
  plant one to choose what runs);
* ``-o junit_family=xunit1``: the report names each test's file, so ids are rebuilt exactly;
* ``PYTHONDONTWRITEBYTECODE=1``, ``HOME`` in the scratch directory, a fixed hash seed: a run
  leaves nothing behind and does not depend on the host.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

import defusedxml.ElementTree as SafeET  # the report is written by hostile code

from truegrade.sandbox import RunResult, Sandbox

__all__ = ["TestRun", "parse_junit", "run_tests"]

_RUNNER = """\
import importlib, os, subprocess, sys
tree, report, status = sys.argv[1], sys.argv[2], sys.argv[3]
os.mkdir(tree)
if subprocess.call(["tar", "-x", "-f", "tree.tar", "-C", tree, "--no-same-owner"]) != 0:
    sys.exit("the tree could not be unpacked")
os.unlink("tree.tar")
os.chdir(tree)
sys.argv = ["pytest"] + sys.argv[4:]
sys.path[0] = tree  # as python -m pytest run from the tree's root
sys.path_importer_cache.clear()
importlib.invalidate_caches()
import pytest
code = pytest.main(sys.argv[1:])
with open(status, "w") as handle:
    handle.write(str(int(code)))
"""
"""Runs in the task's Python (3.6 and later), from the scratch directory: unpacks the tree (with
tar, which refuses names outside it), then runs pytest in its own process, as ``python -m
pytest`` from the tree's root would (one interpreter start, not two)."""

_ORDER_PLUGIN = """\
ROTATE = {rotate}
def pytest_collection_modifyitems(session, config, items):
    if items and ROTATE % len(items):
        k = ROTATE % len(items)
        items[:] = items[k:] + items[:k]
"""
"""The audit's rotation of the collected tests (a plugin outside the tree, loaded by name)."""


@dataclass
class TestRun:
    """What one run of the tests came to.

    Attributes:
        outcomes: Test id -> ``passed``, ``failed``, ``skipped`` or ``xfailed``, as the report
            says (``failed`` covers errors in setup and teardown).
        exit_code: pytest's exit status, as the runner recorded it (None: not recorded).
        sandbox: The sandbox's account of the whole run (``exited``, ``cpu_limit``...).
        reported: Whether a report was found at all.
    """

    __test__ = False  # not a pytest class, whatever its name

    outcomes: dict[str, str] = field(default_factory=dict)
    exit_code: int | None = None
    sandbox: RunResult | None = None
    reported: bool = False
    collection_errors: list[str] = field(default_factory=list)

    @property
    def output(self) -> str:
        """The end of the run's printed output (for the explanation; never for the verdict)."""
        return self.log[-4000:]

    @property
    def log(self) -> str:
        """Everything the run printed."""
        if self.sandbox is None:
            return ""
        return self.sandbox.stdout + self.sandbox.stderr


def _dotted(path: str) -> str:
    return re.sub(r"\.py$", "", path).replace("/", ".")


def _node_id(case: dict[str, str], files: Sequence[str]) -> str:
    """A test's pytest id from its JUnit ``classname``/``name`` (pytest builds the classname from
    the id: the file's path dotted, then the classes), checked against the files that ran."""
    classname, name = case.get("classname", ""), case.get("name", "")
    for path in sorted(files, key=len, reverse=True):
        dotted = _dotted(path)
        if classname == dotted:
            return f"{path}::{name}"
        if classname.startswith(dotted + "."):
            classes = classname[len(dotted) + 1 :].replace(".", "::")
            return f"{path}::{classes}::{name}"
    path = case.get("file", "")
    dotted = _dotted(path)
    rest = classname[len(dotted) + 1 :] if classname.startswith(dotted + ".") else ""
    return "::".join(p for p in (path, rest.replace(".", "::"), name) if p)


def parse_junit(data: bytes, files: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Outcomes by test id, and the modules that failed to collect, from a JUnit report.

    Raises:
        ValueError: the report is not well-formed XML (or holds entities: it is refused).
    """
    try:
        root = SafeET.fromstring(data)
    except Exception as exc:  # defusedxml's and expat's errors alike
        raise ValueError(f"the JUnit report is unreadable: {exc}") from None
    outcomes: dict[str, str] = {}
    broken: list[str] = []
    for case in root.iter("testcase"):
        attrs = {k: str(v) for k, v in case.attrib.items()}
        kinds = {child.tag for child in case}
        skipped = case.find("skipped")
        if "failure" in kinds or "error" in kinds:
            outcome = "failed"
        elif skipped is not None:
            xfail = str(skipped.get("type", "")) == "pytest.xfail"
            outcome = "xfailed" if xfail else "skipped"
        else:
            outcome = "passed"
        if not attrs.get("classname") and outcome == "failed":  # a module that did not collect
            broken.append(attrs.get("name", ""))
            continue
        node = _node_id(attrs, files)
        if outcomes.get(node) not in ("failed",):  # an error in teardown keeps the failure
            outcomes[node] = outcome
    return outcomes, broken


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
    log_only: bool = False,
) -> TestRun:
    """Run pytest on ``files`` of the packed tree with the venv's ``python``, in ``box``.

    ``path_dirs`` are the tree's directories put on ``sys.path`` (relative to its root).
    ``log_only`` runs the tests as SWE-bench's harness does (``-rA``, plugins autoloaded, no
    report: the outcomes are then only in the printed log, ``TestRun.output``).
    """
    token = secrets.token_hex(8)
    tree = f"/tmp/t{token}"  # noqa: S108 - the sandbox's own scratch directory
    report, status = f"r{token}.xml", f"s{token}.status"
    argv = [python, "run.py", tree, f"/tmp/{report}", f"/tmp/{status}"]  # noqa: S108
    if log_only:
        argv += ["-rA", "-p", "no:cacheprovider"]
    else:
        argv += ["-p", "no:cacheprovider", "-o", "junit_family=xunit1"]
        argv += [f"--junitxml=/tmp/{report}", "--color=no", "-q"]
    sandbox_files = {"tree.tar": tree_tar, "run.py": _RUNNER.encode()}
    for plugin in plugins:
        argv += ["-p", plugin]
    if rotate:
        sandbox_files[f"o{token}.py"] = _ORDER_PLUGIN.format(rotate=int(rotate)).encode()
        argv += ["-p", f"o{token}"]
    argv += ["--", *files]
    python_path = [tree if d in ("", ".") else f"{tree}/{d.strip('/')}" for d in path_dirs]
    if rotate:
        python_path.append("/tmp")  # noqa: S108 - where the order plugin is
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",  # noqa: S108
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": ":".join(python_path),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TZ": "UTC",
    }
    if not log_only:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    built = box.build(
        sandbox_files, argv, keep=[report, status], timeout_s=wall_s, cpu_s=cpu_s, env=env
    )
    run = TestRun(sandbox=built.build)
    if not built.ok:
        return run
    kept = {name: data for name, _, data in built.files()}
    if status in kept:
        text = kept[status].decode("ascii", "replace").strip()
        run.exit_code = int(text) if re.fullmatch(r"-?\d{1,4}", text) else None
    if report in kept:
        try:
            run.outcomes, run.collection_errors = parse_junit(kept[report], files)
            run.reported = True
        except ValueError:
            run.reported = False
    return run
