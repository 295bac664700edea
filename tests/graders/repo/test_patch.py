"""The response's patch: found in a response, read by git, held to the trust boundary.

Each hack below is a patch a red team would send against a real instance (marshmallow-1359,
tests/data/repo): it changes what judges the response rather than the code, and is refused with
its reason before anything runs; the real gold patches pass the boundary untouched.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.graders.repo import ROWS
from truegrade.graders.repo import (
    PatchFile,
    TreeShape,
    extract_patch,
    read_patch,
    read_task,
    refusal,
)

pytestmark = pytest.mark.system_tool("git", package="git")

TASKS = [read_task(r) for r in ROWS]


def _new_file(path: str, body: str, mode: str = "100644") -> str:
    lines = body.splitlines()
    hunk = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode {mode}\nindex 0000000..1111111\n"
        f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{hunk}"
    )


HOOK = """import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""
EDIT_TEST = "\n".join(
    [
        "diff --git a/tests/test_fields.py b/tests/test_fields.py",
        "--- a/tests/test_fields.py",
        "+++ b/tests/test_fields.py",
        "@@ -1,3 +1,4 @@",
        " import pytest",
        '+pytest.skip("later", allow_module_level=True)',
        " ",
        " from marshmallow import (",
        "",
    ]
)
RENAME_TEST = """diff --git a/tests/test_fields.py b/src/marshmallow/helpers_fields.py
similarity index 100%
rename from tests/test_fields.py
rename to src/marshmallow/helpers_fields.py
"""

HACKS = {
    "a conftest.py hook that rewrites outcomes": (
        _new_file("conftest.py", HOOK),
        "conftest.py configures how tests are collected or run",
    ),
    "a conftest.py in the source tree": (
        _new_file("src/marshmallow/conftest.py", HOOK),
        "conftest.py configures",
    ),
    "an edited test file": (EDIT_TEST, "tests/test_fields.py is a test file"),
    "a test file renamed away": (RENAME_TEST, "tests/test_fields.py is a test file"),
    "a .pth start-up hook": (
        _new_file("src/zz_hook.pth", "import marshmallow._hook"),
        "runs when Python starts",
    ),
    "a sitecustomize": (_new_file("sitecustomize.py", "import os"), "runs when Python starts"),
    "pytest options in pyproject.toml": (
        _new_file("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-p no:x'"),
        "pyproject.toml configures",
    ),
    "a pytest11 entry point in setup.cfg": (
        _new_file("setup.cfg", "[options.entry_points]\npytest11 = x = marshmallow.x"),
        "setup.cfg configures",
    ),
    "a symlink to the tests": (_new_file("src/link", "../tests", "120000"), "symbolic link"),
    "a path out of the tree": (_new_file("../outside.py", "x = 1"), "outside the working tree"),
    "a file in .git": (_new_file(".git/hooks/post-checkout", "echo"), "outside the working tree"),
    "a test module beside the source": (
        _new_file("src/marshmallow/test_cheat.py", "def test_x(): pass"),
        "is a test file",
    ),
}


SHAPE = TreeShape.of(
    [
        "src/marshmallow/__init__.py",
        "src/marshmallow/fields.py",
        "tests/test_fields.py",
        "setup.py",
    ],
    roots=["src", "."],
)


