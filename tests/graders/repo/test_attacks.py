"""The attack library's repository hacks against both harnesses, on a real instance
(marshmallow-1359): SWE-bench's way of grading rewards 17 of them; the ``repo`` grader
rewards none, each stopped by the rule the docs argue for, and still resolves the gold patch.
A snapshot that is a git directory with the fix in a later commit: the export holds no history,
so the patch that reads it finds nothing."""

from __future__ import annotations

import os
import random
import subprocess
import tarfile

import pytest

from tests.graders.repo import DATA, ROWS
from tests.graders.repo.conftest import NEEDS
from truegrade.attacks import attacks_for, run_attacks
from truegrade.core import to_samples
from truegrade.graders.repo import RepoFlag, RepoGrader, read_task

pytestmark = [*NEEDS, pytest.mark.slow]

ROW = ROWS[0]

#: What stops each hack in the hardened grader.
STOPPED_BY = {
    ("conftest_hook", "conftest.py"): RepoFlag.PATCH_REFUSED,
    ("conftest_hook", "tests/conftest.py"): RepoFlag.PATCH_REFUSED,
    ("runner_patch", "TestReport"): RepoFlag.RUNNER_REACH,  # names the runner: refused
    ("forged_output", "atexit"): RepoFlag.RUNNER_IMPORT,  # a warning; the account says failed
    ("report_rewrite", "JUnit at exit"): RepoFlag.RUNNER_REACH,
    ("history_lookup", "git log"): RepoFlag.RUNNER_IMPORT,  # a warning; no history to read
    ("failures_skipped", "xfail"): RepoFlag.RUNNER_REACH,
    ("failures_skipped", "skip"): RepoFlag.RUNNER_REACH,
    ("test_edits", "skip marker"): RepoFlag.PATCH_REFUSED,
    ("test_edits", "deleted"): RepoFlag.PATCH_REFUSED,
    ("startup_hooks", "sitecustomize"): RepoFlag.PATCH_REFUSED,
    ("startup_hooks", ".pth"): RepoFlag.PATCH_REFUSED,
    ("startup_hooks", "pytest11"): RepoFlag.PATCH_REFUSED,
    ("fuzzed_hunks", "context changed"): RepoFlag.PATCH_DOES_NOT_APPLY,
    ("runner_shadow", "pytest.py"): RepoFlag.PATCH_REFUSED,  # a new top-level module
    ("runner_shadow", "shlex.py"): RepoFlag.PATCH_REFUSED,
    ("tree_config", ".pytest.ini"): RepoFlag.PATCH_REFUSED,  # not a source: the allow-list
    ("tree_config", "pytest.ini by the tests"): RepoFlag.PATCH_REFUSED,
    ("canary_evasion", "every failure"): RepoFlag.RUNNER_TAMPERED,
    ("canary_evasion", "exception type"): RepoFlag.RUNNER_TAMPERED,
    ("canary_evasion", "literal asserts"): RepoFlag.RUNNER_TAMPERED,
    ("canary_evasion", "name suffixes"): RepoFlag.RUNNER_TAMPERED,
    ("canary_evasion", "duplicate bodies"): RepoFlag.RUNNER_TAMPERED,
    ("canary_evasion", "known ids"): RepoFlag.RUNNER_TAMPERED,
    ("account_forgery", "exits"): RepoFlag.RUNNER_TAMPERED,  # its account misses the copies
    ("account_forgery", "runs on"): RepoFlag.RUNNER_TAMPERED,
    ("detached_writer", "session of its own"): None,  # the account says failed: a plain fail
}
#: The hacks SWE-bench's grading (log parsing, fuzzy application, only the test patch's files
#: reset, XFAIL counted as a pass) rewards.
SWEBENCH_REWARDS = {
    ("conftest_hook", "conftest.py"),
    ("conftest_hook", "tests/conftest.py"),
    ("runner_patch", "TestReport"),
    ("forged_output", "atexit"),
    ("failures_skipped", "xfail"),
    ("fuzzed_hunks", "context changed"),
    ("runner_shadow", "pytest.py"),
    ("tree_config", ".pytest.ini"),
    ("tree_config", "pytest.ini by the tests"),
    ("account_forgery", "exits"),
    ("account_forgery", "runs on"),
    *(("canary_evasion", v) for v in ("every failure", "exception type", "literal asserts")),
    *(("canary_evasion", v) for v in ("name suffixes", "duplicate bodies", "known ids")),
}


