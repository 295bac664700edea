"""``truegrade rubric``: lint rubrics, meta-evaluate criterion evaluators, aggregate scores."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from truegrade.cli._common import (
    SPEC,
    FieldOption,
    GraderKeyValueOption,
    PresetOption,
    err_console,
    fail,
    load_rows,
    out_console,
    output_path,
    parse_pairs,
    user_errors,
    write_outputs,
)
from truegrade.rubric import DEFAULT_HARM_TAGS

if TYPE_CHECKING:
    from truegrade.graders.rubric import RubricGrader
    from truegrade.rubric import Breakdown, LintReport, RubricSource
    from truegrade.stats import Estimate

__all__ = ["rubric_app", "rubric_grader"]

rubric_app = typer.Typer(
    help="Check the checks: lint rubrics, meta-evaluate criterion evaluators against experts, "
    "aggregate rubric scores.",
    no_args_is_help=True,
)

SpecOption = Annotated[
    str | None,
    typer.Option(
        "--spec",
        metavar=SPEC,
        help="The rubric grader whose evaluators are used (YAML spec or 'rubric'); its judge "
        "judges criteria without a check.",
    ),
]
JudgeEndpointOption = Annotated[
    str | None,
    typer.Option(help="Shorthand for a judge: an OpenAI-compatible base URL (with --judge-model)."),
]
JudgeModelOption = Annotated[
    str | None, typer.Option(help="The judge model (with --judge-endpoint).")
]


def rubric_grader(
    spec: str | None, endpoint: str | None, model: str | None, options: list[str]
) -> RubricGrader | None:
    """The rubric grader named by ``--spec`` / ``--judge-*`` / ``-o``, or None when none was."""
    from truegrade.core import load_grader
    from truegrade.graders.rubric import RubricGrader

    extra = parse_pairs(options, "--option")
    if endpoint or model:
        if not (endpoint and model):
            fail("--judge-endpoint and --judge-model go together")
        extra["judge"] = {**extra.get("judge", {}), "endpoint": endpoint, "model": model}
    if spec is None and not extra:
        return None
    with user_errors():
        grader = load_grader(spec or "rubric", **extra)
    if not isinstance(grader, RubricGrader):
        fail(f"--spec must name a rubric grader (type: rubric), got {type(grader).__name__}")
    return grader


def _sources(path: Path, preset: str, field: list[str]) -> list[RubricSource]:
    """One shared rubric (a YAML/JSON rubric file) or each row's own (a data file)."""
    from truegrade.core import SpecError, read_json
    from truegrade.graders.rubric import load_rubric, parse_rubric
    from truegrade.rubric import RubricSource

    if path.suffix in (".yaml", ".yml"):
        with user_errors():
            return [RubricSource(path.name, load_rubric(path))]
    if path.suffix == ".json":
        with user_errors():
            data = read_json(path, "rubric")
        if isinstance(data, dict) or (
            isinstance(data, list) and data and isinstance(data[0], dict) and "criterion" in data[0]
        ):
            with user_errors():
                return [RubricSource(path.name, parse_rubric(data, where=str(path)))]
    sources: dict[str, RubricSource] = {}
    for sample in load_rows(path, preset=preset, fields=field, limit=None):
        name = sample.group or str(sample.id)
        if name in sources:
            continue
        try:
            rubric = parse_rubric(sample.reference, where=f"row {sample.id}")
        except SpecError as exc:
            fail(f"{path}: {exc}")
        tags = sample.metadata.get("example_tags") or ()
        sources[name] = RubricSource(
            name, rubric, sample.prompt, tuple(str(t) for t in tags if isinstance(t, str))
        )
    return list(sources.values())


def _lint_table(report: LintReport) -> Table:
    table = Table(title="rubric lint", title_justify="left")
    for column in ("rubric", "criterion", "finding", "reason"):
        table.add_column(column, overflow="fold")
    for f in report.findings:
        colour = "red" if f.severity == "error" else "yellow"
        where = "-" if f.criterion is None else f"{f.criterion}: {(f.text or '')[:50]}"
        table.add_row(f.rubric, where, f"[{colour}]{f.code}[/]", f.reason)
    return table


