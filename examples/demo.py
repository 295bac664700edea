"""The demo behind `make demo`: grader cards for naive graders and the hardened ones that replace
them, on data shipped with the project.

For each example it builds a card (validity against labels where the data has them, the attack
library, the item audit) for the naive grader many RL recipes start with, and for truegrade's
hardened grader, then prints them side by side with the paths of the HTML cards.

The rubric example needs an LLM judge for its criteria. None runs here, so the demo starts
truegrade's judge simulator (a scripted stand-in, see ``truegrade.simulator``) on a local port;
point ``judge.endpoint`` / ``judge.model`` at a real OpenAI-compatible server to use a model.
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
from truegrade.simulator import run_simulator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from review_demo import build_review

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
        "name": "stdio code",
        "data": "stdio_tasks.jsonl",
        "graders": [
            ("naive answer-in-output", f"{HERE}/graders/naive_stdout.py:reward", {}),
            ("truegrade code, stdio", "code", {}),
        ],
    },
    {
        "name": "instructions",
        "data": "instructions.jsonl",
        "graders": [
            ("IFEval checks as is", "instructions", {"hardened": False}),
            ("truegrade instructions", f"{HERE}/graders/instructions.yaml", {}),
        ],
    },
    {
        "name": "open questions",
        "data": "advice_rubric.jsonl",
        "graders": [
            ("naive keyword rubric", f"{HERE}/graders/keyword_rubric.py:reward", {}),
            # "JUDGE" is replaced by the simulator's endpoint when the demo runs
            ("truegrade rubric", "rubric", {"judge": "JUDGE", "cache": None}),
        ],
    },
]

# The repository tasks' snapshots (base trees and pinned environments) live with the tests; flask's
# environment is the few packages its tests use (tests/data/repo/README.md: same results as the
# 64 of SWE-bench's environment, built in seconds instead of half a minute).
REPO_OPTIONS = {
    "repos": [str(HERE.parent / "tests" / "data" / "repo")],
    "environments": {
        "pallets/flask": {
            "python": "3.11",
            "requirements": [
                "setuptools==70.0.0",
                "click==8.1.3",
                "itsdangerous==2.1.2",
                "Jinja2==3.1.2",
                "MarkupSafe==2.1.1",
                "Werkzeug==2.3.7",
                "pytest==7.3.0",
                "iniconfig==2.0.0",
                "packaging==23.0",
                "pluggy==1.0.0",
                "asgiref==3.6.0",
                "python-dotenv==1.0.0",
            ],
        }
    },
}


def _repository_example() -> dict[str, Any] | None:
    """The repository tasks' example, or None (said why) when this machine lacks the CPython
    versions their environments need (looked up as the grader does: pyenv, then PATH)."""
    from truegrade.graders.repo import EnvironmentUnavailable, find_python

    try:
        find_python("3.9")
        find_python("3.11")
    except EnvironmentUnavailable as exc:
        print(f"skipping the repository tasks: {exc}", file=sys.stderr)
        return None
    return {
        "name": "repository tasks",
        "data": "repo_tasks.jsonl",
        "graders": [
            ("SWE-bench-style log grading", "repo", {**REPO_OPTIONS, "harness": "swebench"}),
            ("truegrade repo", "repo", REPO_OPTIONS),
        ],
    }


if (REPOSITORY_EXAMPLE := _repository_example()) is not None:
    EXAMPLES.append(REPOSITORY_EXAMPLE)

STYLE = {"unsafe": "bold red", "caution": "bold yellow", "holds": "bold green"}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _build_cards(console: Console, table: Table, cards: list[str], judge: dict[str, str]) -> None:
    for example in EXAMPLES:
        rows = [s for _, s in read_samples(HERE / "data" / example["data"])]
        for title, spec, options in example["graders"]:
            console.print(f"[dim]{example['name']}: carding {title}...[/]")
            options = {k: judge if v == "JUDGE" else v for k, v in options.items()}
            grader = load_grader(spec, **options)
            card = build_card(
                grader, rows, title=title, data_name=f"examples/data/{example['data']}", reruns=2
            )
            slug = "".join(c if c.isalnum() else "_" for c in title)
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


def main() -> int:
    # in a log or a pipe rich assumes 80 columns, which folds the summary table: give it room
    console = Console(width=None if sys.stdout.isatty() else 140)
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
    with run_simulator(mode="thread") as simulator:
        judge = {"endpoint": simulator.base_url, "model": "judge-simulator"}
        console.print(
            f"[dim]rubric criteria are judged by the judge simulator at {simulator.base_url}[/]"
        )
        _build_cards(console, table, cards, judge)
        review = build_review(OUT, judge)
    console.print(table)
    for line in cards:
        console.print(f"  {line}", highlight=False)
    console.print(
        f"review app: {review['items']} items labelled by two simulated experts (Cohen's kappa "
        f"{review['experts_kappa']:.2f}), {review['judged']} criteria judged, grader macro-F1 "
        f"{review['grader_macro_f1']:.2f} against them; add yourself with `truegrade review user "
        f"{review['project']} NAME --role viewer`, then "
        f"`truegrade review serve {review['project']}`",
        highlight=False,
    )
    console.print(
        f"built in {time.perf_counter() - started:.0f} s; each card has a Markdown "
        "twin (.md) and the JSON behind it (.json). Open the .html files in a browser."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
