"""Extract the math reward-function unit tests of RL training frameworks as (key, response,
verdict) cases.

Run by hand when a source changes; the tests read only the committed output::

    python tests/external/extract_reward_tests.py NAME=/path/to/checkout ... [--out FILE]

with ``NAME`` one of the sources below and each path a checkout or bare clone (files are read at
``HEAD`` with ``git show``). Test files are parsed with ``ast``, never imported or run. In each
``test*`` function the statements are followed in order:

- ``name = fn(...)`` where ``fn`` is one of the source's reward functions binds ``name`` to that
  call; ``name = factory()`` where ``factory`` makes a checker binds ``name`` to a checker, and a
  later ``name.method(...)`` call of it counts as a reward function too (a checker made any
  other way, such as a test double that hangs, does not);
- ``assert name == v`` or ``assert call == v`` with ``v`` a literal 1 or 0 (``1.0``,
  ``True``...) is a case: the call's response and key arguments (by keyword or position, per
  function; a literal, or a name bound to one earlier in the test) with ``v`` as the verdict. An
  assertion of anything else (``isinstance(...)``, ``a == 1.0 or ...``) is no verdict and is
  left out, as is a call whose arguments are not literals.

Only the case strings are kept, each with its source repository, commit, file, test and line; no
code of these projects is copied. The sources, their licences, and the commits the committed
cases were read at:

- areal-project/AReaL (Apache-2.0, ``LICENSE``): ``tests/test_math_verify_reward.py`` at
  ``cbff54d``: ``gsm8k_reward_fn`` (``completions=``, ``answer=``) and the ``verify(response,
  key)`` method of a checker from ``get_math_verify_worker()``. Its ``geometry3k_reward_fn``
  tests are left out: that function reads only an answer in square brackets, a convention of
  the Geometry3K prompt, not a way of writing an answer.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from tests.external.extract_equivalence_tests import _NotLiteral, value
from tests.external.extract_math_verify import _git

OUT = Path(__file__).resolve().parent / "data" / "reward_tests_cases.jsonl"
# a reward function: where its response and its key are (keyword name, position)
Arguments = tuple[tuple[str, int], tuple[str, int]]
# name -> (repository, licence, files, reward functions, checker factories -> their methods)
SOURCES: dict[str, tuple[str, str, tuple[str, ...], dict[str, Arguments], dict[str, Any]]] = {
    "areal": (
        "areal-project/AReaL",
        "Apache-2.0",
        ("tests/test_math_verify_reward.py",),
        {"gsm8k_reward_fn": (("completions", -1), ("answer", -1))},
        {"get_math_verify_worker": {"verify": (("response", 0), ("ground_truth", 1))}},
    ),
}


def _argument(call: ast.Call, where: tuple[str, int], env: dict[str, Any]) -> Any:
    keyword, position = where
    nodes = [kw.value for kw in call.keywords if kw.arg == keyword]
    nodes += call.args[position : position + 1] if position >= 0 else []
    if not nodes:
        raise _NotLiteral(f"no argument {keyword}")
    if isinstance(nodes[0], ast.Name):
        if nodes[0].id not in env:
            raise _NotLiteral(f"{nodes[0].id} is bound to no literal")
        return env[nodes[0].id]
    return value(nodes[0])


def _arguments(call: Any, functions: dict, checkers: dict) -> Arguments | None:
    """Where a reward call's response and key are, if ``call`` is one."""
    if not isinstance(call, ast.Call):
        return None
    f = call.func
    if isinstance(f, ast.Name):
        return functions.get(f.id)
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        return checkers.get(f.value.id, {}).get(f.attr)
    return None


def _verdict(node: ast.expr) -> bool | None:
    if isinstance(node, ast.Constant) and node.value in (0, 1) and not isinstance(node.value, str):
        return bool(node.value)
    return None


def cases_of(
    source: str,
    path: str,
    repo: str,
    commit: str,
    functions: dict[str, Arguments],
    factories: dict[str, dict[str, Arguments]],
) -> list[dict[str, Any]]:
    """Every case in one test file's source (see the module docstring)."""
    out: list[dict[str, Any]] = []
    tests = [
        f
        for f in ast.walk(ast.parse(source))
        if isinstance(f, ast.FunctionDef) and f.name.startswith("test")
    ]
    for func in sorted(tests, key=lambda f: f.lineno):
        calls: dict[str, ast.Call] = {}
        env: dict[str, Any] = {}  # names bound to literals
        checkers: dict[str, dict[str, Arguments]] = {}

        for stmt in func.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, call = stmt.targets[0], stmt.value
                if not isinstance(target, ast.Name):
                    continue
                for bound in (calls, checkers, env):
                    bound.pop(target.id, None)
                with contextlib.suppress(_NotLiteral, ValueError):
                    env[target.id] = value(call)
                if isinstance(call, ast.Call) and getattr(call.func, "id", "") in factories:
                    checkers[target.id] = factories[call.func.id]
                elif _arguments(call, functions, checkers):
                    calls[target.id] = call
            elif isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare):
                test = stmt.test
                if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
                    continue
                expected = _verdict(test.comparators[0])
                left = test.left
                call = calls.get(left.id) if isinstance(left, ast.Name) else left
                where = _arguments(call, functions, checkers)
                if expected is None or where is None:
                    continue
                try:
                    pred, gold = (_argument(call, w, env) for w in where)
                except _NotLiteral:
                    continue
                if not (isinstance(pred, str) and isinstance(gold, str)):
                    continue
                name = call.func.id if isinstance(call.func, ast.Name) else call.func.attr
                out.append(
                    {
                        "gold": gold,
                        "pred": pred,
                        "expected": expected,
                        "source": {
                            "repo": repo,
                            "commit": commit,
                            "file": path,
                            "test": func.name,
                            "line": stmt.lineno,
                            "check": name,
                        },
                    }
                )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", help="NAME=PATH, NAME one of " + ", ".join(SOURCES))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for item in args.checkouts:
        name, _, path = item.partition("=")
        repo, licence, files, functions, factories = SOURCES[name]
        commit = _git(Path(path), "rev-parse", "HEAD").strip()
        for file in files:
            source = _git(Path(path), "show", f"HEAD:{file}")
            found = cases_of(source, file, repo, commit, functions, factories)
            for case in found:
                case["source"]["licence"] = licence
            rows.extend(found)
            print(f"{name}: {len(found)} cases from {file} at {commit[:12]}")
    with args.out.open("w") as fh:
        for n, row in enumerate(rows):
            fh.write(json.dumps({"id": n, **row}, ensure_ascii=False) + "\n")
    print(f"{len(rows)} cases -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
