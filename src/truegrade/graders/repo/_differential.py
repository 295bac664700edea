"""The differential check: a patch that resolves the task's tests, compared with the gold patch on
what those same tests do to the code the gold patch changes.

A task's tests are a loose specification: a patch can make them pass while the code they
exercise behaves differently from the reference fix (a ``pytest.raises`` that a metaclass
satisfies, a ``str`` whose ``==`` is always true, a wrong error type the test never looks at).
So, with the task's own tests and the code blocks of its issue (``issue_snippets``) as the
inputs, the grader records what crosses the *boundary* of each module the gold patch changes:
every call made from outside the module into one of its functions, or into a method of a class
holding a change (every class when the change is outside any function), and every call of a
function the gold patch changes, with its arguments, what it returned (type and ``repr``) or
raised (type, and the message apart), and the plain-valued public attributes of the instance a
method ran on (and of its attributes that are objects of the same module). Only the classes the
gold patch changes are wrapped, so the recording costs little where a module is large. The gold
patch is recorded the same way twice; a
call whose outcome differs between those two runs, or between two calls with the same arguments
in one test, is left out (it depends on something other than the fix). Then:

* a call with the same arguments, in the same test, whose outcome's type or value (or the state
  it left) differs from the gold patch's is a **divergence**: ``diverges_from_gold``, a fail
  under the default ``differential="fail"`` (``"flag"`` keeps the tests' verdict);
* an exception of the same type with another message is a warning
  (``message_differs_from_gold``): a reworded message is how correct fixes most often differ;
* during a FAIL_TO_PASS test, each call into a changed module that the test's own code
  makes, or that crosses the module's boundary into a function the gold patch did not change
  (one it changed may not exist in another correct fix), must be seen again with the same
  arguments: a patch whose run does not record it has taken the boundary out of sight (its code
  put the functions back unwrapped) or behaved otherwise before it: a divergence too, as is a
  run that records no call at all where the gold patch's recorded some.

What it does not see, by construction: inputs the tests never give (a special case for exactly
the test's inputs agrees with the gold patch on them), code the gold patch changes that is only
reached from inside its own module, and a patch that behaves one way under test and another in
use. It compares, never executes, the recorded text: the gold patch's record stays on the host
and never enters the sandbox, so a patch that matches it has produced the gold patch's outcome
on every input the tests give.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from truegrade.graders.repo._patch import read_patch
from truegrade.graders.repo._run import TracedCall
from truegrade.graders.repo._tree import BaseTree, apply_patch, workspace

__all__ = [
    "Divergence",
    "GoldTrace",
    "Target",
    "changed_functions",
    "compare_with_gold",
    "issue_module",
    "issue_snippets",
    "traced_modules",
]

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _new_side_lines(patch: str) -> dict[str, set[int]]:
    """For each file, the lines of its patched text that the patch adds, and the line that
    follows each place it removes lines."""
    out: dict[str, set[int]] = {}
    path = ""
    line = 0
    for raw in patch.splitlines():
        if raw.startswith("+++ "):
            target = raw[4:].strip()
            path = target[2:] if target.startswith("b/") else target
            out.setdefault(path, set())
            continue
        header = _HUNK.match(raw)
        if header:
            line = int(header.group(1))
        elif raw.startswith("+") and path:
            out[path].add(line)
            line += 1
        elif raw.startswith("-") and not raw.startswith("--- ") and path:
            out[path].add(line)
        elif raw.startswith(" "):
            line += 1
    return out


def changed_functions(source: str, lines: Iterable[int]) -> list[str]:
    """Qualified names of the functions and methods of ``source`` (a module's text) whose body
    holds one of ``lines`` (a function nested in another counts as the outer one)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    wanted = set(lines)
    found: list[str] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                last = node.end_lineno or node.lineno
                if any(first <= n <= last for n in wanted):
                    found.append(prefix + node.name)

    visit(tree.body, "")
    return found


@dataclass(frozen=True)
class Target:
    """A module to trace: its name, its path in the tree, and the functions the gold patch
    changes in it (traced from everywhere; the module's other functions only when called from
    outside it)."""

    module: str
    path: str
    changed: tuple[str, ...] = ()

    def as_job(self) -> list[object]:
        return [self.module, self.path, list(self.changed)]


def traced_modules(gold_patch: str, path_dirs: Sequence[str], base: BaseTree) -> list[Target]:
    """The modules the gold patch changes (``Target``), under each of the tree's import
    directories they are in (``src/pkg/mod.py`` is ``pkg.mod`` with ``src`` on the path, and
    ``src.pkg.mod`` from the root), with the functions it changes, read from the base tree with
    the gold patch applied."""
    reading = read_patch(gold_patch)
    paths = [f.path for f in reading.files if f.path.endswith(".py") and not f.binary]
    if not paths:
        return []
    touched = _new_side_lines(gold_patch)
    changed: dict[str, tuple[str, ...]] = {}
    with workspace() as tree:
        base.extract(tree, paths)
        if apply_patch(tree, gold_patch) is None:
            for path in paths:
                local = tree / path
                if local.is_file() and not local.is_symlink():
                    text = local.read_text(encoding="utf-8", errors="replace")
                    changed[path] = tuple(changed_functions(text, touched.get(path, ())))
    out: list[Target] = []
    for path in paths:
        for directory in path_dirs:
            root = directory.strip("/")
            if root in ("", "."):
                rel = path
            elif path.startswith(root + "/"):
                rel = path[len(root) + 1 :]
            else:
                continue
            parts = rel[: -len(".py")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and all(p.isidentifier() for p in parts):
                out.append(Target(".".join(parts), path, changed.get(path, ())))
    return list(dict.fromkeys(out))


_FENCE = re.compile(r"^```[ \t]*([\w+-]*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_PYTHON_TAGS = ("", "python", "python3", "py", "py3", "pycon", "ipython")
_SNIPPETS = 4


def _as_code(block: str) -> str | None:
    """A block of an issue as Python to run: a session (``>>>`` and ``...`` lines) as its input
    lines, anything else as it is; None when it is not Python (a traceback, a shell command,
    output)."""
    lines = block.splitlines()
    if any(line.startswith(">>>") for line in lines):
        kept = [line[4:] for line in lines if line.startswith((">>> ", "... ", ">>>", "..."))]
        code = "\n".join(kept)
    else:
        code = block
    code = code.strip("\n")
    if not code.strip() or code.lstrip().startswith("Traceback"):
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    # a block of bare names or values is output shown, not code to run
    if all(isinstance(n, ast.Expr) and not isinstance(n.value, ast.Call) for n in tree.body):
        return None
    return code + "\n"


def issue_snippets(problem_statement: str, limit: int = _SNIPPETS) -> list[str]:
    """The Python code blocks of a task's issue (fenced, untagged or tagged Python; interactive
    sessions as their input lines) that parse: the inputs the issue gives, in its order."""
    out: list[str] = []
    for match in _FENCE.finditer(problem_statement):
        if match.group(1).lower() not in _PYTHON_TAGS:
            continue
        code = _as_code(match.group(2))
        if code is not None and code not in out:
            out.append(code)
    return out[:limit]


def issue_module(snippets: Sequence[str]) -> str:
    """A test module that runs each snippet in its own test (as ``__main__``, every exception
    caught: the snippet's outcome is not a test's, only its calls into the changed code are
    compared), its code compiled as this file's so its calls count as the test's own."""
    tests = "".join(
        f"\n\ndef test_issue_{k}():\n    _run(SNIPPETS[{k}])\n" for k in range(len(snippets))
    )
    # the module is written into the task's tree and run only there, inside the sandbox, on the
    # dataset's issue text (never a response's): its exec is the tested process's, not ours
    return (
        "SNIPPETS = " + repr(list(snippets)) + "\n\n\n"
        "def _run(source):\n"
        '    namespace = {"__name__": "__main__"}\n'
        "    try:\n"
        '        exec(compile(source, __file__, "exec"), namespace)  # in the sandbox only\n'
        "    except BaseException:\n"
        "        pass\n" + tests
    )


_Key = tuple[str, str, str, bool]
"""(test, function, arguments, whether a test file made the call)."""


def _key(call: TracedCall) -> _Key:
    return (call.test, call.function, call.arguments, call.direct)


@dataclass(frozen=True)
class GoldTrace:
    """What the gold patch's runs recorded: for each call (test, function, arguments) that came
    out the same way every time, that outcome."""

    outcomes: dict[_Key, TracedCall] = field(default_factory=dict)
    unstable: int = 0
    """Calls left out: their outcome differed between runs or between equal calls."""

    @classmethod
    def from_runs(cls, runs: Iterable[Sequence[TracedCall]]) -> GoldTrace:
        seen: dict[_Key, set[TracedCall]] = {}
        keys_per_run: list[set[_Key]] = []
        for calls in runs:
            keys: set[_Key] = set()
            for call in calls:
                seen.setdefault(_key(call), set()).add(call)
                keys.add(_key(call))
            keys_per_run.append(keys)
        everywhere = set.intersection(*keys_per_run) if keys_per_run else set()
        outcomes = {}
        unstable = 0
        for key, found in seen.items():
            if len(found) == 1 and key in everywhere:
                outcomes[key] = next(iter(found))
            else:
                unstable += 1
        return cls(outcomes, unstable)


@dataclass(frozen=True)
class Divergence:
    """How a patch's recorded calls differ from the gold patch's."""

    compared: int
    """Gold calls the patch's run made too (same test, function and arguments)."""
    differences: list[str] = field(default_factory=list)
    """Calls whose outcome or state differs (a divergence)."""
    messages: list[str] = field(default_factory=list)
    """Calls that raised the gold patch's exception type with another message (a warning)."""
    unseen: bool = False
    """The gold patch's run recorded calls and this one recorded none."""

    @property
    def diverges(self) -> bool:
        return bool(self.differences) or self.unseen

    def describe(self, limit: int = 3) -> str:
        if self.unseen:
            return (
                "the tests made no call into the code the gold patch changes (the gold patch's "
                "run made some): its behaviour could not be compared"
            )
        shown = "; ".join(self.differences[:limit] or self.messages[:limit])
        more = len(self.differences or self.messages) - limit
        return shown + (f" (and {more} more)" if more > 0 else "")


def _state_difference(gold: TracedCall, call: TracedCall) -> str | None:
    mine = dict(call.state)
    for name, value in gold.state:
        if name in mine and mine[name] != value:
            return f"left .{name} = {_cut(mine[name])} where the gold patch left {_cut(value)}"
    return None


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def compare_with_gold(
    gold: GoldTrace,
    calls: Sequence[TracedCall],
    required: Sequence[str] = (),
    changed: Iterable[str] = (),
) -> Divergence:
    """Compare a patch's recorded calls with the gold patch's (``GoldTrace``).

    ``required`` are test ids (the task's FAIL_TO_PASS) whose calls into the changed modules
    must be seen again: each call the test's own code makes, and each call from outside the
    module into a function the gold patch did not change (``changed``: those it did change may
    not exist in another correct fix). A patch whose run does not record one of them has hidden
    it or behaved otherwise before it.
    """
    own = frozenset(changed)
    if gold.outcomes and not calls:
        return Divergence(0, unseen=True)
    mine: dict[_Key, set[TracedCall]] = {}
    for call in calls:
        mine.setdefault(_key(call), set()).add(call)
    differences: list[str] = []
    messages: list[str] = []
    compared = 0
    for key, reference in sorted(gold.outcomes.items()):
        test, function, arguments, direct = key
        where = f"{function}{_cut(arguments, 60)} in {test.rsplit('::', 1)[-1]}"
        found = mine.get(key)
        if not found:
            needed = direct or function not in own
            if needed and any(test.startswith(r) for r in required):
                differences.append(
                    f"{where}: the test makes this call with the gold patch, and no such call "
                    "was seen with this patch"
                )
            continue
        compared += 1
        for call in sorted(found, key=lambda c: (c.outcome, c.message, c.state)):
            if call.outcome != reference.outcome:
                differences.append(
                    f"{where}: the gold patch gives {_cut(reference.outcome)}, this patch "
                    f"{_cut(call.outcome)}"
                )
                break
            state = _state_difference(reference, call)
            if state:
                differences.append(f"{where}: {state}")
                break
            if call.message != reference.message:
                messages.append(
                    f"{where}: the gold patch's message is {_cut(reference.message)}, this "
                    f"patch's {_cut(call.message)}"
                )
                break
    return Divergence(compared, differences, messages)
