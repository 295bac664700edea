"""What the whole suite shares: tests that need a program from the system, and a CI rule.

A test that runs a system program (bubblewrap, Chromium, taskset) says so with
``@pytest.mark.system_tool("bwrap", package="bubblewrap")`` (on the test, or on a fixture's
``pytest.param``), so a machine without it skips the test with the package to install instead of
erroring at setup. ``scripts/system-deps.sh`` installs or names them all before ``make test``.

A skip can hide a broken install, so under ``TRUEGRADE_REQUIRE_SANDBOX=1`` (``.ci/run`` sets it)
a skipped test that needs a system tool, or any skipped test of the sandbox's layers
(``tests/sandbox``: a layer the kernel lacks, seccomp not enforced), fails the run instead: pytest
reports it as an error of the phase that skipped (usually setup), with the skip's reason.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # tests/test_system_tools.py runs this file on a small suite


def _consoles_follow_columns() -> None:
    """Create the CLI's consoles now, with no ``COLUMNS`` set, as a command run from a pipe does:
    rich then reads ``COLUMNS`` when it prints, so each test's ``env={"COLUMNS": ...}`` applies.
    Created first inside a test that sets it, they would keep that width for every later test in
    the process, and the outcome of a test would depend on which ran before it."""
    saved = os.environ.pop("COLUMNS", None)
    try:
        import truegrade.cli._common  # noqa: F401
    finally:
        if saved is not None:
            os.environ["COLUMNS"] = saved


_consoles_follow_columns()

REQUIRE_ENV = "TRUEGRADE_REQUIRE_SANDBOX"
SANDBOX_TESTS = Path(__file__).parent / "sandbox"


def _missing_tool(item: pytest.Item) -> str | None:
    for mark in item.iter_markers("system_tool"):
        if not any(shutil.which(command) for command in mark.args):
            package = mark.kwargs["package"]
            return (
                f"needs {' or '.join(mark.args)} (Debian package {package}): "
                f"apt-get install {package}, or scripts/system-deps.sh as root"
            )
    return None


def _must_run(item: pytest.Item) -> bool:
    return item.get_closest_marker("system_tool") is not None or item.path.is_relative_to(
        SANDBOX_TESTS
    )


SLOW_LIST = Path(__file__).with_name("slow.txt")


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` the tests ``slow.txt`` lists; a listed test of a file collected whole that
    is no longer there is an error, so the list cannot rot."""
    if not SLOW_LIST.exists():  # this conftest copied alone, into a pytester directory
        return
    listed = {
        line.strip()
        for line in SLOW_LIST.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    collected = {item.nodeid for item in items}
    whole = not any("::" in arg for arg in config.args)  # not one test picked out of a file
    files = {nodeid.split("::")[0] for nodeid in collected} if whole else set()
    gone = sorted(n for n in listed - collected if n.split("::")[0] in files)
    if gone:
        raise pytest.UsageError(f"{SLOW_LIST.name} lists tests that do not exist: {gone[:5]}")
    for item in items:
        if item.nodeid in listed:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    reason = _missing_tool(item)
    if reason is not None:
        pytest.skip(reason)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if (
        report.skipped
        and not hasattr(report, "wasxfail")
        and os.environ.get(REQUIRE_ENV) == "1"
        and _must_run(item)
    ):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under {REQUIRE_ENV}=1, which makes that a failure: {reason}"
    return report
