"""The differential check: a patch that resolves the task's tests is compared with the gold patch
on the calls those tests (and the issue's code) make into the code the gold patch changes.

The wrong fixes below are written by hand against the real instances, one per way a fix goes
wrong; each is first shown resolving the task's own tests (the weakness is real), then judged
by the default grader. The right ones (the gold patch, and correct fixes written another way)
must come out as they did.
"""

from __future__ import annotations

import difflib

import pytest

from tests.graders.repo import DATA, ROWS
from tests.graders.repo.conftest import NEEDS
from truegrade.graders.repo import RepoFlag, RepoGrader, audit_task, judge_patch, read_task
from truegrade.graders.repo._differential import (
    GoldTrace,
    changed_functions,
    compare_with_gold,
    issue_module,
    issue_snippets,
    traced_modules,
)
from truegrade.graders.repo._run import TracedCall

MARSHMALLOW, ASTROID, FLASK = (read_task(r) for r in ROWS)
GIT = pytest.mark.system_tool("git", package="git")


# -- the pieces, without a sandbox ----------------------------------------------------------------

SOURCE = """\
import os


class Box:
    size = 1

    def grow(self, by):
        self.size += by
        return self.size

    class Inner:
        def ping(self):
            return "pong"


def helper(x):
    def nested():
        return x

    return nested()
"""


@pytest.mark.parametrize(
    ("lines", "names"),
    [
        ({9}, ["Box.grow"]),
        ({13}, ["Box.Inner.ping"]),
        ({19}, ["helper"]),  # a nested function is its outer one
        ({1, 5}, []),  # module and class bodies are no function
        ({9, 20}, ["Box.grow", "helper"]),
    ],
)
def test_the_functions_a_patch_changes_are_named_by_their_qualified_names(lines, names):
    assert changed_functions(SOURCE, lines) == names


def test_broken_source_changes_no_function():
    assert changed_functions("def f(:\n", {1}) == []


@GIT
def test_the_modules_the_gold_patches_change_are_traced_under_each_import_directory():
    grader = RepoGrader.from_options({"repos": [str(DATA)]})
    found = {
        t.instance_id: traced_modules(t.gold_patch, ["src", "."], grader.snapshots.base(t))
        for t in (MARSHMALLOW, ASTROID, FLASK)
    }
    [inner, outer] = found[MARSHMALLOW.instance_id]
    assert (inner.module, inner.path) == ("marshmallow.fields", "src/marshmallow/fields.py")
    assert outer.module == "src.marshmallow.fields"
    assert inner.changed == ("DateTime._bind_to_schema",)
    [astroid] = found[ASTROID.instance_id]
    assert astroid.module == "astroid.nodes.as_string"
    # the new method, and nothing for the import it adds at module level
    assert astroid.changed == ("AsStringVisitor.visit_unknown",)
    assert found[FLASK.instance_id][0].changed == ("Blueprint.__init__",)


def test_the_issue_s_code_blocks_are_its_inputs():
    issue = (
        "It breaks:\n\n```python\nfrom pkg import f\nf(1)\n```\n\n"
        "```\nTraceback (most recent call last):\n  File x\nValueError: no\n```\n\n"
        "```pycon\n>>> import pkg\n>>> pkg.g(\n...     2)\n3\n```\n\n"
        "```bash\npip install pkg\n```\n\n```\nTrue\n```\n\n```python\nnot python(\n```\n"
    )
    assert issue_snippets(issue) == ["from pkg import f\nf(1)\n", "import pkg\npkg.g(\n    2)\n"]
    assert [issue_snippets(t.problem_statement) for t in (ASTROID, FLASK)] == [
        ["import astroid\nastroid.nodes.Unknown().as_string()\n"],
        [],  # the flask issue has no code
    ]
    module = issue_module(["raise SystemExit(3)\n", "x = 1\n"])
    space: dict[str, object] = {"__file__": "t.py"}
    exec(compile(module, "t.py", "exec"), space)
    assert callable(space["test_issue_0"]) and callable(space["test_issue_1"])
    space["test_issue_0"]()  # a snippet that exits or raises does not end the run


def _call(test, function, outcome, *, args="(1,)", message="", state=(), direct=False):
    return TracedCall(test, function, args, outcome, message, tuple(state), direct)


def test_calls_that_come_out_differently_between_gold_runs_are_left_out():
    a = _call("t::x", "f", "return builtins.int 1")
    b = _call("t::x", "f", "return builtins.int 2")
    c = _call("t::x", "g", "return builtins.int 3")
    d = _call("t::y", "g", "return builtins.int 3")
    gold = GoldTrace.from_runs([[a, c, d], [b, c]])
    assert set(gold.outcomes) == {("t::x", "g", "(1,)", False)}
    assert gold.unstable == 2  # f differs between the runs; g in t::y was seen once


