"""The response's patch: found in a response, read by git, held to the trust boundary.

Each hack below is a patch a red team would send against a real instance (marshmallow-1359,
tests/data/repo): it changes what judges the response rather than the code, and is refused with
its reason before anything runs; the real gold patches pass the boundary untouched.
"""

from __future__ import annotations

import pytest

from tests.graders.repo import ROWS
from truegrade.graders.repo import PatchFile, extract_patch, read_patch, read_task, refusal

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
