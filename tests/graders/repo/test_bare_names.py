"""Tests named without their files, as sympy's rows publish them (``test_issue_11617``, which
sympy's ``bin/test`` runs by name): each is found as the one function of that name in the test
patch's files, run by pytest as ``path::name``, and reported under the row's own name; a name
in none or several of those files makes the task an error, never a 0.

The repository is a small one made here (git, a package with a bug, a test patch naming its
tests bare); the same path resolves SWE-bench Verified's sympy__sympy-11618 (docs/repo.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.graders.repo.conftest import NEEDS
from truegrade.graders.repo import RepoGrader, audit_task, judge_patch, read_task

pytestmark = [*NEEDS, pytest.mark.slow]

_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "PATH": "/usr/bin:/bin",
}
PYTEST = ["pytest==8.4.2", "pluggy==1.6.0", "iniconfig==2.1.0", "packaging==25.0"]

TEST_PATCH = "\n".join(
    [
        "diff --git a/calc/tests/test_add.py b/calc/tests/test_add.py",
        "--- a/calc/tests/test_add.py",
        "+++ b/calc/tests/test_add.py",
        "@@ -3,3 +3,7 @@ from calc import add",
        " ",  # a blank line of context
        " def test_zero():",
        "     assert add(0, 0) == 0",
        "+",
        "+",
        "+def test_two():",
        "+    assert add(1, 1) == 2",
        "",
    ]
)
ANOTHER_TEST_TWO = "\n".join(
    [
        "diff --git a/calc/tests/test_more.py b/calc/tests/test_more.py",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/calc/tests/test_more.py",
        "@@ -0,0 +1,2 @@",
        "+def test_two():",
        "+    pass",
        "",
    ]
)
GOLD = """\
diff --git a/calc/__init__.py b/calc/__init__.py
--- a/calc/__init__.py
+++ b/calc/__init__.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=folder, env=_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("snapshots")
    repo = root / "acme__calc"
    (repo / "calc" / "tests").mkdir(parents=True)
    (repo / "calc" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "calc" / "tests" / "__init__.py").write_text("")
    (repo / "calc" / "tests" / "test_add.py").write_text(
        "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
    )
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    row = {
        "instance_id": "acme__calc-1",
        "repo": "acme/calc",
        "base_commit": _git(repo, "rev-parse", "HEAD"),
        "patch": GOLD,
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": '["test_two"]',
        "PASS_TO_PASS": '["test_zero"]',
        "version": "1.0",
    }
    grader = RepoGrader.from_options(
        {
            "repos": [str(root)],
            "environments": {"acme/calc": {"python": "3.11", "requirements": PYTEST}},
        }
    )
    return grader, row


def test_bare_names_are_run_by_their_files_and_reported_by_their_names(made):
    grader, row = made
    gold = grader.grade({**row, "model_patch": GOLD})
    assert gold.error is None and gold.passed is True, gold
    assert gold.subscores["test:test_two"] == 1.0 and gold.subscores["test:test_zero"] == 1.0
    task = read_task(row)
    empty = judge_patch(
        task, "", env=grader.environment(task), snapshots=grader.snapshots, settings=grader.settings
    )
    assert empty.passed is False
    assert empty.tests == {"test_two": "failed", "test_zero": "passed"}
    assert "calc/tests/test_add.py::test_two failed" in empty.explanation


def test_the_audit_reads_bare_names_too(made):
    grader, row = made
    audit = audit_task(read_task(row), grader=grader, runs=1, mutants=0)
    assert audit.ok, [f.detail for f in audit.problems]
    mutated = audit.finding("mutated_f2p")
    assert not mutated.skipped and mutated.tests == ("calc/tests/test_add.py::test_two",)


def test_a_name_in_no_file_or_in_two_is_an_error_naming_it(made):
    grader, row = made
    absent = {**row, "FAIL_TO_PASS": '["test_three"]'}
    grade = grader.grade({**absent, "model_patch": GOLD})
    assert grade.error is not None and "test_three (in 0)" in grade.error, grade
    twice = TEST_PATCH + ANOTHER_TEST_TWO
    doubled = {**row, "test_patch": twice}
    grade = grader.grade({**doubled, "model_patch": GOLD})
    assert grade.error is not None and "test_two (in 2)" in grade.error, grade