def test_a_different_value_type_or_state_diverges_and_a_message_only_warns():
    ok = _call("t::x", "f", "return builtins.str 'a'", state=[("fmt", "'iso'"), ("n", "1")])
    gold = GoldTrace.from_runs([[ok], [ok]])
    assert not compare_with_gold(gold, [ok]).diverges
    same_text = _call("t::x", "f", "return pkg.AlwaysEqual 'a'", state=ok.state)
    assert compare_with_gold(gold, [same_text]).diverges
    other_state = _call("t::x", "f", ok.outcome, state=[("fmt", "'iso8601'"), ("n", "1")])
    found = compare_with_gold(gold, [other_state])
    assert found.diverges and "left .fmt = 'iso8601' where the gold patch left 'iso'" in (
        found.describe()
    )
    # attributes only one side has are a way of writing the fix, not behaviour
    more = _call("t::x", "f", ok.outcome, state=[("fmt", "'iso'"), ("cache", "{}")])
    assert not compare_with_gold(gold, [more]).diverges
    raised = _call("t::x", "f", "raise builtins.ValueError", message="'bad'")
    gold = GoldTrace.from_runs([[raised], [raised]])
    reworded = _call("t::x", "f", "raise builtins.ValueError", message="'wrong'")
    found = compare_with_gold(gold, [reworded])
    assert not found.diverges and found.messages
    subclass = _call("t::x", "f", "raise pkg.LenientError", message="'bad'")
    assert compare_with_gold(gold, [subclass]).diverges


def test_calls_of_the_failing_tests_must_be_seen_again():
    direct = _call("t::x", "f", "return builtins.int 1", direct=True)
    boundary = _call("t::x", "Cls.__call__", "return builtins.int 1")
    changed = _call("t::x", "Cls.visit_new", "return builtins.int 1")
    other = _call("t::other", "g", "return builtins.int 1", direct=True)
    gold = GoldTrace.from_runs([[direct, boundary, changed, other]] * 2)
    everything = [direct, boundary, changed, other]
    assert not compare_with_gold(gold, everything, ["t::x"], ["Cls.visit_new"]).diverges
    # a function the gold patch adds may be missing from another correct fix; tests that do
    # not specify the fix may call other things
    fine = [direct, boundary]
    assert not compare_with_gold(gold, fine, ["t::x"], ["Cls.visit_new"]).diverges
    for hidden in (direct, boundary):
        left = [c for c in everything if c is not hidden]
        found = compare_with_gold(gold, left, ["t::x"], ["Cls.visit_new"])
        assert found.diverges and "no such call was seen" in found.describe()
    found = compare_with_gold(gold, [], ["t::x"])
    assert found.unseen and found.diverges


# -- on the real instances ------------------------------------------------------------------------

SANDBOXED = [*NEEDS, pytest.mark.slow]


def sandboxed(test):
    for mark in SANDBOXED:
        test = mark(test)
    return test


def _edit(grader, task, edits):
    """A patch that makes each edit ``(path, old, new)``: ``old`` (once in the file) replaced
    with ``new``, or with ``old`` None, ``new`` appended."""
    by_path: dict[str, list[tuple[str | None, str]]] = {}
    for path, old, new in edits:
        by_path.setdefault(path, []).append((old, new))
    out = ""
    for path, changes in by_path.items():
        text = grader.snapshots.base(task).file(path).decode()
        after = text
        for old, new in changes:
            if old is None:
                after += new
            else:
                assert after.count(old) == 1, old
                after = after.replace(old, new)
        diff = difflib.unified_diff(
            text.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}"
        )
        out += f"diff --git a/{path} b/{path}\n" + "".join(diff)
    return out


FORMAT = """\
            self.format
            or getattr(schema.opts, self.SCHEMA_OPTS_VAR_NAME)
            or self.DEFAULT_FORMAT"""
FIXED = FORMAT.replace("schema.opts", "self.root.opts")
FIELDS = "src/marshmallow/fields.py"
VISITOR = """\
    def visit_evaluatedobject(self, node):
        return node.original.accept(self)
"""
AS_STRING = "astroid/nodes/as_string.py"
VISIT_UNKNOWN = "\n    def visit_unknown(self, node):\n        return str(node)\n"
EMPTY = """        if "." in name:"""
BLUEPRINTS = "src/flask/blueprints.py"

