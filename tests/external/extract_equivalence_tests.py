"""Extract the answer-equivalence unit tests of three math projects as (gold, prediction, verdict)
cases in one JSONL file.

Run by hand when a source changes; the tests read only the committed output::

    python tests/external/extract_equivalence_tests.py NAME=/path/to/checkout ... [--out FILE]

with ``NAME`` one of the sources below and each path a checkout or bare clone (files are read
at ``HEAD`` with ``git show``). Test files are parsed with ``ast``, never imported or run. Two
forms of test are read:

- ``unittest`` methods (hendrycks/math, MARIO_EVAL): the statements of each ``test*`` method are
  followed in order, keeping every name bound to a literal (``test_in = "..."``, a literal list
  of pairs, a ``for a, b in pairs:`` loop over one); each
  ``self.assertTrue(check(a, b, ...))`` / ``self.assertFalse(check(a, b, ...))`` whose ``check``
  is the project's equivalence function (or a test helper that returns its value unchanged) is a
  case with ``a`` as the gold, ``b`` as the prediction and the assertion as the verdict;
- ``pytest`` tables (NeMo-Skills): every row of a ``@pytest.mark.parametrize`` table whose
  rows are pairs (one name holding a pair, or two names), in a test that asserts
  ``... is True`` or ``... is False``: the pair is a case with that verdict; when the test also
  calls the check with the pair reversed (``check(pair[1], pair[0])``) the reversed pair is a
  second case.

A number in a table (``5``, ``0.5``, ``5 / 2``) is written as Python prints it (``"2.5"``); a row
holding ``None`` is not an answer and is left out. Only the case strings are kept, each with
its source repository, commit, file, test and line; no code of these projects is copied. Their
licences, and the commits the committed cases were read at:

- hendrycks/math (MIT, ``LICENSE``): ``modeling/math_equivalence_test.py`` at ``985bdc1``;
- MARIO-Math-Reasoning/MARIO_EVAL (MIT, declared in ``setup.py``'s classifiers; the repository
  has no licence file): ``math_evaluation/tests/test_is_equiv.py`` at ``13584f2``;
- NVIDIA/NeMo-Skills (Apache-2.0, ``LICENSE`` and the file's header):
  ``tests/test_math_equal.py`` at ``0b012df``.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

from tests.external.extract_math_verify import _git, literal

OUT = Path(__file__).resolve().parent / "data" / "equivalence_tests_cases.jsonl"
# name -> (repository, licence, files, equivalence checks and helpers returning their value)
SOURCES: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "hendrycks": (
        "hendrycks/math",
        "MIT",
        ("modeling/math_equivalence_test.py",),
        ("is_equiv",),
    ),
    "mario": (
        "MARIO-Math-Reasoning/MARIO_EVAL",
        "MIT",
        ("math_evaluation/tests/test_is_equiv.py",),
        ("is_equiv", "_test_is_equiv", "_test_is_not_equiv", "are_equal_under_sympy"),
    ),
    "nemo_skills": ("NVIDIA/NeMo-Skills", "Apache-2.0", ("tests/test_math_equal.py",), ()),
}


class _NotLiteral(ValueError):
    pass


def value(node: ast.AST) -> Any:
    """A literal, with arithmetic on number literals (``5 / 2``) computed."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult, ast.Add, ast.Sub)):
        left, right = value(node.left), value(node.right)
        if not all(isinstance(v, (int, float)) for v in (left, right)):
            raise _NotLiteral("arithmetic on non-numbers")
        ops = {ast.Div: float.__truediv__, ast.Mult: float.__mul__}
        ops.update({ast.Add: float.__add__, ast.Sub: float.__sub__})
        return ops[type(node.op)](float(left), float(right))
    try:
        return literal(node)
    except (ValueError, SyntaxError, TypeError) as exc:
        raise _NotLiteral(str(exc)) from None


