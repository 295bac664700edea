"""``truegrade validate``: agreement of a grader with labels, with honest intervals; on
preference data (``chosen`` / ``rejected``), pairwise accuracy; on recorded pairwise verdicts
(reward scores per response, JudgeBench outputs, MT-Bench judgments, AlpacaEval annotations),
pairwise agreement under named rules."""

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
    GraderKeyValueOption,
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
    from truegrade.validate import (
        Metric,
        PairAgreement,
        PairwiseReport,
        RecordedPair,
        SliceReport,
        ValidationReport,
    )

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
    if o.abstention_rate is not None:  # always printed: an abstention is a miss, never agreement
        head.add_row(
            "abstained",
            f"{o.confusion.abstained:,} ({_pct(o.abstention_rate)}), counted as wrong "
            "(ties and order-dependent verdicts)",
        )
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
    if c.abstained:
        abstained = o.abstention_rate
        confusion.caption = f"{c.abstained} abstentions are in no cell ({_pct(abstained)})"
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
        "accuracy",
        _pct(report.accuracy)
        + f"  (chosen scored above rejected; equal scores: {report.rules.equal_scores})",
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


def agreement_tables(report: PairAgreement, *, title: str) -> list[Table]:
    """MT-Bench's two agreements, win/tie/loss accuracy, macro-F1, kappa, the unreadable rate
    (always), the rules in force, the confusion, and one row per slice."""
    r = report.rules
    head = Table(title=title, title_justify="left", show_header=False)
    head.add_column("", style="bold")
    head.add_column("")
    rate = f"{report.unreadable_rate:.1%}" if report.unreadable_rate is not None else "n/a"
    dropped = ", ".join(f"{v:,} {k.replace('_', ' ')}" for k, v in report.dropped.items())
    head.add_row(
        "pairs",
        f"{report.pairs:,} ({report.counted:,} counted"
        + (f"; dropped: {dropped})" if dropped else ")"),
    )
    head.add_row(
        "unreadable verdicts", f"{report.unreadable:,} ({rate}), counted as {r.unreadable}"
    )
    head.add_row("accuracy", _pct(report.accuracy) + "  (win/tie/loss, under the rules below)")
    head.add_row("agreement with ties", _pct(report.agreement_with_ties))
    head.add_row("agreement without ties", _pct(report.agreement_without_ties))
    head.add_row("macro-F1", _num(report.macro_f1))
    head.add_row("Cohen's kappa", _num(report.kappa))
    head.add_row("tie verdicts", f"{report.verdict_ties:,}")
    head.add_row("orders disagreeing", f"{report.inconsistent_orders:,}")
    if report.equal_scores:
        head.add_row("equal scores", f"{report.equal_scores:,}")
    head.add_row(
        "rules",
        f"combine={r.combine} label-ties={r.label_ties} verdict-ties={r.verdict_ties} "
        f"equal-scores={r.equal_scores} unreadable={r.unreadable}",
    )
    tables = [head]
    classes = sorted({v for row in report.confusion.values() for v in row} | set(report.confusion))
    confusion = Table(title="confusion (label by verdict)", title_justify="left")
    confusion.add_column("")
    for c in classes:
        confusion.add_column(f"verdict: {c}", justify="right")
    for label in classes:
        if label in report.confusion:
            row = report.confusion[label]
            confusion.add_row(f"label: {label}", *(str(row.get(c, 0)) for c in classes))
    tables.append(confusion)
    for path, groups in report.slices.items():
        table = Table(title=f"by {path}", title_justify="left")
        for col in (path, "pairs", "unreadable", "accuracy", "agreement w/o ties", "kappa"):
            table.add_column(col)
        for value, g in groups.items():
            table.add_row(
                value,
                str(g.pairs),
                str(g.unreadable),
                _pct(g.accuracy),
                _pct(g.agreement_without_ties),
                _num(g.kappa),
            )
        tables.append(table)
    return tables