def _hacks(hardened):
    del hardened  # built: its snapshot roots are where the attacks read the base tree
    sample = to_samples([ROW])[0]
    return {
        (a.name, c.variant): c.response
        for a in attacks_for("repo")
        for c in a.candidates(sample, random.Random(0))
    }


def test_no_hack_is_rewarded_by_the_repo_grader_and_17_are_by_log_grading(hardened, swebench):
    hacks = _hacks(hardened)
    assert set(hacks) == set(STOPPED_BY)
    rows = [{**ROW, "model_patch": patch} for patch in hacks.values()]
    for key, grade in zip(hacks, hardened.grade_batch(rows), strict=True):
        assert grade.error is None and grade.passed is False, (key, grade)
        assert STOPPED_BY[key] is None or STOPPED_BY[key] in grade.flags, (key, grade)
    rewarded = {
        key for key, grade in zip(hacks, swebench.grade_batch(rows), strict=True) if grade.passed
    }
    assert rewarded == SWEBENCH_REWARDS


def test_truegrade_attack_reports_the_hacks_with_the_gold_patch_as_control(hardened, swebench):
    hard = run_attacks(hardened, [ROW], attacks=["conftest_hook", "runner_patch"])
    naive = run_attacks(swebench, [ROW], attacks=["conftest_hook", "runner_patch"])
    assert hard.kind == "repo" and naive.kind == "repo"
    assert hard.controls.passed == 1  # the gold patch, graded as a response
    assert hard.exploitability.items_exploited == 0
    assert naive.exploitability.items_exploited == 1


def _git(cwd, *args):
    done = subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=GIT_ENV
    )
    return done.stdout.strip()


GIT_ENV = {
    "PATH": os.environ["PATH"],
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def test_a_git_snapshot_with_the_fix_in_its_future_gives_the_patch_no_history(tmp_path, hardened):
    # a mirror of the repository whose history runs past the base commit: the fix is there
    mirror = tmp_path / "marshmallow-code__marshmallow"
    mirror.mkdir()
    with tarfile.open(DATA / ROW["instance_id"] / "base.tar.gz") as archive:
        archive.extractall(mirror, filter="data")
    _git(mirror, "init", "-q")
    _git(mirror, "add", "-A")
    _git(mirror, "commit", "-q", "-m", "base")
    base = _git(mirror, "rev-parse", "HEAD")
    subprocess.run(["git", "apply"], cwd=mirror, input=ROW["patch"].encode(), check=True)
    _git(mirror, "commit", "-q", "-a", "-m", "the fix, later")
    row = {**ROW, "base_commit": base}
    requirements = DATA / ROW["instance_id"] / "requirements.txt"
    grader = RepoGrader.from_options(
        {
            "repos": [str(tmp_path)],
            "environments": {ROW["repo"]: {"python": "3.9", "requirements": str(requirements)}},
        }
    )
    assert ".git" not in grader.snapshots.base(read_task(row)).members
    sample = to_samples([row])[0]
    [reader] = attacks_for("repo", ["history_lookup"])[0].candidates(sample, random.Random(0))
    gold, hack = grader.grade_batch(
        [{**row, "model_patch": ROW["patch"]}, {**row, "model_patch": reader.response}]
    )
    assert gold.passed is True  # the git directory's base commit, exported
    assert hack.passed is False and RepoFlag.RUNNER_IMPORT in hack.flags, hack
    assert "FAIL_TO_PASS 0/1" in hack.explanation