def _text(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise _NotLiteral(f"not an answer: {v!r}")
    return v if isinstance(v, str) else repr(v)


def _case(a: Any, b: Any, expected: bool, where: dict[str, Any]) -> dict[str, Any] | None:
    gold, pred = _text(a), _text(b)
    if gold is None or pred is None:
        return None
    return {"gold": gold, "pred": pred, "expected": expected, "source": where}


def _unittest_cases(func: ast.FunctionDef, checks: tuple[str, ...], where) -> list[dict]:
    out: list[dict] = []

    def run(body: list[ast.stmt], env: dict[str, Any]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                try:
                    v = value(stmt.value)
                except _NotLiteral:
                    continue
                if isinstance(target, ast.Name):
                    env[target.id] = v
            elif isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Tuple):
                items = env.get(stmt.iter.id) if isinstance(stmt.iter, ast.Name) else None
                names = [e.id for e in stmt.target.elts if isinstance(e, ast.Name)]
                for item in items or []:
                    run(stmt.body, {**env, **dict(zip(names, item, strict=True))})
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = stmt.value
                method = getattr(call.func, "attr", "")
                if method not in ("assertTrue", "assertFalse") or not call.args:
                    continue
                inner = call.args[0]
                if not (
                    isinstance(inner, ast.Call)
                    and getattr(inner.func, "id", "") in checks
                    and len(inner.args) >= 2
                ):
                    continue
                args = []
                for arg in inner.args[:2]:
                    args.append(env[arg.id] if isinstance(arg, ast.Name) else value(arg))
                case = _case(
                    *args,
                    method == "assertTrue",
                    {**where, "test": func.name, "line": stmt.lineno, "check": inner.func.id},
                )
                if case:
                    out.append(case)

    run(func.body, {})
    return out


def _verdict(func: ast.FunctionDef) -> bool | None:
    verdicts = {
        node.comparators[0].value
        for node in ast.walk(func)
        if isinstance(node, ast.Compare)
        and isinstance(node.ops[0], ast.Is)
        and isinstance(node.comparators[0], ast.Constant)
        and isinstance(node.comparators[0].value, bool)
    }
    return verdicts.pop() if len(verdicts) == 1 else None


def _reversed_too(func: ast.FunctionDef) -> bool:
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Subscript):
            index = node.args[0].slice
            if isinstance(index, ast.Constant) and index.value == 1:
                return True
    return False


def _table_cases(func: ast.FunctionDef, where) -> list[dict]:
    out: list[dict] = []
    expected = _verdict(func)
    if expected is None:
        return out
    both = _reversed_too(func)
    for deco in func.decorator_list:
        if not (isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "parametrize"):
            continue
        names = [n.strip() for n in literal(deco.args[0]).split(",")]
        rows = deco.args[1]
        if len(names) not in (1, 2) or not isinstance(rows, (ast.List, ast.Tuple)):
            continue
        for index, row in enumerate(rows.elts):
            if not isinstance(row, ast.Tuple) or len(row.elts) != 2:
                continue
            a, b = (value(e) for e in row.elts)
            at = {**where, "test": func.name, "line": row.lineno, "param_index": index}
            for gold, pred, order in ((a, b, "as written"), (b, a, "reversed"))[: 1 + both]:
                case = _case(gold, pred, expected, {**at, "order": order})
                if case:
                    out.append(case)
    return out


def cases_of(
    source: str, path: str, repo: str, commit: str, checks: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Every case in one test file's source (see the module docstring)."""
    where = {"repo": repo, "commit": commit, "file": path}
    out: list[dict[str, Any]] = []
    tree = ast.parse(source)
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    for func in funcs:
        if not func.name.startswith("test"):
            continue
        if checks:
            out.extend(_unittest_cases(func, checks, where))
        else:
            out.extend(_table_cases(func, where))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", help="NAME=PATH, NAME one of " + ", ".join(SOURCES))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for item in args.checkouts:
        name, _, path = item.partition("=")
        repo, licence, files, checks = SOURCES[name]
        commit = _git(Path(path), "rev-parse", "HEAD").strip()
        for file in files:
            source = _git(Path(path), "show", f"HEAD:{file}")
            found = cases_of(source, file, repo, commit, checks)
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
