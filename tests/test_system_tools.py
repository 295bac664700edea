"""The system packages: scripts/system-deps.sh names what is missing in one line, and a test that
needs a missing program skips with the package to install, or fails where CI requires it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "system-deps.sh"
HIDDEN = {"bwrap", "chromium", "chromium-browser", "google-chrome", "taskset", "apt-get"}


@pytest.fixture(scope="module")
def bare_path(tmp_path_factory) -> str:
    """A PATH with every program of this machine but bubblewrap, Chromium, taskset and apt-get,
    so the script sees a machine without them (and cannot install them)."""
    bin_dir = tmp_path_factory.mktemp("bin")
    for directory in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        if not os.path.isdir(directory):
            continue
        with os.scandir(directory) as entries:
            for entry in entries:
                target = bin_dir / entry.name
                # lexists: a program already linked from an earlier directory may be a dangling
                # link (a package's alias to a compiler that is not installed); skip, never relink.
                if entry.name not in HIDDEN and not os.path.lexists(target):
                    target.symlink_to(entry.path)
    return str(bin_dir)


def deps(goal: str, path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), goal],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_missing_packages_stop_make_test_with_one_line_naming_them(bare_path):
    done = deps("test", bare_path)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("system-deps: make test needs bubblewrap chromium util-linux,")
    assert "(Debian names: bubblewrap chromium util-linux)" in lines[0]


def test_the_demo_needs_none_of_the_suites_tools(bare_path):
    done = deps("demo", bare_path)
    assert (done.returncode, done.stderr) == (0, "")


def test_an_unknown_goal_is_refused():
    done = deps("bench", os.environ["PATH"])
    assert done.returncode == 2
    assert "usage:" in done.stderr


NEEDS_A_MISSING_TOOL = """
import pytest

@pytest.mark.system_tool("truegrade-no-such-program", package="truegrade-no-such-package")
def test_needs_it():
    pass
"""


@pytest.fixture
def suite(pytester):
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makeini(
        "[pytest]\naddopts = -ra --strict-markers\n"
        "markers = system_tool(*commands, package): a system program\n"
    )
    pytester.makepyfile(test_tool=NEEDS_A_MISSING_TOOL)
    return pytester


def test_a_missing_tool_is_a_skip_that_names_the_package(suite, monkeypatch):
    monkeypatch.delenv("TRUEGRADE_REQUIRE_SANDBOX", raising=False)
    result = suite.runpytest()
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*apt-get install truegrade-no-such-package*"])


def test_ci_turns_that_skip_into_a_failure(suite, monkeypatch):
    monkeypatch.setenv("TRUEGRADE_REQUIRE_SANDBOX", "1")
    result = suite.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*TRUEGRADE_REQUIRE_SANDBOX=1*truegrade-no-such-package*"])