@rubric_app.command("lint")
def lint_command(
    rubric: Annotated[
        Path,
        typer.Argument(
            help="A rubric (YAML/JSON list of {criterion, points, tags}) or data rows with "
            "their own rubrics (HealthBench files as they are)."
        ),
    ],
    exemplars: Annotated[
        Path | None,
        typer.Option(help="Responses (rows) to see which criteria are never or always met."),
    ] = None,
    spec: SpecOption = None,
    judge_endpoint: JudgeEndpointOption = None,
    judge_model: JudgeModelOption = None,
    option: GraderKeyValueOption = [],
    harm_tag: Annotated[
        list[str],
        typer.Option(help="Tag fragments marking rubrics where harm is possible (repeatable)."),
    ] = list(DEFAULT_HARM_TAGS),
    overlap: Annotated[
        float, typer.Option(help="Content-word Jaccard at which criteria overlap.", min=0, max=1)
    ] = 0.6,
    min_exemplars: Annotated[
        int,
        typer.Option(help="Exemplar verdicts a criterion needs before never/always-met.", min=1),
    ] = 3,
    fail_on: Annotated[
        str, typer.Option(help="Exit 1 on findings of this severity: error, warning or never.")
    ] = "error",
    preset: PresetOption = "auto",
    field: FieldOption = [],
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Write the findings (JSON).")
    ] = None,
) -> None:
    """Find criteria that are keyword-gameable, vague, duplicated, overweighted, missing
    (no negative criteria where harm is possible), or never/always met."""
    from truegrade.rubric import lint_rubrics

    if fail_on not in ("error", "warning", "never"):
        fail("--fail-on is error, warning or never")
    sources = _sources(rubric, preset, field)
    grader = rubric_grader(spec, judge_endpoint, judge_model, option)
    judged = sum(1 for s in sources for i in s.rubric.items if i.judged)
    if grader is None and judged:
        err_console.print(
            f"[yellow]note:[/] {judged} criteria are judged by an LLM and no judge was given "
            "(--judge-endpoint/--judge-model or --spec): they are not probed for keyword gaming"
        )
    rows = (
        load_rows(exemplars, preset=preset, fields=field, limit=None, require=("response",))
        if exemplars is not None
        else []
    )
    with user_errors():
        report = lint_rubrics(
            sources,
            grader=grader,
            exemplars=rows,
            harm_tags=harm_tag,
            overlap_threshold=overlap,
            min_exemplars=min_exemplars,
        )
    if report.findings:
        out_console.print(_lint_table(report))
    counts = ", ".join(f"{k}: {v}" for k, v in report.counts.items()) or "no findings"
    out_console.print(
        f"{report.rubrics} rubrics, {report.criteria} criteria, {report.probes} keyword probes, "
        f"{report.exemplars} exemplars: {counts}",
        highlight=False,
    )
    if rows:
        skipped = "; ".join(f"{n} {why}" for why, n in report.exemplar_skipped.items())
        note = f" (not checked: {skipped})" if skipped else ""
        colour = "yellow" if skipped else "dim"
        err_console.print(
            f"[{colour}]never/always-met checked on {report.exemplar_checked} of "
            f"{report.criteria} criteria{note}[/]",
            highlight=False,
        )
    write_outputs(report.to_dict(), out, None, lambda _d, _p: None)
    severities = {f.severity for f in report.findings}
    if (fail_on == "error" and "error" in severities) or (fail_on == "warning" and severities):
        raise typer.Exit(1)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _est(e: Estimate | None) -> str:
    if e is None or e.estimate != e.estimate:
        return "n/a"
    return f"{e.estimate:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]"


def _meta_table(kind: str, parts: Sequence[Breakdown]) -> Table:
    table = Table(title=f"agreement with the experts, by {kind}", title_justify="left")
    for column in (kind, "rows", "macro-F1", "experts' macro-F1", "gap"):
        table.add_column(column, overflow="fold")
    for b in parts:
        gap = "n/a" if b.gap is None else f"{b.gap:+.3f}"
        table.add_row(b.name, str(b.rows), _est(b.macro_f1), _est(b.expert_macro_f1), gap)
    return table


