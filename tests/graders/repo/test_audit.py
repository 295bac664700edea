"""Audits of a task's own claim, on a real instance (marshmallow-1359, tests/data/repo) and on
tasks derived from it with a defect planted: a test that depends on the order, a test the gold
patch cannot pass, lists that say the wrong tests fail. The audit must pass the real task and
name each planted defect."""

from __future__ import annotations

import json
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.graders.repo import ROWS
from truegrade.audit import audit_items
from truegrade.graders.repo import (
    RepoGrader,
    RepoTask,
    Snapshots,
    audit_task,
    impossible_task,
    read_task,
)

DATA = Path(__file__).parents[2] / "data" / "repo"
TASKS = {r["instance_id"]: read_task(r) for r in ROWS}
MARSHMALLOW = TASKS["marshmallow-code__marshmallow-1359"]
FIELDS = "tests/test_fields.py"
F2P = MARSHMALLOW.fail_to_pass[0]

GIT = pytest.mark.system_tool("git", package="git")
BWRAP = pytest.mark.system_tool("bwrap", package="bubblewrap")


@pytest.fixture(scope="module")
def grader() -> RepoGrader:
    return RepoGrader.from_options({"repos": [str(DATA)]})


def _base_lines(task: RepoTask, path: str) -> list[str]:
    with tarfile.open(DATA / task.instance_id / "base.tar.gz") as archive:
        member = archive.extractfile(path)
        assert member is not None
        return member.read().decode("utf-8").split("\n")


def _with_tests_on_top(task: RepoTask, code: str, **lists: tuple[str, ...]) -> RepoTask:
    """``task`` whose test patch also adds ``code`` to tests/test_fields.py before its first
    test (so the first test collected is the planted one), with the given test lists.

    The new hunk goes before the patch's own (git wants hunks in order), which then start
    ``len(code lines)`` lines further down the new file.
    """
    old = _base_lines(task, FIELDS)
    first = next(i for i, line in enumerate(old) if line.startswith("@pytest"))  # 0-based
    added = [*code.strip("\n").split("\n"), "", ""]
    before, after = old[first - 3 : first], old[first : first + 3]
    hunk = [f"@@ -{first - 2},6 +{first - 2},{6 + len(added)} @@"]
    hunk += [f" {x}" for x in before] + [f"+{x}" for x in added] + [f" {x}" for x in after]

    def shift(match: re.Match[str]) -> str:
        return f"@@ -{match.group(1)} +{int(match.group(2)) + len(added)}"

    lines = task.test_patch.split("\n")
    top = lines.index(f"+++ b/{FIELDS}") + 1
    rest = re.sub(r"@@ -(\S+) \+(\d+)", shift, "\n".join(lines[top:]))
    patch = "\n".join([*lines[:top], *hunk, rest])
    return task.model_copy(update={"test_patch": patch, **lists})


# -- the impossible task: text only ----------------------------------------------------------------


def test_each_real_task_s_impossible_twin_inverts_one_line_of_its_fail_to_pass_test():
    inverted = {
        "marshmallow-code__marshmallow-1359": (
            '+        assert schema.fields["foo"].inner.format == "iso8601"',
            '+        assert not (schema.fields["foo"].inner.format == "iso8601")',
        ),
        "pylint-dev__astroid-1268": (
            '+        assert nodes.Unknown().as_string() == "Unknown.Unknown()"',
            '+        assert not (nodes.Unknown().as_string() == "Unknown.Unknown()")',
        ),
        "pallets__flask-5014": (  # the body must now not raise
            "+    with pytest.raises(ValueError):",
            '+    with __import__("contextlib").suppress():',
        ),
    }
    for instance, (old, new) in inverted.items():
        task = TASKS[instance]
        twin = impossible_task(task)
        assert twin is not None and twin.instance_id == task.instance_id
        before, after = task.test_patch.split("\n"), twin.test_patch.split("\n")
        assert len(before) == len(after)
        assert [(a, b) for a, b in zip(before, after, strict=True) if a != b] == [(old, new)]
        assert (twin.fail_to_pass, twin.gold_patch) == (task.fail_to_pass, task.gold_patch)


@GIT
def test_the_impossible_twin_s_test_patch_applies_to_the_base_tree(tmp_path):
    twin = impossible_task(MARSHMALLOW)
    assert twin is not None
    Snapshots([DATA]).export(twin, tmp_path)
    done = subprocess.run(
        ["git", "apply", "--check", "-"], input=twin.test_patch.encode(), cwd=tmp_path, check=False
    )
    assert done.returncode == 0


def _one_test(body: str, name: str = "test_a") -> RepoTask:
    lines = body.strip("\n").split("\n")
    patch = (
        f"diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1,0 +1,{len(lines)} @@\n"
        + "".join(f"+{line}\n" for line in lines)
    )
    return read_task(
        {
            "instance_id": "o__r-1",
            "repo": "o/r",
            "base_commit": "ab12",
            "test_patch": patch,
            "FAIL_TO_PASS": [f"t.py::T::{name}[x y"],  # a class, a parameter cut at a space
            "PASS_TO_PASS": [],
        }
    )


