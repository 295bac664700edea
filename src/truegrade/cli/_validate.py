"""``truegrade validate``: agreement of a grader with labels, with honest intervals; on
preference data (``chosen`` / ``rejected``), pairwise accuracy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from truegrade.cli._common import (
    SPEC,
    BackendOption,
    FieldOption,
    GraderOptions,
    LimitOption,
    OutOption,
    PresetOption,
    QuietOption,
    RayAddressOption,
    ThresholdOption,
    TimeoutOption,
    WorkersOption,
    err_console,
    fail,
    fail_if_all_errors,
    load_rows,
    out_console,
    progress_bar,
    user_errors,
    write_text_file,
)
from truegrade.cli._grade import load_cli_grader

if TYPE_CHECKING:
    from truegrade.core import Grade, Sample
    from truegrade.validate import Metric, PairwiseReport, SliceReport, ValidationReport

__all__ = ["validate_command"]


def _pct(metric: Metric | None) -> str:
    if metric is None or metric.estimate is None:
        return "n/a"
    low, high = metric.ci_low or 0.0, metric.ci_high or 0.0
    return f"{metric.estimate:.1%} [{low:.1%}, {high:.1%}]"


def _num(metric: Metric | None) -> str:
    if metric is None or metric.estimate is None:
        return "n/a"
    return f"{metric.estimate:.3f} [{metric.ci_low or 0:.3f}, {metric.ci_high or 0:.3f}]"


def _slice_rows(table: Table, name: str, r: SliceReport, *, auroc: bool) -> None:
    cells = [
        name,
        str(r.graded),
        str(r.grader_errors),
        _pct(r.false_pass_rate),
        _pct(r.false_fail_rate),
        _pct(r.accuracy),
        _num(r.kappa),
    ]
    table.add_row(*cells, *([_num(r.auroc) if r.auroc is not None else "n/a"] if auroc else []))


def report_tables(report: ValidationReport) -> list[Table]:
    """The overall metrics, the confusion matrix, and one row per slice."""
    o = report.overall
    head = Table(title="validation against labels", title_justify="left", show_header=False)
    head.add_column("", style="bold")
    head.add_column("")
    head.add_row(
        "items",
        f"{o.items:,} ({o.graded:,} graded, {o.grader_errors:,} grader "
        f"errors, {report.unlabelled:,} unlabelled rows left out)",
    )
    head.add_row("false pass rate", _pct(o.false_pass_rate) + "  (wrong responses passed)")
    head.add_row("false fail rate", _pct(o.false_fail_rate) + "  (right responses failed)")
    head.add_row("accuracy", _pct(o.accuracy))
    head.add_row("Cohen's kappa", _num(o.kappa))
    if o.auroc is not None:
        head.add_row("AUROC (scores)", _num(o.auroc))
    head.add_row(
        "pass rate: grader / label", f"{_pct(o.grader_pass_rate)} / {_pct(o.label_pass_rate)}"
    )
    c = o.confusion
    confusion = Table(title="confusion", title_justify="left")
    confusion.add_column("")
    confusion.add_column("label: pass", justify="right")
    confusion.add_column("label: fail", justify="right")
    confusion.add_row("grader: pass", str(c.true_pass), f"[red]{c.false_pass}[/]")
    confusion.add_row("grader: fail", str(c.false_fail), str(c.true_fail))
    tables = [head, confusion]
    for path, groups in report.slices.items():
        table = Table(title=f"by {path}", title_justify="left")
        scored = o.auroc is not None  # the grader gives scores: AUROC per slice too
        columns = [path, "graded", "errors", "false pass", "false fail", "accuracy", "kappa"]
        for col in columns + (["AUROC"] if scored else []):
            table.add_column(col)
        for value, r in groups.items():
            _slice_rows(table, value, r, auroc=scored)
        tables.append(table)
    return tables


def _listing(what: str, show: int, total: int) -> Table:
    return Table(title=f"{what} (first {min(show, total)} of {total})", title_justify="left")


def pairwise_tables(report: PairwiseReport, *, show: int) -> list[Table]:
    """Accuracy overall, one row per slice, and the first ``show`` pairs the grader got wrong."""
    head = Table(title="pairwise accuracy on preference pairs", title_justify="left")
    head.show_header = False
    head.add_column("", style="bold")
    head.add_column("")
    head.add_row(
        "pairs",
        f"{report.pairs:,} ({report.graded:,} graded, {report.grader_errors:,} with a "
        "grader error on either side, left out)",
    )
    head.add_row(
        "accuracy", _pct(report.accuracy) + "  (chosen scored above rejected; a tie counts half)"
    )
    head.add_row("ties", f"{report.ties:,}")
    if report.mean_margin is not None:
        head.add_row("mean margin", f"{report.mean_margin:.4g}  (chosen minus rejected score)")
    tables = [head]
    for path, groups in report.slices.items():
        table = Table(title=f"by {path}", title_justify="left")
        for col in (path, "pairs", "ties", "accuracy"):
            table.add_column(col)
        for value, r in groups.items():
            table.add_row(value, str(r.pairs), str(r.ties), _pct(r.accuracy))
        tables.append(table)
    if report.wrong and show:
        table = _listing("pairs not won by the chosen response", show, len(report.wrong))
        for col in ("id", "chosen score", "rejected score"):
            table.add_column(col)
        for w in report.wrong[:show]:
            table.add_row(w.id, f"{w.chosen_score:.4g}", f"{w.rejected_score:.4g}")
        tables.append(table)
    return tables


def _grades_from_file(path: Path, samples: list[Sample]) -> list[Grade]:
    from pydantic import ValidationError

    from truegrade.core import DataError, Grade, describe_validation_error, require_fields
    from truegrade.data import read_results

    by_id = {str(r["id"]): (line, r) for line, r in read_results(path)}
    missing = [s.key for s in samples if s.key not in by_id]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise DataError(f"no grade for {len(missing)} labelled rows (ids {shown})", path=str(path))
    fields = set(Grade.model_fields)
    grades = []
    for s in samples:
        line, record = by_id[s.key]
        if record.get("error") is None:
            require_fields(record, ("score",), "grade", path=path, line=line)
        try:
            grades.append(Grade.model_validate({k: v for k, v in record.items() if k in fields}))
        except ValidationError as exc:
            problems = describe_validation_error(exc, whole="record")
            raise DataError(f"not a grade ({problems})", path=str(path), line=line) from None
    return grades


def validate_command(
    data: Annotated[
        Path,
        typer.Argument(
            help="Rows with responses and a 'label', or preference rows (chosen, rejected)."
        ),
    ],
    grader: Annotated[
        str | None, typer.Option("--grader", "-g", metavar=SPEC, help="Grader spec.")
    ] = None,
    option: GraderOptions = [],
    scores: Annotated[
        Path | None,
        typer.Option(help="Precomputed grades (a results JSONL, joined by id) instead of grading."),
    ] = None,
    by: Annotated[
        list[str], typer.Option(help="Slice by a field, e.g. metadata.subject (repeatable).")
    ] = [],
    threshold: ThresholdOption = 0.5,
    label_threshold: Annotated[
        float, typer.Option(help="Numeric labels at or above this pass.")
    ] = 0.5,
    limit: LimitOption = None,
    workers: WorkersOption = None,
    timeout_s: TimeoutOption = None,
    backend: BackendOption = "local",
    ray_address: RayAddressOption = None,
    preset: PresetOption = "auto",
    field: FieldOption = [],
    out: OutOption = None,
    show: Annotated[int, typer.Option(help="Disagreeing items to print.", min=0)] = 10,
    pairwise: Annotated[
        bool,
        typer.Option(
            "--pairwise",
            help="Preference rows (prompt, chosen, rejected): does the grader score the chosen "
            "response higher? The default when no row has a label and rows have both.",
        ),
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Measure how well a grader agrees with labels (false pass rate first), or with
    preferences (pairwise accuracy)."""
    from truegrade.core import run_grader
    from truegrade.validate import is_preference_row, validate_grades, validate_pairwise

    if (grader is None) == (scores is None):
        fail("give exactly one of --grader (grade now) or --scores (grades already computed)")
    samples = load_rows(data, preset=preset, fields=field, limit=limit)
    labelled = [s for s in samples if s.label is not None]
    if pairwise or (not labelled and any(is_preference_row(s) for s in samples)):
        if grader is None:
            fail("pairwise accuracy grades both responses of each pair: give --grader")
        pairs = [s for s in samples if is_preference_row(s)]
        if not pairs:
            fail(f"{data} has no rows with both 'chosen' and 'rejected'")
        the_grader = load_cli_grader(
            grader, option, timeout_s, backend=backend, ray_address=ray_address, workers=workers
        )
        with progress_bar(enabled=not quiet) as bar:
            task = bar.add_task("grading pairs", total=2 * len(pairs))
            result = validate_pairwise(
                the_grader,
                pairs,
                by=by,
                progress=lambda done, total: bar.update(task, completed=done),
            )
        for table in pairwise_tables(result, show=show):
            out_console.print(table)
        if out is not None:
            write_text_file(out, json.dumps(result.model_dump(), indent=2) + "\n")
            out_console.print(f"report: {out}", highlight=False)
        return
    if not labelled:
        fail(f"{data} has no rows with a 'label': nothing to validate against")
    if scores is not None:
        with user_errors():
            grades = _grades_from_file(scores, labelled)
        spec: dict[str, object] | str = f"scores from {scores}"
    else:
        assert grader is not None
        the_grader = load_cli_grader(
            grader, option, timeout_s, backend=backend, ray_address=ray_address, workers=workers
        )
        missing = [s.key for s in labelled if s.response is None]
        if missing:
            fail(f"{len(missing)} labelled rows have no response (first: {missing[0]})")
        grades = []
        with progress_bar(enabled=not quiet) as bar:
            task = bar.add_task("grading", total=len(labelled))
            for start in range(0, len(labelled), 256):
                grades.extend(run_grader(the_grader, labelled[start : start + 256]))
                bar.update(task, completed=len(grades))
        spec = getattr(the_grader, "spec", None) or grader
    fail_if_all_errors(len(grades), [g.error for g in grades if g.error], "labelled row")
    report = validate_grades(
        labelled, grades, grader=spec, threshold=threshold, label_threshold=label_threshold, by=by
    )
    report.unlabelled = len(samples) - len(labelled)
    for column in by:
        if set(report.slices.get(column, {})) == {"(missing)"}:
            err_console.print(
                f"[yellow]warning:[/] no labelled row has {column!r}: every row is in the "
                "'(missing)' slice (a typo in --by?)",
                highlight=False,
            )
    for table in report_tables(report):
        out_console.print(table)
    if report.disagreements and show:
        table = _listing("disagreements", show, len(report.disagreements))
        for col in ("id", "kind", "label", "score", "flags", "explanation"):
            table.add_column(col, overflow="fold")
        for d in report.disagreements[:show]:
            table.add_row(
                d.id, d.kind, str(d.label), f"{d.score:g}", ", ".join(d.flags), d.explanation[:80]
            )
        out_console.print(table)
    if out is not None:
        write_text_file(out, json.dumps(report.model_dump(), indent=2) + "\n")
        out_console.print(f"report: {out}", highlight=False)
