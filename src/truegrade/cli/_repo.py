"""``truegrade repo``: repository tasks' own work, apart from grading them."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from truegrade.cli._common import (
    SPEC,
    PresetOption,
    announce_note,
    announce_preset,
    err_console,
    fail,
    field_map,
    out_console,
    output_path,
    parse_pairs,
    user_errors,
    write_text_file,
)

if TYPE_CHECKING:
    from truegrade.graders.repo import Prepared

__all__ = ["prepare_file", "repo_app"]

repo_app = typer.Typer(
    help="Repository tasks (SWE-bench style): their environments built ahead of grading.",
    no_args_is_help=True,
)


@repo_app.command("prepare")
def prepare_command(
    data: Annotated[Path, typer.Argument(help="Task rows (SWE-bench instance rows).")],
    grader: Annotated[
        str, typer.Option("--grader", "-g", metavar=SPEC, help="The repo grader's spec.")
    ] = "repo",
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Grader option KEY=VALUE (values are YAML)."),
    ] = None,
    preset: PresetOption = "auto",
    field: Annotated[
        list[str] | None, typer.Option(metavar="OURS=THEIRS", help="Read a field from a column.")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Environments built at once.")] = 2,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Write the report (JSON).")
    ] = None,
) -> None:
    """Build every environment the tasks of a file need, several at once, so that grading (a
    reward server's first request, a first training step) waits for none."""
    from rich.table import Table

    from truegrade.core import load_grader
    from truegrade.graders.repo import RepoGrader

    options = parse_pairs(option or [], "--option")
    with user_errors():
        # the spec alone first: its own problems (a file that is not one) are named as such
        if not isinstance(load_grader(grader), RepoGrader):
            fail(f"--grader must name a repo grader (type: repo), got {grader!r}")
        built = load_grader(grader, **options)
    assert isinstance(built, RepoGrader)
    report = prepare_file(built, data, preset=preset, field=field or [], workers=workers)
    table = Table(title=f"environments of {data.name}")
    for column in ("repository", "version", "Python", "packages", "tasks", "state", "seconds"):
        table.add_column(column)
    for p in report:
        table.add_row(
            p.repo, p.version or "", p.python, str(p.packages), str(len(p.tasks)), _state(p),
            f"{p.seconds:.1f}",
        )  # fmt: skip
    out_console.print(table)
    for p in report:
        if p.error:
            out_console.print(f"{p.repo} ({', '.join(p.tasks[:3])}): {p.error}", highlight=False)
    if out is not None:
        write_text_file(out, json.dumps([asdict(p) for p in report], indent=2) + "\n")
        out_console.print(f"report: {out}", highlight=False)
    if report and all(p.error for p in report):
        fail("no environment could be built", code=1)


def prepare_file(
    grader: object, data: Path, *, preset: str, field: list[str], workers: int
) -> list[Prepared]:
    """Build the environments of the task rows in ``data`` with ``grader`` (a repo grader),
    saying each as it is done on stderr; a row that is not a task stops with its line."""
    from truegrade.core import DataError
    from truegrade.data import read_samples
    from truegrade.graders.repo import RepoGrader, prepare_environments

    if not isinstance(grader, RepoGrader):
        fail(f"environments are prepared for a repo grader (type: repo), not {grader!r}")
    tasks, seen = [], set()
    with user_errors():
        for line, sample in read_samples(
            data,
            preset=preset,
            field_map=field_map(field) or None,
            on_preset=announce_preset(data),
            on_note=announce_note(data),
        ):
            try:
                task = grader.task_of(sample)
            except DataError as exc:
                raise DataError(exc.reason, path=str(data), line=line) from None
            if task.instance_id not in seen:
                seen.add(task.instance_id)
                tasks.append(task)
    if not tasks:
        fail(f"{data} holds no rows")
    err_console.print(f"{len(tasks)} tasks; building their environments, {workers} at a time")

    def said(p: Prepared) -> None:
        err_console.print(
            f"  {p.repo} {p.version or ''}: {_state(p)} in {p.seconds:.1f} s", highlight=False
        )

    return prepare_environments(grader, tasks, workers=workers, progress=said)


def _state(p: Prepared) -> str:
    return "failed" if p.error else ("built" if p.built else "already built")