def _inverted(task: RepoTask) -> list[str]:
    twin = impossible_task(task)
    if twin is None:
        return []
    pairs = zip(task.test_patch.split("\n"), twin.test_patch.split("\n"), strict=True)
    return [b[1:].strip() for a, b in pairs if a != b]


@pytest.mark.parametrize(
    ("body", "inverted"),
    [
        (  # unittest's assertions become their opposites
            "class T:\n    def test_a(self):\n        self.assertEqual(\n            f(), 1)",
            ["self.assertNotEqual("],
        ),
        (  # a message stays outside the inverted test
            "def test_a():\n    assert f() in {1, 2}, 'why'  # note",
            ["assert not (f() in {1, 2}), 'why'  # note"],
        ),
        (  # a multi-line assert cannot be inverted line by line: the next one is
            "def test_a():\n    assert (\n        f() == 1\n    )\n    assert g()",
            ["assert not (g())"],
        ),
        (  # a nested helper may never run; ``as excinfo`` is read later either way, and
            # what raises stops its block before the block's assert
            "def test_a():\n    def check(x):\n        assert x\n"
            "    with pytest.raises(E) as excinfo:\n        assert f() == 1\n"
            "    assert excinfo.value",
            ["assert not (excinfo.value)"],
        ),
        (  # another test's assertion is not this test's
            "def test_b():\n    assert f()\ndef test_a():\n    f()",
            [],
        ),
    ],
    ids=["unittest", "message", "multi-line", "nested-and-excinfo", "other-test"],
)
def test_the_inverted_line_is_one_the_test_itself_runs(body, inverted):
    assert _inverted(_one_test(body)) == inverted


def test_a_test_whose_body_only_the_hunk_header_names_is_still_found():
    patch = (
        "diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n"
        "@@ -10,2 +10,3 @@ def test_a(self):\n"
        "         x = f()\n+        assert x == 3\n         return\n"
    )
    task = _one_test("def test_b(): pass").model_copy(update={"test_patch": patch})
    assert _inverted(task) == ["assert not (x == 3)"]


# -- the audit: real runs --------------------------------------------------------------------------


@GIT
@BWRAP
def test_the_real_task_passes_every_check(grader):
    audit = audit_task(MARSHMALLOW, grader=grader, runs=2)
    assert [(f.check, f.ok, f.skipped) for f in audit.findings] == [
        ("base_fails_f2p", True, False),
        ("base_passes_p2p", True, False),
        ("task_needs_network", True, False),
        ("empty_not_resolved", True, False),
        ("gold_resolves", True, False),
        ("flaky", True, False),
        ("gold_fails", True, False),
        ("mutated_f2p", True, False),
        ("weak_tests", True, False),
    ], audit.problems
    assert audit.ok and audit.runs == 2
    assert "every one of 1 mutants" in audit.finding("weak_tests").detail
    mutated = audit.finding("mutated_f2p")
    assert mutated.tests == (F2P,) and "fails the inverted" in mutated.detail
    assert "assert not (" in mutated.detail


ORDER_DEPENDENT = """
RAN = []


def test_planted_marks():
    RAN.append(1)


def test_planted_needs_the_mark():
    assert RAN
"""


@GIT
@BWRAP
def test_a_test_that_needs_another_to_run_first_is_flaky(grader):
    # collected first and second; rotated by one, the second runs first and fails
    planted = [f"{FIELDS}::test_planted_marks", f"{FIELDS}::test_planted_needs_the_mark"]
    task = _with_tests_on_top(
        MARSHMALLOW, ORDER_DEPENDENT, pass_to_pass=(*MARSHMALLOW.pass_to_pass, *planted)
    )
    audit = audit_task(task, grader=grader, runs=2, mutate=False)
    assert {f.check for f in audit.problems} == {"flaky", "gold_resolves"}, audit.findings
    flaky = audit.finding("flaky")
    assert flaky.tests == (planted[1],) and "passed, failed" in flaky.detail
    assert "1 of 2 runs" in audit.finding("gold_resolves").detail
    assert audit.finding("base_passes_p2p").ok  # unrotated, the base passes both


def _never_passes() -> tuple[str, RepoTask]:
    """marshmallow-1359 with a FAIL_TO_PASS test planted that no patch can pass."""
    never = f"{FIELDS}::test_planted_never"
    task = _with_tests_on_top(
        MARSHMALLOW,
        "def test_planted_never():\n    assert False",
        fail_to_pass=(*MARSHMALLOW.fail_to_pass, never),
    )
    return never, task


@GIT
@BWRAP
def test_a_fail_to_pass_test_the_gold_patch_cannot_pass_is_named(grader):
    never, task = _never_passes()
    audit = audit_task(task, grader=grader, runs=1, mutate=False)
    assert {f.check for f in audit.problems} == {"gold_fails", "gold_resolves"}, audit.findings
    assert audit.finding("gold_fails").tests == (never,)
    assert audit.finding("base_fails_f2p").ok  # failing at base is what it should do