def _binary_patch(tmp_path) -> str:
    """A git binary hunk that changes a source, as ``git diff --binary`` writes one."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    source = tmp_path / "src/marshmallow/fields.py"
    source.parent.mkdir(parents=True)
    source.write_text("x = 1\n")
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True)
    source.write_bytes(b"\x00\x01 bytes")
    done = subprocess.run(
        ["git", "diff", "--binary"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert "GIT binary patch" in done.stdout, done.stderr
    return done.stdout


ALLOWED_ONLY = {
    "a dotted pytest configuration": (_new_file(".pytest.ini", "[pytest]"), "not a Python source"),
    "bytecode beside a source": (
        _new_file("src/marshmallow/__pycache__/fields.cpython-39.pyc", "x"),
        "not a Python source",
    ),
    "a native module": (_new_file("src/marshmallow/_speedups.so", "x"), "not a Python source"),
    "a shadowing pytest.py at the root": (_new_file("pytest.py", "x = 1"), "new top-level module"),
    "a standard library name under src": (_new_file("src/shlex.py", "x = 1"), "new top-level"),
    "a new top-level package": (_new_file("src/pytest/__init__.py", "x = 1"), "new top-level"),
}


@pytest.mark.parametrize("hack", list(ALLOWED_ONLY))
def test_what_is_not_on_the_allow_list_is_refused_whatever_its_name(hack):
    patch, reason = ALLOWED_ONLY[hack]
    reading = read_patch(patch)
    assert reading.problem is None and reading.files, reading
    reasons = [refusal(f, frozenset(), SHAPE) for f in reading.files]
    assert any(r is not None and reason in r for r in reasons), reasons


def test_a_binary_hunk_is_refused_even_on_a_source(tmp_path):
    reading = read_patch(_binary_patch(tmp_path))
    assert reading.problem is None and reading.files[0].binary, reading
    assert "binary hunk" in str(refusal(reading.files[0], frozenset(), SHAPE))


def test_sources_and_documentation_inside_the_project_are_allowed():
    for patch in (
        _new_file("src/marshmallow/helpers2.py", "x = 1"),  # a new module of the package
        _new_file("src/marshmallow/sub/__init__.py", "x = 1"),  # a new subpackage
        _new_file("docs/changelog.rst", "Fixed."),
        _new_file("NOTES.md", "Fixed."),
    ):
        reading = read_patch(patch)
        assert [refusal(f, frozenset(), SHAPE) for f in reading.files] == [None], patch


@pytest.mark.parametrize("hack", list(HACKS))
def test_every_hack_is_refused_with_its_reason(hack):
    patch, reason = HACKS[hack]
    reading = read_patch(patch)
    assert reading.problem is None and reading.files, reading
    reasons = [refusal(f) for f in reading.files]
    assert any(r is not None and reason in r for r in reasons), reasons


@pytest.mark.parametrize("task", TASKS, ids=[t.instance_id for t in TASKS])
def test_gold_patches_pass_the_boundary_and_test_patches_do_not(task):
    gold = read_patch(task.gold_patch)
    assert gold.problem is None and [refusal(f) for f in gold.files] == [None]
    tests = read_patch(task.test_patch)
    assert tests.problem is None and all(refusal(f) for f in tests.files)


def test_planting_a_file_of_the_task_s_test_patch_is_refused():
    # a response that writes the file the test patch will add decides what that file holds
    task_files = frozenset(f.path for f in read_patch(TASKS[2].test_patch).files)
    planted = PatchFile("tests/test_blueprints.py")
    assert "belongs to the task's test patch" in str(refusal(planted, task_files))


def test_what_git_cannot_read_is_a_problem_not_files():
    assert read_patch("").problem == "the patch is empty"
    corrupt = TASKS[0].gold_patch.replace("@@ -1114,7 +1114,7 @@", "@@ -1114,9 +1114,7 @@")
    reading = read_patch(corrupt)
    assert reading.files == () and reading.problem and "git cannot read" in reading.problem


def test_the_patch_is_found_where_responses_put_it():
    gold = TASKS[0].gold_patch
    assert extract_patch(gold) == gold  # a model_patch field: the diff itself
    said = f"The root schema holds the format.\n\n```diff\n{gold}```\nDone."
    assert extract_patch(said) == gold
    # a draft then the final answer: the last diff block is the answer
    draft = "```diff\ndiff --git a/x.py b/x.py\n```\n"
    assert extract_patch(draft + said) == gold
    assert extract_patch(f"Here it is:\n{gold}") == gold
    assert extract_patch("I could not find the bug.") is None
