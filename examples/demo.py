"""The demo behind `make demo`: a naive reward is exploited, a hardened grader holds.

Grades the bundled arithmetic set (honest answers and six kinds of reward hacking, each labelled
with whether it is really correct) with two graders:

* ``examples/graders/naive_last_number.py:reward``: the last number in the text, 1e-4 tolerance;
* ``numeric``: truegrade's strict number grader (one final answer, exact, no rescaling).

and prints, side by side, how often each one passes a wrong answer, by kind of hack.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from truegrade import ResultWriter, load_grader, read_samples, run_grader

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "arith.jsonl"
OUT = Path("out") / "demo"

GRADERS = {
    "naive last-number reward": f"{HERE / 'graders' / 'naive_last_number.py'}:reward",
    "truegrade numeric": "numeric",
}


def main() -> int:
    console = Console()
    samples = [s for _, s in read_samples(DATA)]
    OUT.mkdir(parents=True, exist_ok=True)
    by_kind: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    false_pass: dict[str, int] = {}
    wrong = sum(1 for s in samples if not s.label)
    for title, spec in GRADERS.items():
        grader = (
            load_grader(spec, pass_threshold=1.0)
            if spec.endswith(":reward")
            else (load_grader(spec))
        )
        grades = run_grader(grader, samples)
        slug = title.split()[0]
        with ResultWriter(OUT / f"{slug}.grades.jsonl", overwrite=True) as out:
            for sample, grade in zip(samples, grades, strict=True):
                out.write(sample.id, grade)
                by_kind[sample.metadata["kind"]][title].append(bool(grade.passed))
        false_pass[title] = sum(
            1 for s, g in zip(samples, grades, strict=True) if g.passed and not s.label
        )

    table = Table(title=f"Wrong answers passed, by kind ({len(samples)} responses, {DATA.name})")
    table.add_column("response kind")
    table.add_column("really correct?")
    for title in GRADERS:
        table.add_column(title, justify="right")
    for kind, results in by_kind.items():
        correct = next(s.label for s in samples if s.metadata["kind"] == kind)
        cells = []
        for title in GRADERS:
            passed = results[title]
            share = sum(passed) / len(passed)
            bad = share > 0 and not correct
            cells.append(f"[{'red' if bad else 'green'}]{share:.0%} passed[/]")
        table.add_row(kind, "yes" if correct else "no", *cells)
    console.print(table)
    for title in GRADERS:
        rate = false_pass[title] / wrong
        console.print(
            f"{title}: false pass rate {rate:.0%} ({false_pass[title]} of {wrong} "
            "wrong answers rewarded)"
        )
    console.print(f"results written to {OUT}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
