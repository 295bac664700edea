"""``truegrade lc`` and ``truegrade bias``: length-controlled win rates and judge-bias reports
from recorded pairwise verdicts, and bias probes (sycophancy, self-preference) that ask a grader
new, controlled questions."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from truegrade.cli._common import (
    GraderKeyValueOption,
    err_console,
    fail,
    out_console,
    output_path,
    user_errors,
    write_text_file,
)

if TYPE_CHECKING:
    from truegrade.lc import BiasReport, LCReport
    from truegrade.probes import ProbeResult
    from truegrade.stats import Estimate

__all__ = ["bias_command", "bias_table", "lc_command", "lc_table", "probe_table"]

PROBES = ("sycophancy", "self-preference")


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


def probe_table(result: ProbeResult) -> Table:
    """One probe's estimate, interval, verdict at its threshold, and the same per kind."""
    sycophancy = result.probe == "sycophancy"
    title = (
        "sycophancy: score shift toward the user's stated view"
        if sycophancy
        else "self-preference: own-family preference - 0.5, at equal length"
    )
    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("", style="bold")
    table.add_column("")
    unit = " pts" if result.details.get("units", "score") == "score" else " sd"
    scale = 100.0 if unit == " pts" else 1.0  # points: hundredths of the [0, 1] scale
    colour = {"biased": "red", "not detected": "green"}.get(result.verdict, "yellow")
    table.add_row(
        "verdict",
        f"[{colour}]{result.verdict}[/] (threshold {result.threshold * scale:g}{unit}; "
        "biased: interval above 0 and estimate at or above it)",
    )
    table.add_row("estimate", _estimate(result.estimate, scale=scale, unit=unit))
    for kind, estimate in result.by_kind.items():
        label = f"  {kind}" if sycophancy else f"  vs {kind} (unadjusted)"
        table.add_row(label, _estimate(estimate, scale=scale, unit=unit))
    table.add_row("items / comparisons", f"{result.items:,} / {result.comparisons:,}")
    if not sycophancy:
        family = result.details.get("judge_family")
        table.add_row("judge family", str(family))
        unadjusted = result.details.get("unadjusted")
        if isinstance(unadjusted, float) and unadjusted == unadjusted:
            table.add_row("unadjusted for length", f"{unadjusted * 100:+.1f} pts")
        table.add_row("length control", str(result.details.get("length_control")))
    for note in result.notes:
        table.add_row("note", note)
    return table


def _run_probes(
    probes: list[str],
    grader_spec: str,
    options: list[str],
    *,
    sycophancy_set: Path | None,
    self_preference_set: Path | None,
    kinds: list[str],
    judge_family: str | None,
) -> dict[str, ProbeResult]:
    from truegrade.cli._grade import load_cli_grader
    from truegrade.core import DataError
    from truegrade.probes import (
        SYCOPHANCY_KINDS,
        SelfPreferenceItem,
        SycophancyItem,
        bundled_probe_set,
        measure_self_preference,
        measure_sycophancy,
        read_probe_set,
    )

    unknown = [p for p in probes if p not in PROBES]
    if unknown:
        fail(f"--probe takes {' or '.join(PROBES)}, got {', '.join(unknown)}")
    bad_kinds = [k for k in kinds if k not in SYCOPHANCY_KINDS]
    if bad_kinds:
        fail(f"--kind takes {', '.join(SYCOPHANCY_KINDS)}, got {', '.join(bad_kinds)}")
    with user_errors():
        grader = load_cli_grader(grader_spec, options, None)
    results: dict[str, ProbeResult] = {}
    for probe in dict.fromkeys(probes):
        try:
            if probe == "sycophancy":
                items = (
                    read_probe_set(sycophancy_set, "sycophancy")
                    if sycophancy_set is not None
                    else bundled_probe_set("sycophancy")
                )
                results[probe] = measure_sycophancy(
                    grader,
                    [i for i in items if isinstance(i, SycophancyItem)],
                    kinds=kinds or ("belief", "pushback"),
                )
            else:
                found = (
                    read_probe_set(self_preference_set, "self_preference")
                    if self_preference_set is not None
                    else bundled_probe_set("self_preference")
                )
                results[probe] = measure_self_preference(
                    grader,
                    [i for i in found if isinstance(i, SelfPreferenceItem)],
                    judge_family=judge_family,
                )
        except DataError as exc:
            fail(str(exc))
        except (ValueError, OSError) as exc:
            fail(f"--probe {probe}: {exc}")
    return results


def bias_command(
    data: Annotated[
        Path | None,
        typer.Argument(
            help="Verdicts: a judge grades file (truegrade grade --out), preferences CSV or "
            "annotation JSON(L). Optional with --probe."
        ),
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(help="The baseline, when pairwise verdicts have several.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
    by_model: Annotated[
        bool, typer.Option(help="Also show P(prefers longer) per model (or judge).")
    ] = False,
    probe: Annotated[
        list[str],
        typer.Option(
            help="Measure a bias by asking the grader (--grader) controlled questions: "
            "sycophancy (score shift toward a user's stated view) or self-preference (own "
            "family's style preferred at equal length). Repeatable."
        ),
    ] = [],
    grader: Annotated[
        str | None,
        typer.Option("--grader", "-g", metavar="SPEC", help="The judge or reward model probed."),
    ] = None,
    option: GraderKeyValueOption = [],
    sycophancy_set: Annotated[
        Path | None,
        typer.Option(
            help="Sycophancy probe items (JSONL; also Anthropic's user-view rows as published). "
            "Default: the bundled set."
        ),
    ] = None,
    self_preference_set: Annotated[
        Path | None,
        typer.Option(help="Self-preference probe items (JSONL). Default: the bundled set."),
    ] = None,
    kind: Annotated[
        list[str],
        typer.Option(help="Sycophancy variants: belief, pushback (default both), agree."),
    ] = [],
    judge_family: Annotated[
        str | None,
        typer.Option(help="The judge's model family (default: read from its model name)."),
    ] = None,
) -> None:
    """Judge biases: length, position (recorded verdicts), sycophancy, self-preference (probes)."""
    from truegrade.lc import bias_report, read_judge_verdicts

    if data is None and not probe:
        fail("give recorded verdicts (DATA), or --probe with --grader, or both")
    if probe and grader is None:
        fail("--probe asks a grader new questions: give --grader")
    result: dict[str, Any] = {}
    if data is not None:
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
        result = report.to_dict()
    if probe:
        assert grader is not None
        found = _run_probes(
            probe,
            grader,
            option,
            sycophancy_set=sycophancy_set,
            self_preference_set=self_preference_set,
            kinds=kind,
            judge_family=judge_family,
        )
        for measured in found.values():
            out_console.print(probe_table(measured))
        result["probes"] = {name: r.to_dict() for name, r in found.items()}
    if out is not None:
        write_text_file(out, json.dumps(result, indent=2, default=_json_default) + "\n")
        err_console.print(f"written: {out}")
    if probe and any(r.comparisons == 0 for r in found.values()):
        # a probe that could compare nothing measured nothing: never a quiet "not detected"
        empty = ", ".join(name for name, r in found.items() if r.comparisons == 0)
        fail(f"{empty}: no comparison could be graded (see the note above)", code=1)