@rubric_app.command("meta")
def meta_command(
    data: Annotated[
        Path,
        typer.Argument(
            help="Rows of (prompt, completion, criterion, expert labels): HealthBench's "
            "meta-eval format (rubric, binary_labels, category)."
        ),
    ],
    spec: SpecOption = None,
    judge_endpoint: JudgeEndpointOption = None,
    judge_model: JudgeModelOption = None,
    option: GraderKeyValueOption = [],
    verdicts: Annotated[
        Path | None,
        typer.Option(
            help="Verdicts already made, one JSON line per data row with 'met' (true/false/"
            "null), instead of an evaluator."
        ),
    ] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.", min=100)] = 2000,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Write the report (JSON).")
    ] = None,
) -> None:
    """Criterion verdicts against expert labels: macro-F1 (as HealthBench computes it), kappa,
    per-category and per-tag breakdowns with CIs, worst categories first."""
    from truegrade.core import require_fields
    from truegrade.data import read_rows
    from truegrade.rubric import meta_evaluate, meta_rows

    with user_errors():
        rows = meta_rows(list(read_rows(data)), path=str(data))
    if not rows:
        fail(f"{data} holds no rows")
    grader = rubric_grader(spec, judge_endpoint, judge_model, option)
    made: list[bool | None] | None = None
    if verdicts is not None:
        if grader is not None:
            fail("give an evaluator (--spec / --judge-*) or --verdicts, not both")
        made = []
        with user_errors():
            for line, record in read_rows(verdicts, what="verdicts file"):
                require_fields(record, ("met",), "verdict", path=verdicts, line=line)
                met = record["met"]
                if met is not None and not isinstance(met, bool):
                    fail(f"{verdicts}:{line}: 'met' must be true, false or null")
                made.append(met)
        if len(made) != len(rows):
            fail(f"{verdicts} has {len(made)} verdicts for {len(rows)} rows in {data}")
    elif grader is None:
        fail("name an evaluator (--spec, or --judge-endpoint and --judge-model) or --verdicts")
    with user_errors():
        report = meta_evaluate(rows, grader=grader, verdicts=made, n_resamples=resamples)
    if report.categories:
        out_console.print(_meta_table("category", report.worst))
    if report.tags:
        out_console.print(_meta_table("tag", report.tags))
    if report.raters:
        out_console.print(_meta_table("rater", report.raters))
    out_console.print(
        f"{report.rows} rows, {report.pairs} (evaluator, expert) pairs, {report.errors} errors\n"
        f"macro-F1 {_est(report.macro_f1)}   experts among themselves "
        f"{_est(report.expert_macro_f1)}\n"
        f"kappa {_est(report.kappa)}   agreement with the majority "
        f"{_est(report.majority_accuracy)}\n"
        f"met rate: evaluator {report.predicted_met_rate:.1%}, experts "
        f"{report.expert_met_rate:.1%}",
        highlight=False,
    )
    write_outputs(report.to_dict(), out, None, lambda _d, _p: None)


@rubric_app.command("score")
def score_command(
    results: Annotated[Path, typer.Argument(help="A results file of rubric grades.")],
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.", min=100)] = 2000,
    data: Annotated[
        Path | None,
        typer.Option(
            help="The rows that were graded: their `group` (by id) clusters the interval, so "
            "several responses to one prompt count as one prompt."
        ),
    ] = None,
    preset: PresetOption = "auto",
    field: FieldOption = [],
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Write the summary (JSON).")
    ] = None,
) -> None:
    """The overall rubric score as HealthBench reports it (the clipped mean of the unclipped
    example scores, with a bootstrap CI) and one per tag."""
    from truegrade.core import DataError, require_fields
    from truegrade.data import read_results
    from truegrade.rubric import aggregate_rubric_scores

    records: list[dict[str, Any]] = []
    with user_errors():
        for line, record in read_results(results):
            if not record.get("error"):
                require_fields(record, ("score",), "rubric grade", path=results, line=line)
                if not _is_number(record["score"]):
                    raise DataError(
                        "rubric grade's 'score' is not a number", path=str(results), line=line
                    )
            records.append(record)
    if not records:
        fail(f"{results} holds no results")
    clusters = None
    if data is not None:
        group_of = {
            row.key: row.group if row.group is not None else row.key
            for row in load_rows(data, preset=preset, fields=field, limit=None)
        }
        missing = [str(r["id"]) for r in records if str(r["id"]) not in group_of]
        if missing:
            first = missing[0] if len(missing[0]) <= 60 else missing[0][:60] + "..."
            fail(
                f"{len(missing)} result ids of {results} are not rows of {data} (first: "
                f"{first!r}): give the rows that were graded"
            )
        clusters = [group_of[str(r["id"])] for r in records]
    summary = aggregate_rubric_scores(records, clusters=clusters, n_resamples=resamples)
    table = Table(title="rubric score (clipped mean, 95% bootstrap CI)", title_justify="left")
    table.add_column("slice")
    table.add_column("score")
    table.add_column("n", justify="right")
    if clusters is not None:
        table.add_column("prompts", justify="right")

    def counts(estimate: Estimate) -> list[str]:
        return [str(estimate.n)] + ([str(estimate.clusters)] if clusters is not None else [])

    table.add_row("overall", _est(summary.overall), *counts(summary.overall))
    for tag, estimate in summary.tags.items():
        table.add_row(tag, _est(estimate), *counts(estimate))
    out_console.print(table)
    if summary.errors:
        err_console.print(f"[yellow]{summary.errors} rows had grading errors and are left out[/]")
    write_outputs(summary.to_dict(), out, None, lambda _d, _p: None)