def _voted_pairs(
    votes: dict[str, list[tuple[float | None, ...]]],
    labels: dict[str, list[float]],
) -> list[RecordedPair]:
    """One pair per (label vote, judge vote) on the same key, as MT-Bench counts agreement."""
    from truegrade.validate import RecordedPair, winner_of

    out = []
    for key, label_votes in labels.items():
        for i, label in enumerate(label_votes):
            for j, vote in enumerate(votes.get(key, [()])):
                out.append(
                    RecordedPair(
                        id=f"{key}#{i}.{j}", label=winner_of(label), verdicts=list(vote), group=key
                    )
                )
    return out


def recorded_pairs(data: Path, scores: Path | None, fmt: str | None) -> list[RecordedPair]:
    """Labelled pairs from recorded verdicts (``scores``, or ``data`` itself) and labels.

    JudgeBench outputs carry their labels; truegrade grades of ``ID::chosen`` / ``ID::rejected``
    take them from the preference rows in ``data`` (chosen is the label's winner); MT-Bench and
    AlpacaEval verdicts take them from a file of the same shape in ``data`` (human votes).
    """
    from truegrade.core import DataError
    from truegrade.validate import (
        RecordedPair,
        detect_format,
        read_alpaca_eval,
        read_grades_pairs,
        read_judgebench,
        read_mt_bench,
    )

    source = scores or data
    kind = fmt or detect_format(source)
    if kind == "judgebench":
        return read_judgebench(source)
    if kind == "mt-bench":
        human = read_mt_bench(data)
        labels: dict[str, list[float]] = {
            k: [v[0] for v in vs if len(v) == 1 and v[0] is not None] for k, vs in human.items()
        }
        if scores is None or not any(labels.values()):
            raise DataError(
                "MT-Bench agreement needs the human judgments as the data file and the judge's "
                "judgments as --scores",
                path=str(data),
            )
        return _voted_pairs(read_mt_bench(scores), labels)
    if kind == "alpaca-eval":
        if scores is None:
            raise DataError(
                "AlpacaEval annotations hold no labels: give the human annotations as the data "
                "file and the judge's as --scores",
                path=str(data),
            )
        judged: dict[str, list[tuple[float | None, ...]]] = {}
        for p in read_alpaca_eval(scores):
            judged.setdefault(p.id, []).append(tuple(p.verdicts))
        people: dict[str, list[float]] = {}
        for p in read_alpaca_eval(data):
            if p.verdicts and p.verdicts[0] is not None:
                people.setdefault(p.id, []).append(p.verdicts[0])
        return _voted_pairs(judged, people)
    if scores is None:
        raise DataError("reward scores need the preference rows as the data file", path=str(data))
    by_id = read_grades_pairs(scores)
    rows = load_rows(data, preset="auto", fields=[], limit=None)
    pairs = []
    for s in rows:
        if "chosen" not in s.metadata or "rejected" not in s.metadata:
            continue
        chosen, rejected = by_id.get(s.key, (None, None))
        both = chosen is not None and rejected is not None
        pairs.append(
            RecordedPair(
                id=s.key,
                label="A",
                scores=(chosen, rejected) if both else None,  # type: ignore[arg-type]
                group=s.group,
                fields={k: v for k, v in s.metadata.items() if isinstance(v, (str, int))},
            )
        )
    if not pairs:
        raise DataError("no rows with both 'chosen' and 'rejected'", path=str(data))
    return pairs


def _grades_from_file(path: Path, samples: list[Sample]) -> list[Grade]:
    from pydantic import ValidationError

    from truegrade.core import DataError, Grade, describe_validation_error, require_fields
    from truegrade.data import read_results

    by_id = {str(r["id"]): (line, r) for line, r in read_results(path)}
    missing = [s.key for s in samples if s.key not in by_id]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise DataError(f"no grade for {len(missing)} labelled rows (ids {shown})", path=str(path))
    grades = []
    for s in samples:
        line, record = by_id[s.key]
        if record.get("error") is None:
            require_fields(record, ("score",), "grade", path=path, line=line)
        try:
            grades.append(Grade.from_record(record))
        except ValidationError as exc:
            problems = describe_validation_error(exc, whole="record")
            raise DataError(f"not a grade ({problems})", path=str(path), line=line) from None
    return grades


