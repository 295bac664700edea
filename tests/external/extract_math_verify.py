"""Extract Math-Verify's (gold, prediction, expected verdict) cases into a JSONL file.

Run by hand when Math-Verify's suite changes; the tests read only the committed output::

    python tests/external/extract_math_verify.py /path/to/Math-Verify [--out FILE]

The path is a Math-Verify checkout or a bare clone (files are read at ``HEAD`` with
``git show``). Test files are parsed with ``ast``, never imported or run: a case is every row
of a ``@pytest.mark.parametrize`` table whose names include a gold, a prediction and an
expected verdict, plus every literal ``compare_strings(gold, pred, ...) == verdict`` assertion
in a test body. Values must be literals; the only computed values allowed are f-strings over
``math`` functions of literals (one case formats ``math.sqrt(17)``). Each row records its
source file, test function, parametrize position and the Math-Verify commit, and the options
the case was run with upstream (``match_types``, ``precision``, ``strict``,
``allow_set_relation_comp``) so a reader can see what Math-Verify was asked.

Only the case strings are kept (quoted test data, each with its source); no Math-Verify code is
copied. Math-Verify is Apache-2.0, its test files carry an MIT notice.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

FILES = (
    "tests/test_all.py",
    "tests/test_boxed.py",
    "tests/test_numina_cases.py",
    "tests/test_open_thoughts.py",
    "tests/test_strict.py",
    "tests/test_yujianll.py",
)
GOLD_NAMES = ("gold",)
PRED_NAMES = ("pred",)
VERDICT_NAMES = ("expected", "result")
OPTION_NAMES = ("precision", "strict", "allow_set_relation_comp", "language", "match_type")
REPO = "huggingface/Math-Verify"
OUT = Path(__file__).resolve().parent / "data" / "math_verify_cases.jsonl"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def literal(node: ast.AST) -> Any:
    """The value of a literal node, or of an f-string over ``math`` calls on literals.

    A ``Language.X`` member (the language a case was run in) is read as its name, ``"X"``.
    """
    if isinstance(node, (ast.Tuple, ast.List)):
        return [literal(e) for e in node.elts]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                spec = literal(value.format_spec) if value.format_spec else ""
                parts.append(format(literal(value.value), spec))
            else:  # pragma: no cover - f-strings hold only these two
                raise ValueError(f"unsupported f-string part {ast.dump(value)}")
        return "".join(parts)
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Language"
    ):
        return node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "math"
        and not node.keywords
    ):
        return getattr(math, node.func.attr)(*(literal(a) for a in node.args))
    return ast.literal_eval(node)


def _decorator_tables(func: ast.FunctionDef) -> list[tuple[list[str], list[ast.expr]]]:
    tables = []
    for deco in func.decorator_list:
        if not (
            isinstance(deco, ast.Call)
            and isinstance(deco.func, ast.Attribute)
            and deco.func.attr == "parametrize"
            and len(deco.args) >= 2
        ):
            continue
        names = [n.strip() for n in literal(deco.args[0]).split(",")]
        rows = deco.args[1]
        if isinstance(rows, (ast.List, ast.Tuple)):
            tables.append((names, list(rows.elts)))
    return tables


def _call_options(call: ast.Call) -> dict[str, Any]:
    return {k.arg: literal(k.value) for k in call.keywords if k.arg}


def _safe_defaults(func: ast.FunctionDef) -> dict[str, Any]:
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "compare_strings":
            out = {}
            for k in node.keywords:
                try:
                    out[k.arg] = literal(k.value)
                except ValueError:
                    continue  # a parameter (precision=precision): set per row
            return out
    return {}


def _pick(names: list[str], options: tuple[str, ...]) -> str | None:
    return next((n for n in names if n in options), None)


def cases_of(source: str, path: str, commit: str, repo: str = REPO) -> list[dict[str, Any]]:
    """Every case in one test file's source (see the module docstring)."""
    out: list[dict[str, Any]] = []
    for func in ast.parse(source).body:
        if not isinstance(func, ast.FunctionDef) or not func.name.startswith("test"):
            continue
        defaults = _safe_defaults(func)
        for names, rows in _decorator_tables(func):
            gold, pred = _pick(names, GOLD_NAMES), _pick(names, PRED_NAMES)
            expected = _pick(names, VERDICT_NAMES)
            if not (gold and pred and expected):
                continue
            for index, row in enumerate(rows):
                try:
                    values = dict(zip(names, literal(row), strict=True))
                except ValueError as exc:
                    raise ValueError(f"{path}:{row.lineno}: not a literal case ({exc})") from None
                options = dict(defaults)
                options.update({k: values[k] for k in OPTION_NAMES if k in values})
                out.append(
                    _case(
                        path,
                        func,
                        row.lineno,
                        index,
                        values[gold],
                        values[pred],
                        values[expected],
                        options,
                        commit,
                        repo,
                    )
                )
        for node in ast.walk(func):  # assert compare_strings(gold, pred, ...) == verdict
            if not (
                isinstance(node, ast.Compare)
                and isinstance(node.left, ast.Call)
                and getattr(node.left.func, "id", "") == "compare_strings"
                and len(node.left.args) >= 2
                and isinstance(node.ops[0], ast.Eq)
            ):
                continue
            try:
                gold_v, pred_v = literal(node.left.args[0]), literal(node.left.args[1])
                verdict = literal(node.comparators[0])
            except ValueError:
                continue  # the parametrized call itself
            out.append(
                _case(
                    path,
                    func,
                    node.lineno,
                    None,
                    gold_v,
                    pred_v,
                    verdict,
                    _call_options(node.left),
                    commit,
                    repo,
                )
            )
    return out


def _case(
    path: str,
    func: ast.FunctionDef,
    line: int,
    index: int | None,
    gold: Any,
    pred: Any,
    expected: Any,
    options: dict[str, Any],
    commit: str,
    repo: str,
) -> dict[str, Any]:
    if not isinstance(gold, str) or not isinstance(pred, str):
        raise ValueError(f"{path}:{line}: gold and prediction must be strings")
    return {
        "gold": gold,
        "pred": pred,
        "expected": bool(int(expected)),
        "options": options,
        "source": {
            "repo": repo,
            "commit": commit,
            "file": path,
            "test": func.name,
            "line": line,
            "param_index": index,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a Math-Verify checkout or bare clone")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    commit = _git(args.repo, "rev-parse", "HEAD").strip()
    rows: list[dict[str, Any]] = []
    for path in FILES:
        rows.extend(cases_of(_git(args.repo, "show", f"HEAD:{path}"), path, commit))
    for n, row in enumerate(rows):
        row["id"] = n
    with args.out.open("w") as fh:
        for row in rows:
            fh.write(json.dumps({"id": row.pop("id"), **row}, ensure_ascii=False) + "\n")
    print(f"{len(rows)} cases from {len(FILES)} files at {commit[:12]} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
