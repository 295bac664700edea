"""``truegrade lc`` and ``truegrade bias``: length-controlled win rates and judge-bias reports
from recorded pairwise verdicts."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from truegrade.cli._common import (
    err_console,
    fail,
    out_console,
    output_path,
    user_errors,
    write_text_file,
)

if TYPE_CHECKING:
    from truegrade.lc import BiasReport, LCReport
    from truegrade.stats import Estimate

__all__ = ["bias_command", "bias_table", "lc_command", "lc_table"]


def _pct(value: float, se: float | None = None) -> str:
    if value != value:
        return "n/a"
    return f"{value:5.1f}" + (f" ± {se:.1f}" if se is not None and se == se else "")


def lc_table(report: LCReport, *, against: dict[str, float] | None = None, title: str) -> Table:
    """Per model: verdicts, raw and LC win rates with standard errors, average length."""
    table = Table(title=title, title_justify="left")
    for name, justify in (
        ("model", "left"),
        ("n", "right"),
        ("win rate %", "right"),
        ("LC win rate %", "right"),
        ("avg length", "right"),
        ("length coef", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=name == "model")  # type: ignore[arg-type]
    if against is not None:
        table.add_column("LC vs other %", justify="right")
    for entry in report.models:
        cells = [
            entry.model,
            str(entry.n),
            _pct(entry.win_rate_pct, entry.standard_error_pct),
            _pct(entry.lc_win_rate_pct, entry.lc_standard_error_pct),
            f"{entry.avg_length:,.0f}",
            f"{entry.coefficients.get('length', 0.0):+.2f}",
        ]
        if against is not None:
            cells.append(_pct(against[entry.model]))
        table.add_row(*cells)
    return table


def lc_command(
    data: Annotated[
        Path, typer.Argument(help="Pairwise verdicts: preferences CSV or annotation JSON(L).")
    ],
    baseline: Annotated[
        str | None,
        typer.Option(
            help="The baseline: which generator the verdicts compare against (needed when they "
            "compare against several), or another model to report LC win rates against."
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
    control: Annotated[
        list[str],
        typer.Option(
            help="Also control for a covariate (markdown_lists, markdown_headers; needs "
            "annotation records with the outputs). Repeatable."
        ),
    ] = [],
    leaderboard: Annotated[
        Path | None,
        typer.Option(help="A published leaderboard CSV to check the numbers against."),
    ] = None,
    exclude: Annotated[
        list[str],
        typer.Option(help="Report this model apart in the leaderboard check (repeatable)."),
    ] = [],
    regularize: Annotated[
        float, typer.Option(help="Weight of the pooled-length regularisation (0: none).", min=0)
    ] = 0.2,
    bias: Annotated[bool, typer.Option(help="Add the judge-bias report.")] = False,
) -> None:
    """Length-controlled win rates (AlpacaEval's GLM) with raw win rates and standard errors."""
    from truegrade.core import DataError
    from truegrade.lc import (
        LCOptions,
        bias_report,
        compare_to_leaderboard,
        lc_win_rates_against,
        length_controlled,
        read_judge_verdicts,
        read_leaderboard,
    )

    with user_errors():
        try:  # AlpacaEval-style verdicts, or the judge grader's own pairwise grades
            verdicts = read_judge_verdicts(data)
        except DataError as exc:
            if baseline is None or "several baselines" not in str(exc):
                raise
            verdicts = read_judge_verdicts(data, baseline=baseline)
    if verdicts.table is None:
        fail(
            f"{data} holds pointwise judge scores: length-controlled win rates need pairwise "
            "verdicts (a judge in mode: pairwise); `truegrade bias` reports how these scores "
            "track length"
        )
    table = verdicts.table
    if leaderboard is not None:  # read before the fit: a bad file fails now, not after it
        with user_errors():
            published_lc = read_leaderboard(leaderboard)
            published_raw = read_leaderboard(leaderboard, column="win_rate")
    # a --baseline that is not the verdicts' own: a model to compare against through the fit
    other = baseline if baseline not in (None, table.baseline) else None
    if other is not None and other not in table.model_names:
        fail(f"--baseline {other!r} is neither the verdicts' baseline nor a model in {data}")
    try:
        report = length_controlled(
            table, controls=["length", *control], options=LCOptions(regularize_lambda=regularize)
        )
    except ValueError as exc:
        fail(str(exc))
    compared = len([m for m in report.models if m.model != report.baseline])
    if compared < 5:
        err_console.print(
            f"[yellow]note:[/] instruction difficulty is estimated jointly across models; with "
            f"{compared} model(s) it is weak and LC win rates lean on the regularisation"
        )
    against = lc_win_rates_against(report, other) if other is not None else None
    title = f"{len(report.models)} models against {report.baseline} ({len(table):,} verdicts)"
    out_console.print(lc_table(report, against=against, title=title))
    length = report.pooled_effects.get("length", math.nan)
    out_console.print(
        f"pooled length effect: {length:+.2f} logits per unit of tanh(length difference / sd); "
        "positive means the judge prefers the longer output"
        + (
            f"; {table.duplicates_dropped:,} duplicate rows dropped"
            if table.duplicates_dropped
            else ""
        ),
        highlight=False,
    )
    result: dict[str, Any] = {"report": report.to_dict()}
    if against is not None:
        result["lc_win_rate_pct_against"] = {"baseline": other, "win_rates": against}
    if leaderboard is not None:
        lc_check = compare_to_leaderboard(report, published_lc, exclude=exclude)
        raw_check = compare_to_leaderboard(
            report, published_raw, column="win_rate_pct", exclude=exclude
        )
        for label, check in (("raw win rate", raw_check), ("LC win rate", lc_check)):
            out_console.print(
                f"{label} vs {leaderboard.name}: {check.n} models, Spearman "
                f"{check.spearman:.4f}, mean |diff| {check.mean_abs_error:.2f} points, "
                f"max {check.max_abs_error:.2f}",
                highlight=False,
            )
        for name, pair in lc_check.excluded.items():
            out_console.print(
                f"  {name} (reported apart): LC ours {pair['ours']:.1f}, "
                f"published {pair['published']:.1f}",
                highlight=False,
            )
        result["leaderboard"] = {"raw": raw_check.__dict__, "lc": lc_check.__dict__}
    if bias:
        found = bias_report(table)
        out_console.print(bias_table(found, title="judge bias"))
        result["bias"] = found.to_dict()
    if out is not None:
        write_text_file(out, json.dumps(result, indent=2, default=_json_default) + "\n")
        err_console.print(f"written: {out}")


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def _estimate(e: Estimate | None, *, scale: float = 100.0, unit: str = "%") -> str:
    if e is None or e.estimate != e.estimate:
        return "n/a"
    return (
        f"{e.estimate * scale:.1f}{unit} [{e.ci_low * scale:.1f}, {e.ci_high * scale:.1f}] "
        f"(n={e.n:,}, {e.clusters:,} clusters)"
    )


def bias_table(report: BiasReport, *, title: str) -> Table:
    """The measured biases with their 95% intervals."""
    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("", style="bold")
    table.add_column("")
    table.add_row("P(prefers the longer output)", _estimate(report.prefers_longer))
    table.add_row("P(prefers the output shown first)", _estimate(report.prefers_first))
    table.add_row("position consistency (both orders)", _estimate(report.position_consistency))
    table.add_row(
        "score-length correlation (Spearman)",
        _estimate(report.score_length, scale=1.0, unit=""),
    )
    for note in report.notes:
        table.add_row("note", note)
    return table


def bias_command(
    data: Annotated[
        Path,
        typer.Argument(
            help="Verdicts: a judge grades file (truegrade grade --out), preferences CSV or "
            "annotation JSON(L)."
        ),
    ],
    baseline: Annotated[
        str | None, typer.Option(help="The baseline, when pairwise verdicts have several.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
    by_model: Annotated[
        bool, typer.Option(help="Also show P(prefers longer) per model (or judge).")
    ] = False,
) -> None:
    """Judge biases from recorded verdicts: length, position, score-length, with intervals."""
    from truegrade.lc import bias_report, read_judge_verdicts

    with user_errors():
        verdicts = read_judge_verdicts(data, baseline=baseline)
    report = bias_report(
        verdicts.table,
        consistent=verdicts.consistent or None,
        consistency_clusters=verdicts.consistency_clusters or None,
        scores=verdicts.scores or None,
        score_lengths=verdicts.score_lengths or None,
        score_clusters=verdicts.score_clusters or None,
    )
    out_console.print(bias_table(report, title=f"judge bias in {data.name}"))
    if verdicts.skipped:
        out_console.print(f"{verdicts.skipped:,} rows without a verdict (errors) were left out")
    if by_model and report.prefers_longer_by_model:
        table = Table(title="P(prefers the longer output) by model", title_justify="left")
        table.add_column("model")
        table.add_column("P(longer)", justify="right")
        for name, estimate in sorted(
            report.prefers_longer_by_model.items(), key=lambda kv: -kv[1].estimate
        ):
            table.add_row(name, _estimate(estimate))
        out_console.print(table)
    if out is not None:
        write_text_file(out, json.dumps(report.to_dict(), indent=2) + "\n")
        err_console.print(f"written: {out}")
