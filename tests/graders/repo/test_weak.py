"""Wrong fixes made from the right one: the gold patches' mutants apply where the gold patch does,
each differs from it in one line or one hunk, and the same seed gives the same ones."""

from __future__ import annotations

import pytest

from tests.graders.repo import DATA, ROWS
from truegrade.graders.repo import RepoGrader, gold_mutants, read_patch, read_task
from truegrade.graders.repo._tree import apply_patch, workspace

pytestmark = pytest.mark.system_tool("git", package="git")

IDS = [r["instance_id"] for r in ROWS]


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_every_mutant_applies_to_the_base_tree_and_differs_in_one_place(row):
    task = read_task(row)
    grader = RepoGrader.from_options({"repos": [str(DATA)]})
    base = grader.snapshots.base(task)
    mutants = gold_mutants(task.gold_patch, limit=20, seed=task.instance_id)
    assert mutants
    gold = task.gold_patch.splitlines()
    for mutant in mutants:
        assert read_patch(mutant.patch).problem is None, mutant.describe()
        with workspace() as tree:
            base.extract(tree, [f.path for f in read_patch(task.gold_patch).files])
            assert apply_patch(tree, mutant.patch) is None, mutant.describe()
        lines = mutant.patch.splitlines()
        if mutant.how == "partial":
            assert len(lines) < len(gold)
        else:
            changed = [(a, b) for a, b in zip(gold, lines, strict=True) if a != b]
            assert len(changed) == 1 and changed[0][0].startswith("+"), mutant.describe()
    again = gold_mutants(task.gold_patch, limit=20, seed=task.instance_id)
    assert [m.patch for m in again] == [m.patch for m in mutants]


PATCH = """diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,3 +1,6 @@
 def check(name, size):
+    if not name or size > 10:
+        raise ValueError("bad")
+    total = size + 1
     return name
"""


def test_the_kinds_of_wrong_fix():
    hows = {m.new.strip(): m.how for m in gold_mutants(PATCH, limit=50)}
    assert hows["if not (not name or size > 10):"] == "negated"
    assert hows["if not name and size > 10:"] == "boolean"
    assert hows["if not name or size <= 10:"] == "operator"
    assert hows["if not name or size > 11:"] == "constant"
    assert hows["pass"] == "dropped"
    assert hows["total = size + 2"] == "constant"
    # a string's inside is never changed
    raising = [m for m in gold_mutants(PATCH, limit=50) if "raise" in m.old and m.how != "dropped"]
    assert all('"bad"' in m.new for m in raising)
    assert len(gold_mutants(PATCH, limit=3)) == 3