@GIT
@BWRAP
def test_lists_that_name_the_wrong_tests_are_caught_at_base(grader):
    passing = MARSHMALLOW.pass_to_pass[0]
    swapped = MARSHMALLOW.model_copy(
        update={"fail_to_pass": (passing,), "pass_to_pass": (F2P, *MARSHMALLOW.pass_to_pass[1:])}
    )
    audit = audit_task(swapped, grader=grader, runs=1, mutate=False)
    assert audit.finding("base_fails_f2p").tests == (passing,)
    assert audit.finding("base_passes_p2p").tests == (F2P,)
    assert f"{F2P} (failed)" in audit.finding("base_passes_p2p").detail
    assert audit.finding("empty_not_resolved").ok  # F2P, now a PASS_TO_PASS test, fails

    solved = MARSHMALLOW.model_copy(
        update={"fail_to_pass": (passing,), "pass_to_pass": MARSHMALLOW.pass_to_pass[1:]}
    )
    audit = audit_task(solved, grader=grader, runs=1, mutate=False)
    assert not audit.finding("empty_not_resolved").ok
    assert "reward doing nothing" in audit.finding("empty_not_resolved").detail


@GIT
@BWRAP
def test_a_fail_to_pass_test_that_never_ran_is_not_counted_as_failing(grader):
    # an id that names no test: missing from every report, the gold patch's included
    ghost = F2P.rsplit("::", 1)[0] + "::test_no_such_test"
    named = MARSHMALLOW.model_copy(update={"fail_to_pass": (F2P, ghost)})
    audit = audit_task(named, grader=grader, runs=1, mutate=False)
    base = audit.finding("base_fails_f2p")
    assert not base.ok and base.tests == (ghost,) and "never ran" in base.detail
    assert not audit.ok and ghost in audit.finding("gold_fails").tests


@GIT
@BWRAP
def test_without_a_gold_patch_its_checks_are_skipped_not_passed(grader):
    audit = audit_task(MARSHMALLOW.model_copy(update={"gold_patch": ""}), grader=grader, runs=1)
    skipped = [f.check for f in audit.findings if f.skipped]
    assert skipped == ["gold_resolves", "flaky", "gold_fails", "mutated_f2p", "weak_tests"]
    assert audit.ok  # the base checks ran and passed


@GIT
@BWRAP
def test_tests_that_accept_a_wrong_fix_are_weak_with_the_fix_they_accept(grader):
    # the task's own test, loosened: the format must be set, not be the schema's
    loose = MARSHMALLOW.test_patch.replace('.format == "iso8601"', ".format is not None")
    assert loose != MARSHMALLOW.test_patch
    task = MARSHMALLOW.model_copy(update={"test_patch": loose})
    audit = audit_task(task, grader=grader, runs=1, mutate=False)
    weak = audit.finding("weak_tests")
    assert not weak.ok and not audit.ok, weak
    # the wrong fix: "and" for "or" falls back to the field's default format, not the schema's
    assert len(weak.mutants) == 1 and "'and getattr(self.root.opts" in weak.mutants[0]
    assert "1 of 1 mutants of the gold patch still resolve" in weak.detail


def test_runs_must_be_at_least_one(grader):
    with pytest.raises(ValueError, match="at least 1"):
        audit_task(MARSHMALLOW, grader=grader, runs=0)


@GIT
@BWRAP
def test_the_item_audit_flags_a_task_the_gold_patch_cannot_pass(grader):
    # what `truegrade audit` and the card's soundness run for repository rows
    _, task = _never_passes()
    sound = ROWS[0]
    broken = {
        **sound,
        "id": "planted",
        "group": "planted",
        "test_patch": task.test_patch,
        "FAIL_TO_PASS": json.dumps(list(task.fail_to_pass)),
    }
    report = audit_items(grader, [sound, broken], checks=["reference", "tests"], reruns=2)
    assert report.kind == "repo" and report.items_total == 2
    assert [item.id for item in report.items] == ["planted"]
    names = {flag.name for flag in report.items[0].flags}
    assert {"task_gold_fails", "task_gold_resolves", "reference_fails"} <= names, names


@GIT
@BWRAP
def test_a_second_grader_of_the_same_tasks_reuses_their_audits(grader, monkeypatch):
    # a card of two graders of the same rows (the demo's): the task's claim is run once
    from truegrade.audit import _repo

    first = audit_items(grader, [ROWS[0]], checks=["tests"], reruns=2)
    monkeypatch.setattr(_repo, "audit_task", lambda *a, **k: pytest.fail("audited again"))
    harness = RepoGrader.from_options({"repos": [str(DATA)], "harness": "swebench"})
    again = audit_items(harness, [ROWS[0]], checks=["tests"], reruns=2)
    assert again.items == first.items == []
    # what decides an audit changed (the sandbox's CPU budget): it runs again
    other = RepoGrader.from_options({"repos": [str(DATA)], "cpu_s": 299})
    with pytest.raises(pytest.fail.Exception, match="audited again"):
        audit_items(other, [ROWS[0]], checks=["tests"], reruns=2)
