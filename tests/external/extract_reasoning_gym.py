"""Generate reasoning-gym items with candidate answers and reasoning-gym's own scores as JSONL.

Run by hand (reasoning-gym and SymPy installed) when the item set should change; the tests read
only the committed output::

    pip install reasoning-gym
    python tests/external/extract_reasoning_gym.py [--per-dataset 8] [--out FILE]

Each row is one generated item of one dataset (seed 42, the item's index), with its question,
its key, and candidate answers: the key itself, forms of the same value (LaTeX, factored,
reordered, a trailing zero, thousands grouping, another constant of integration, a prime
factorization with powers, ...) and values that differ (one more, negated, rounded to three
significant figures, a wrong coefficient, a root left out). Every candidate carries the score
the dataset's own ``score_answer`` gives it, the reference verdict the tests compare with.
The items and scores are reasoning-gym's (Apache-2.0); the candidates are made here from the
key by the rules below, so each one's kind says what it is.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "reasoning_gym_cases.jsonl"
SEED = 42
INTEGER_SETS = (
    "basic_arithmetic",
    "chain_sum",
    "products",
    "gcd",
    "lcm",
    "simple_equations",
    "fraction_simplification",
    "dice",
    "leg_counting",
    "count_primes",
    "gsm_symbolic",
    "simple_geometry",
    "count_bits",
    "decimal_chain_sum",
)
EXPRESSION_SETS = ("simple_integration", "intermediate_integration", "polynomial_multiplication")
DECIMAL_SETS = ("decimal_arithmetic", "coin_flip", "power_function", "number_format")
OTHER_SETS = (
    "complex_arithmetic",
    "polynomial_equations",
    "prime_factorization",
    "advanced_geometry",
    "bitwise_arithmetic",
)


def _plain(gold: str) -> list[tuple[str, str]]:
    out = [("gold", gold)]
    fraction = re.fullmatch(r"(-?\d+)/(\d+)", gold)
    if fraction:
        a, b = int(fraction[1]), int(fraction[2])
        return out + [
            ("doubled", f"{2 * a}/{2 * b}"),
            ("spaced", f"{a} / {b}"),
            ("plus_one", f"{a + 1}/{b}"),
        ]
    if re.fullmatch(r"-?\d+", gold):
        n = int(gold)
        out += [("float", f"{n}.0"), ("plus_one", str(n + 1)), ("negated", str(-n) if n else "1")]
        return out + [("grouped", f"{n:,}") if abs(n) >= 1000 else ("spaced", f" {n} ")]
    if re.fullmatch(r"-?\d+\.\d+", gold):
        last = str((int(gold[-1]) + 1) % 10)
        return out + [
            ("trailing0", gold + "0"),
            ("plus_one", gold[:-1] + last),
            ("negated", gold[1:] if gold.startswith("-") else "-" + gold),
        ]
    return out


def _expression(gold: str, variable: str, constant: bool) -> list[tuple[str, str]]:
    import sympy

    tail = " + C" if constant else ""
    body = gold.removesuffix(" + C") if constant else gold
    x = sympy.Symbol(variable)
    expr = sympy.parse_expr(body, local_dict={variable: x})  # reasoning-gym's key, not a model's
    terms = sympy.Add.make_args(expr)
    out = [
        ("gold", gold),
        ("latex", sympy.latex(expr) + tail),
        ("factored", str(sympy.factor(expr)) + tail),
        ("reordered", " + ".join(str(t) for t in reversed(terms)) + tail),
    ]
    if constant:
        out += [("no_constant", body), ("constant_K", body + " + K")]
    wrong = sympy.Add(*terms[:-1]) + 2 * terms[-1]
    return out + [("wrong", str(wrong) + tail)]


def _decimal(gold: str) -> list[tuple[str, str]]:
    value = float(gold)
    out = [("gold", gold)]
    for kind, rounded in (("rounded_3sig", f"{value:.3g}"), ("sci_3sig", f"{value:.2e}")):
        if Decimal(rounded) != Decimal(gold):  # only a rounding that changes the value
            out.append((kind, rounded))
    if "e" not in gold:
        out.append(("trailing0", gold + "0" if "." in gold else gold + ".0"))
    return out + [("wrong", repr(value * 1.5 + 1))]


def _other(name: str, entry: dict[str, Any]) -> list[tuple[str, str]]:
    gold = str(entry["answer"])
    if name == "complex_arithmetic":
        re_, im = entry["metadata"]["result"]
        short = f"{re_:g} + {im:g}i".replace("+ -", "- ")
        return [
            ("gold", gold),
            ("short", short),
            ("python_j", f"{re_:g}{im:+g}j"),
            ("wrong", f"{re_ + 1:g} + {im:g}i".replace("+ -", "- ")),
        ]
    if name == "polynomial_equations":
        parts = [p.strip() for p in gold.split(",") if p.strip()]
        out = [("gold", gold)]
        if len(parts) > 1:  # one root is a number, not a set of one
            out += [
                ("reversed", ", ".join(reversed(parts))),
                ("set", "{" + ", ".join(parts) + "}"),
                ("one_root", parts[0]),
            ]
        if parts:
            out.append(("wrong", ", ".join(str(float(p) + 1) for p in parts)))
        return out
    if name == "prime_factorization":
        factors = [int(p) for p in gold.split("×")]
        counts = sorted(Counter(factors).items())
        powers = " × ".join(f"{p}^{k}" if k > 1 else str(p) for p, k in counts)
        product = 1
        for f in factors:
            product *= f
        out = [("gold", gold)]
        if len(factors) > 1:  # a prime's factorization is the prime itself
            out += [
                ("powers", powers),
                ("star", "*".join(map(str, factors))),
                ("product", str(product)),
            ]
        return out + [("wrong", gold + " × 2")]
    if name == "advanced_geometry":
        return [
            ("gold", gold),
            ("no_degree", gold.replace("°", "")),
            ("latex_degree", gold.replace("°", "^\\circ")),
        ]
    if name == "bitwise_arithmetic":
        value = int(gold, 16)
        return [("gold", gold), ("decimal", str(value)), ("wrong", hex(value + 1))]
    raise ValueError(name)


def _score(dataset: Any, answer: str, entry: dict[str, Any]) -> float:
    try:
        return float(dataset.score_answer(answer, entry))
    except Exception:  # a scorer that raises on a form it cannot read scores it 0
        return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-dataset", type=int, default=8)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    import reasoning_gym
    import sympy

    version = importlib.metadata.version("reasoning-gym")
    rows = []
    for name in INTEGER_SETS + EXPRESSION_SETS + DECIMAL_SETS + OTHER_SETS:
        dataset = reasoning_gym.create_dataset(name, size=args.per_dataset, seed=SEED)
        for index, entry in enumerate(dataset):
            gold = str(entry["answer"])
            if "Integral(" in gold:  # SymPy could not integrate it: the key is no answer
                continue
            if name in INTEGER_SETS:
                candidates = _plain(gold)
            elif name in EXPRESSION_SETS:
                variable = entry["metadata"].get("variable") or str(
                    min(sympy.parse_expr(gold).free_symbols, key=str)
                )
                candidates = _expression(gold, variable, name != "polynomial_multiplication")
            elif name in DECIMAL_SETS:
                candidates = _decimal(gold)
            else:
                candidates = _other(name, entry)
            rows.append(
                {
                    "id": len(rows),
                    "source": {
                        "package": "reasoning-gym",
                        "version": version,
                        "dataset": name,
                        "seed": SEED,
                        "index": index,
                    },
                    "question": entry["question"],
                    "gold": gold,
                    "candidates": [
                        {"kind": kind, "answer": answer, "score": _score(dataset, answer, entry)}
                        for kind, answer in dict.fromkeys(candidates)
                    ],
                }
            )
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} items, {sum(len(r['candidates']) for r in rows)} candidates -> {args.out}")


if __name__ == "__main__":
    main()
