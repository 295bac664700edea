"""The demo behind `make demo`: grader cards for naive graders and the hardened ones that replace
them, on data shipped with the project.

For each example it builds a card (validity against labels where the data has them, the attack
library, the item audit) for the naive grader many RL recipes start with, and for truegrade's
hardened grader, then prints them side by side with the paths of the HTML cards.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from truegrade import load_grader
from truegrade.card import build_card, write_card
from truegrade.data import read_samples

HERE = Path(__file__).resolve().parent
OUT = Path("out") / "demo"

EXAMPLES: list[dict[str, Any]] = [
    {
        "name": "math answers",
        "data": "arith.jsonl",
        "graders": [
            (
                "naive last-number reward",
                f"{HERE}/graders/naive_last_number.py:reward",
                {"pass_threshold": 1.0},
            ),
            ("truegrade math", "math", {}),
        ],
    },
    {
        "name": "code",
        "data": "code_tasks.jsonl",
        "graders": [
            ("naive exit-code reward", f"{HERE}/graders/exit_code.py:reward", {}),
            ("truegrade code", "code", {}),
        ],
    },
    {
        "name": "open questions (rubric)",
        "data": "advice.jsonl",
        "graders": [
            ("naive keyword rubric", f"{HERE}/graders/keyword_rubric.py:reward", {}),
        ],
    },
]

STYLE = {"unsafe": "bold red", "caution": "bold yellow", "holds": "bold green"}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def main() -> int:
    console = Console()
    table = Table(title="grader cards", title_justify="left")
    for column in (
        "example",
        "grader",
        "verdict",
        "false passes",
        "items exploited",
        "worst attack",
        "items flagged",
    ):
        table.add_column(column, overflow="fold")
    cards: list[str] = []
    started = time.perf_counter()
    for example in EXAMPLES:
        rows = [s for _, s in read_samples(HERE / "data" / example["data"])]
        for title, spec, options in example["graders"]:
            console.print(f"[dim]{example['name']}: carding {title}...[/]")
            grader = load_grader(spec, **options)
            card = build_card(
                grader, rows, title=title, data_name=f"examples/data/{example['data']}", reruns=2
            )
            slug = title.replace(" ", "_").replace("-", "_")
            paths = write_card(card, OUT / f"{slug}.html")
            v = card.verdict
            table.add_row(
                example["name"],
                title,
                f"[{STYLE[v.status]}]{v.status}[/]",
                _pct(v.validity.value) if v.validity.measured else "n/a",
                _pct(v.exploitability.value),
                v.worst_attack or "-",
                _pct(v.soundness.value),
            )
            cards.append(f"{v.status:7s} {paths['html']}")
    console.print(table)
    for line in cards:
        console.print(f"  {line}", highlight=False)
    console.print(
        f"built in {time.perf_counter() - started:.0f} s; each card has a Markdown "
        "twin (.md) and the JSON behind it (.json). Open the .html files in a browser."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
