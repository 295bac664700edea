"""What every command shares: consoles, turning errors into one clear line, option parsing."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import yaml
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from truegrade.core import Sample, TruegradeError
from truegrade.data import FORMATS, read_samples

__all__ = [
    "BackendOption",
    "FormatOption",
    "GraderOptions",
    "LimitOption",
    "OutOption",
    "QuietOption",
    "RayAddressOption",
    "ThresholdOption",
    "TimeoutOption",
    "WorkersOption",
    "err_console",
    "fail",
    "load_rows",
    "out_console",
    "parse_pairs",
    "progress_bar",
    "user_errors",
    "write_outputs",
]

out_console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``code``."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, markup=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn truegrade's own errors into one line on stderr and exit status 2 (no traceback)."""
    try:
        yield
    except TruegradeError as exc:
        fail(str(exc).replace("[", "\\["))


def parse_pairs(pairs: Sequence[str], what: str) -> dict[str, Any]:
    """Parse repeated ``KEY=VALUE`` options; values are YAML (``3``, ``true``, ``[a, b]``)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"{what} must look like KEY=VALUE, got {pair!r}")
        try:
            out[key.strip()] = yaml.safe_load(value) if value else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


def progress_bar(*, enabled: bool) -> Progress:
    """A progress bar on stderr, shown only on a terminal (never in logs or pipes)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        disable=not (enabled and err_console.is_terminal and sys.stderr.isatty()),
        transient=False,
    )


# Options several commands share, declared once so they read and behave the same everywhere.
GraderOptions = Annotated[
    list[str],
    typer.Option("--option", "-o", help="Grader option KEY=VALUE (repeatable; values are YAML)."),
]
WorkersOption = Annotated[
    int | None, typer.Option(help="Worker processes (default: cores).", min=1)
]
TimeoutOption = Annotated[
    float | None,
    typer.Option("--timeout-s", help="Hard per-item deadline, overriding the grader's."),
]
FormatOption = Annotated[str, typer.Option("--format", help=f"Row format: {', '.join(FORMATS)}.")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
LimitOption = Annotated[int | None, typer.Option(help="Use only the first N rows.", min=1)]
OutOption = Annotated[Path | None, typer.Option(help="Write the report (JSON).")]
ThresholdOption = Annotated[
    float, typer.Option(help="Without a pass/fail verdict, a score above this passes.")
]


def load_rows(data: Path, *, fmt: str, limit: int | None) -> list[Sample]:
    """Read the samples of a data file (the first ``limit``), or exit with a clear message."""
    rows: list[Sample] = []
    with user_errors():
        for _, sample in read_samples(data, fmt=fmt):
            rows.append(sample)
            if limit is not None and len(rows) >= limit:
                break
    if not rows:
        fail(f"{data} holds no rows")
    return rows


def write_outputs(
    doc: dict[str, Any],
    out: Path | None,
    plot: Path | None,
    draw: Callable[[dict[str, Any], Path], Any],
) -> None:
    """Write a result document as strict JSON to ``out`` and draw it to ``plot``, when asked."""
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n")
        except OSError as exc:
            fail(f"cannot write {out}: {exc.strerror}")
        out_console.print(f"written: {out}", highlight=False)
    if plot is not None:
        with user_errors():
            draw(doc, plot)
        out_console.print(f"plot: {plot}", highlight=False)


BackendOption = Annotated[
    str, typer.Option(help="Where grading runs: local (worker processes) or ray (a Ray cluster).")
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)."),
]