WRONG = {
    # the fix falls back to another default than the field's: the test's schema sets a format,
    # the issue's does not
    "marshmallow: another default": (
        MARSHMALLOW,
        [(FIELDS, FORMAT, FIXED.replace("or self.DEFAULT_FORMAT", 'or "iso8601"'))],
    ),
    # the test's `pytest.raises(ValueError)` accepts a subclass that is not the error the
    # library documents
    "flask: a lenient exception type": (
        FLASK,
        [
            (BLUEPRINTS, EMPTY, "        if not name:\n            raise _Empty(name)\n\n" + EMPTY),
            (BLUEPRINTS, None, "\n\nclass _Empty(ValueError):\n    pass\n"),
        ],
    ),
    # the fix is right in the visitor, but the changed module's functions are put back
    # unwrapped once the package is imported: nothing of it can be compared
    "astroid: the comparison taken away": (
        ASTROID,
        [
            (AS_STRING, VISITOR, VISITOR + VISIT_UNKNOWN),
            (
                "astroid/__init__.py",
                None,
                "\n"
                + """\
from astroid.nodes import as_string as _m
for _k, _v in list(vars(_m.AsStringVisitor).items()):
    if hasattr(_v, "__wrapped__"):
        setattr(_m.AsStringVisitor, _k, _v.__wrapped__)
""",
            ),
        ],
    ),
}
RIGHT = {
    # the same fix, written another way
    "marshmallow: the root's options by hand": (
        MARSHMALLOW,
        [(FIELDS, FORMAT, FORMAT.replace("schema.opts", 'getattr(schema, "root", schema).opts'))],
    ),
    "astroid: the method returns the text": (
        ASTROID,
        [(AS_STRING, VISITOR, VISITOR + VISIT_UNKNOWN.replace("str(node)", "'Unknown.Unknown()'"))],
    ),
    "flask: the check after the dot's": (
        FLASK,
        [
            (
                BLUEPRINTS,
                EMPTY,
                "        if not len(name):\n"
                "            raise ValueError(\"'name' may not be empty.\")\n\n" + EMPTY,
            )
        ],
    ),
}


def _judge(grader, task, patch, differential):
    return judge_patch(
        task,
        patch,
        env=grader.environment(task),
        snapshots=grader.snapshots,
        settings=grader.settings,
        differential=differential,
    )


@sandboxed
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_the_tests_accept_is_a_fail(name, hardened):
    task, edits = WRONG[name]
    patch = _edit(hardened, task, edits)
    accepted = _judge(hardened, task, patch, "off")
    assert accepted.passed, accepted.explanation  # the weakness is real
    judged = _judge(hardened, task, patch, "fail")
    assert not judged.passed and RepoFlag.DIVERGES_FROM_GOLD in judged.flags, judged.explanation
    assert "behaves unlike the gold patch" in judged.explanation
    flagged = _judge(hardened, task, patch, "flag")
    assert flagged.passed and RepoFlag.DIVERGES_FROM_GOLD in flagged.flags


@sandboxed
@pytest.mark.parametrize("name", sorted(RIGHT))
def test_a_right_fix_written_another_way_is_not_held_against_the_gold_patch(name, hardened):
    task, edits = RIGHT[name]
    judged = _judge(hardened, task, _edit(hardened, task, edits), "fail")
    assert judged.passed, judged.explanation
    assert RepoFlag.DIVERGES_FROM_GOLD not in judged.flags


@sandboxed
@pytest.mark.parametrize("row", ROWS, ids=[r["instance_id"] for r in ROWS])
def test_the_gold_patch_never_diverges_from_itself(row, hardened):
    task = read_task(row)
    for _ in range(2):  # its own record is made on the first, and read on the second
        judged = _judge(hardened, task, task.gold_patch, "fail")
        assert judged.passed, judged.explanation
        assert not {RepoFlag.DIVERGES_FROM_GOLD, RepoFlag.MESSAGE_DIFFERS_FROM_GOLD} & set(
            judged.flags
        )


@sandboxed
def test_a_reworded_message_is_a_warning_not_a_fail(hardened):
    # the test's only check is the exception's type: a wrong message passes it
    edits = [
        (
            BLUEPRINTS,
            EMPTY,
            "        if not name:\n            raise ValueError('dots')\n\n" + EMPTY,
        )
    ]
    judged = _judge(hardened, FLASK, _edit(hardened, FLASK, edits), "fail")
    assert judged.passed and RepoFlag.MESSAGE_DIFFERS_FROM_GOLD in judged.flags
    assert "the gold patch's message is" in judged.explanation


@sandboxed
def test_the_grader_fails_a_wrong_fix_by_default_and_flags_it_when_asked(hardened):
    task, edits = WRONG["marshmallow: another default"]
    row = {**ROWS[0], "model_patch": _edit(hardened, task, edits)}
    grade = hardened.grade(row)
    assert not grade.passed and grade.score == 0.0
    assert RepoFlag.DIVERGES_FROM_GOLD in grade.flags
    lenient = RepoGrader.from_options({"repos": [str(DATA)], "differential": "flag"})
    grade = lenient.grade(row)
    assert grade.passed and RepoFlag.DIVERGES_FROM_GOLD in grade.flags
    off = RepoGrader.from_options({"repos": [str(DATA)], "differential": "off"})
    grade = off.grade(row)
    assert grade.passed and RepoFlag.DIVERGES_FROM_GOLD not in grade.flags


@sandboxed
def test_the_audit_says_which_surviving_mutants_the_grader_still_fails(hardened):
    # the task's own test, loosened: the format must be set, not be the schema's
    loose = MARSHMALLOW.test_patch.replace('.format == "iso8601"', ".format is not None")
    task = MARSHMALLOW.model_copy(update={"test_patch": loose})
    weak = audit_task(task, grader=hardened, runs=1, mutate=False).finding("weak_tests")
    assert not weak.ok and len(weak.mutants) == 1
    assert weak.diverging == weak.mutants
    assert "the differential check tells 1 of them from the gold patch" in weak.detail
