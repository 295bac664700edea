"""``truegrade audit``: are the items sound, or is the key (or the grader) wrong?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from truegrade.audit import CHECKS, AuditReport, audit_items
from truegrade.cli._common import (
    SPEC,
    BackendOption,
    FormatOption,
    GraderOptions,
    LimitOption,
    OutOption,
    QuietOption,
    RayAddressOption,
    ThresholdOption,
    TimeoutOption,
    WorkersOption,
    fail,
    load_rows,
    out_console,
    output_path,
    progress_bar,
    references_needed,
    write_text_file,
)
from truegrade.cli._grade import load_cli_grader

__all__ = ["audit_command", "audit_table", "parse_checks"]


def audit_table(report: AuditReport, *, limit: int = 30) -> Table:
    """Flagged items with their reasons."""
    table = Table(
        title=f"{report.items_flagged} of {report.items_total} items flagged", title_justify="left"
    )
    table.add_column("item", no_wrap=True)
    table.add_column("flag", no_wrap=True)
    table.add_column("reason", overflow="fold")
    shown = 0
    for item in report.items:
        for flag in item.flags:
            if shown >= limit:
                break
            table.add_row(item.id, flag.name, flag.reason)
            shown += 1
    return table


def parse_checks(checks: str | None) -> list[str]:
    """``--checks``: comma-separated audit checks, every one when not given, none for ``none``."""
    if checks == "none":
        return []
    chosen = [c.strip() for c in checks.split(",")] if checks else list(CHECKS)
    unknown = set(chosen) - set(CHECKS)
    if unknown:
        fail(f"unknown checks {', '.join(sorted(unknown))}; choose from {', '.join(CHECKS)}")
    return chosen


def audit_command(
    data: Annotated[
        Path,
        typer.Argument(
            help="Items (prompt, reference), optionally with responses grouped by 'group'."
        ),
    ],
    grader: Annotated[str, typer.Option("--grader", "-g", metavar=SPEC, help="Grader spec.")],
    option: GraderOptions = [],
    checks: Annotated[
        str | None, typer.Option(help=f"Comma-separated checks (default all: {', '.join(CHECKS)}).")
    ] = None,
    reruns: Annotated[
        int, typer.Option(help="Gradings per response for the flakiness check.", min=1)
    ] = 3,
    threshold: ThresholdOption = 0.5,
    duplicate_threshold: Annotated[
        float, typer.Option(help="Jaccard similarity from which prompts are near copies.")
    ] = 0.8,
    limit: LimitOption = None,
    workers: WorkersOption = None,
    timeout_s: TimeoutOption = None,
    backend: BackendOption = "local",
    ray_address: RayAddressOption = None,
    fmt: FormatOption = "auto",
    out: OutOption = None,
    md: Annotated[
        Path | None, typer.Option(callback=output_path, help="Write the flagged items as Markdown.")
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """Flag unsound items: failing or unreadable references, rejected equivalents, flaky
    grading, suspect keys, low discrimination, near duplicates, leaked answers."""
    chosen = parse_checks(checks)
    the_grader = load_cli_grader(
        grader, option, timeout_s, backend=backend, ray_address=ray_address, workers=workers
    )
    rows = load_rows(data, fmt=fmt, limit=limit, require=references_needed(the_grader))
    with progress_bar(enabled=not quiet) as bar:
        task = bar.add_task("auditing", total=None)
        report = audit_items(
            the_grader,
            rows,
            checks=chosen,
            reruns=reruns,
            threshold=threshold,
            duplicate_threshold=duplicate_threshold,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    out_console.print(audit_table(report))
    for check, status in report.checks.items():
        out_console.print(f"  {check}: {status}", highlight=False)
    if out is not None:
        write_text_file(out, json.dumps(report.model_dump(), indent=2) + "\n")
        out_console.print(f"report: {out}", highlight=False)
    if md is not None:
        write_text_file(md, report.markdown())
        out_console.print(f"markdown: {md}", highlight=False)
