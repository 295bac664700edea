"""Right answers in other words: forms of a reference that any sound grader must accept.

Used by the audit to catch graders (and keys) that reject correct work for its formatting: a
fraction written as a decimal, ``10{,}000`` for ``10000``, ``x = 5`` for ``5``, a set in another
order, a canonical solution reformatted or with its local variables renamed. Every form here is
equivalent by construction; a grader that fails one is too strict or the key is too narrow.
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction

from truegrade.attacks import reference_response
from truegrade.core import Sample
from truegrade.graders import parse_number
from truegrade.graders.math import normalize_answer

__all__ = ["equivalent_responses"]


def _terminating(value: Fraction) -> bool:
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def _math_forms(gold: str) -> list[tuple[str, str]]:
    answer = normalize_answer(gold)
    core = answer.core
    if not core or answer.is_text or "=" in core:
        return []
    forms: list[tuple[str, str]] = []
    value = parse_number(core).value
    suffix = "\\%" if answer.percent else ""
    if value is not None:
        if value.denominator != 1:
            p, q = abs(value.numerator), value.denominator
            sign = "-" if value < 0 else ""
            forms.append(("fraction_latex", f"{sign}\\frac{{{p}}}{{{q}}}{suffix}"))
            forms.append(("fraction_slash", f"{sign}{p}/{q}{suffix}"))
            if _terminating(value):
                forms.append(("decimal", f"{format(float(value), 'f').rstrip('0')}{suffix}"))
        elif abs(value) >= 10_000:
            grouped = f"{int(value):,}"
            forms.append(("thousands_latex", grouped.replace(",", "{,}") + suffix))
            forms.append(("thousands_plain", grouped + suffix))
        forms.append(("assignment", f"x = {core}{suffix}"))
    set_match = re.fullmatch(r"\\\{(.*)\\\}", core.strip())
    if set_match:
        elements = [e.strip() for e in set_match.group(1).split(",")]
        if len(elements) > 1:
            forms.append(("reordered_set", "\\{" + ", ".join(reversed(elements)) + "\\}"))
    return forms


class _Rename(ast.NodeTransformer):
    def __init__(self, names: set[str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            node.id = f"renamed_{node.id}"
        return node


def _code_forms(sample: Sample) -> list[tuple[str, str]]:
    solution = sample.metadata.get("canonical_solution")
    if not isinstance(solution, str):
        return []
    program = sample.prompt_text + solution
    try:
        tree = ast.parse(program)
    except SyntaxError:
        return []
    forms = [("reformatted", f"```python\n{ast.unparse(tree)}\n```")]
    local: set[str] = set()
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Store)
                and node.id not in params
            ):
                local.add(node.id)
    if local:
        renamed = _Rename(local).visit(ast.parse(program))
        forms.append(("renamed_locals", f"```python\n{ast.unparse(renamed)}\n```"))
    return forms


def equivalent_responses(sample: Sample, kind: str) -> list[tuple[str, str]]:
    """``(form name, response)`` pairs that are correct by construction for this item."""
    if kind == "math":
        gold = sample.reference if isinstance(sample.reference, str) else str(sample.reference)
        return [
            (name, f"The final answer is $\\boxed{{{form}}}$.") for name, form in _math_forms(gold)
        ]
    if kind == "code":
        return _code_forms(sample)
    base = reference_response(sample, kind)
    return [("padded_whitespace", f"  {base}\n")] if base else []