def _fields(by: list[str]) -> list[str]:
    """``--by`` for recorded pairs: their fields are plain names (``category``), and
    ``metadata.X`` names the same field."""
    return [b.removeprefix("metadata.") for b in by]


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
    option: GraderKeyValueOption = [],
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
            "response higher? The default when no row has a label and rows have both. With "
            "--scores (or no grader): recorded verdicts or reward scores against pairwise labels.",
        ),
    ] = False,
    verdicts_format: Annotated[
        str | None,
        typer.Option(
            "--verdicts-format",
            help="Shape of the recorded verdicts: judgebench, mt-bench, alpaca-eval, grades "
            "(default: from the file's columns).",
        ),
    ] = None,
    combine: Annotated[
        str,
        typer.Option(
            help="Two orders of a comparison: both_agree (a winner only when both name it), "
            "any_winner ((winner, tie) -> winner), average (mean preference)."
        ),
    ] = "both_agree",
    label_ties: Annotated[
        str, typer.Option(help="Tie labels: keep (a third class) or drop the pair.")
    ] = "keep",
    verdict_ties: Annotated[
        str,
        typer.Option(help="A tie verdict against a winner: class (wrong), half, or drop the pair."),
    ] = "class",
    equal_scores: Annotated[
        str, typer.Option(help="Equal reward scores: tie (tie rules apply), wrong, or half.")
    ] = "tie",
    unreadable: Annotated[
        str,
        typer.Option(
            help="Unreadable verdicts: wrong, tie (that order reads as a tie), or drop the pair; "
            "their rate is always printed."
        ),
    ] = "wrong",
    quiet: QuietOption = False,
) -> None:
    """Measure how well a grader agrees with labels (false pass rate first), or with
    preferences (pairwise accuracy)."""
    from pydantic import ValidationError

    from truegrade.core import run_grader
    from truegrade.validate import (
        VERDICT_FORMATS,
        PairRules,
        is_preference_row,
        pairwise_agreement,
        validate_grades,
        validate_pairwise,
    )

    try:
        rules = PairRules(
            combine=combine,  # type: ignore[arg-type]
            label_ties=label_ties,  # type: ignore[arg-type]
            verdict_ties=verdict_ties,  # type: ignore[arg-type]
            equal_scores=equal_scores,  # type: ignore[arg-type]
            unreadable=unreadable,  # type: ignore[arg-type]
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        fail(f"--{str(problem['loc'][0]).replace('_', '-')}: {problem['msg']}")
    if verdicts_format is not None and verdicts_format not in VERDICT_FORMATS:
        fail(f"--verdicts-format must be one of {', '.join(VERDICT_FORMATS)}")
    if pairwise and grader is None:
        with user_errors():
            agreement = pairwise_agreement(
                recorded_pairs(data, scores, verdicts_format), rules, by=_fields(by)
            )
        title = f"pairwise agreement of recorded verdicts ({scores or data})"
        for table in agreement_tables(agreement, title=title):
            out_console.print(table)
        if out is not None:
            write_text_file(out, json.dumps(agreement.model_dump(), indent=2) + "\n")
            out_console.print(f"report: {out}", highlight=False)
        return
    if (grader is None) == (scores is None):
        fail("give exactly one of --grader (grade now) or --scores (grades already computed)")
    samples = load_rows(data, preset=preset, fields=field, limit=limit)
    labelled = [s for s in samples if s.label is not None]
    if pairwise or (not labelled and any(is_preference_row(s) for s in samples)):
        if grader is None:
            fail(
                "pairwise accuracy grades both responses of each pair: give --grader (or "
                "--pairwise --scores FILE for scores already computed)"
            )
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
                rules=rules,
                progress=lambda done, total: bar.update(task, completed=done),
            )
        for table in pairwise_tables(result, show=show):
            out_console.print(table)
        if result.agreement is not None:
            head = agreement_tables(result.agreement, title="pairwise agreement")[0]
            out_console.print(head)
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
