"""``truegrade overopt``: best-of-n overoptimization curves from a file of scored samples."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from truegrade.cli._common import (
    QuietOption,
    fail,
    out_console,
    output_path,
    progress_bar,
    user_errors,
    write_outputs,
)

__all__ = ["overopt_command", "parse_ints"]


def parse_ints(values: list[str], option: str) -> list[int]:
    """``--n 1,2,4 --n 8`` -> ``[1, 2, 4, 8]``."""
    out = []
    for value in values:
        for part in value.split(","):
            try:
                out.append(int(part))
            except ValueError:
                fail(f"{option} takes whole numbers, got {part!r}")
    return out


def _score(value: Any, column: str, path: Path, line: int) -> float:
    """A row's ``column`` as a score, or a DataError naming the row."""
    if isinstance(value, bool) or (isinstance(value, (int, float)) and math.isfinite(value)):
        return float(value)
    from truegrade.core import DataError  # on the way to an error only: _score runs per row

    if value is None:
        raise DataError(f"no '{column}' in this row", path=str(path), line=line)
    raise DataError(f"'{column}' must be a finite number, got {value!r}", path=str(path), line=line)


def _read(
    data: Path, proxy: str, gold: str, group: str, quiet: bool
) -> tuple[list[float], list[float], list[Any]]:
    from truegrade.core import DataError
    from truegrade.data import count_rows, get_field, read_rows

    xs: list[float] = []
    ys: list[float] = []
    groups: list[Any] = []
    with progress_bar(enabled=not quiet) as bar, user_errors():
        task = bar.add_task("reading", total=count_rows(data))
        for line, row in read_rows(data):
            xs.append(_score(get_field(row, proxy), proxy, data, line))
            ys.append(_score(get_field(row, gold), gold, data, line))
            g = get_field(row, group)
            if g is None:
                raise DataError(
                    f"no '{group}' (the prompt id) in this row", path=str(data), line=line
                )
            groups.append(json.dumps(g, sort_keys=True) if isinstance(g, (dict, list)) else g)
            bar.advance(task)
    if not xs:
        fail(f"{data}: no rows")
    return xs, ys, groups


def _cell(point: dict[str, Any], column: str) -> str:
    e = point[column]
    return f"{e['estimate']:.3f} [{e['ci_low']:.3f}, {e['ci_high']:.3f}]"


def _fit_line(column: str, form: str, fit: dict[str, Any]) -> str:
    peak = "no peak (beta <= 0)"
    if fit["peak_kl"] is not None:
        where = f"n ~ {fit['peak_n']:.1f}, " if fit["peak_n"] is not None else ""
        ci = fit["peak_kl_ci"]
        ci_text = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""
        scope = "" if fit["peak_in_range"] else ", beyond the data"
        peak = f"peak at {where}KL {fit['peak_kl']:.2f}{ci_text}{scope}"
    return (
        f"{column:5} {form:3}  {fit['equation']}: alpha {fit['alpha']:.4f}, "
        f"beta {fit['beta']:.4f}, R2 {fit['r2']:.4f}; {peak}"
    )


def overopt_command(
    data: Annotated[Path, typer.Argument(help="JSONL, JSON or Parquet: one row per sample.")],
    proxy: Annotated[
        str, typer.Option(help="Column of the score best-of-n selects on (dotted paths ok).")
    ],
    gold: Annotated[str, typer.Option(help="Column of the trusted score (dotted paths ok).")],
    group: Annotated[
        str, typer.Option(help="Column of the prompt id: its samples form one pool.")
    ] = "group",
    n: Annotated[
        list[str],
        typer.Option(
            "--n",
            help="n to evaluate: 1,2,4,8 (repeatable). Default: ~sqrt(2) apart up to the "
            "median pool size.",
        ),
    ] = [],
    resamples: Annotated[
        int, typer.Option(help="Bootstrap resamples over prompts.", min=50)
    ] = 1000,
    confidence: Annotated[
        float, typer.Option(help="Coverage of bands and intervals.", min=0.5, max=0.999)
    ] = 0.95,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    out: Annotated[
        Path | None,
        typer.Option(
            callback=output_path, help="Write the result as JSON (schema truegrade.overopt/1)."
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            callback=output_path, help="Draw the curves to this image (needs matplotlib)."
        ),
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """Proxy and gold under best-of-n from one pool of samples per prompt: curves against n and
    KL, Gao et al.'s fitted forms, where gold peaks, and the proxy-gold gap."""
    from truegrade.goodhart import overoptimization

    xs, ys, groups = _read(data, proxy, gold, group, quiet)
    try:
        result = overoptimization(
            xs,
            ys,
            groups,
            ns=parse_ints(n, "--n") or None,
            confidence=confidence,
            n_resamples=resamples,
            seed=seed,
        )
    except ValueError as exc:
        fail(f"{data}: {exc}")
    doc = {
        "input": {"file": str(data), "proxy": proxy, "gold": gold, "group": group},
        **result.to_dict(),
    }
    level = round(100 * confidence)
    table = Table(
        title=f"best-of-n on {data.name}: {result.prompts:,} prompts, {result.samples:,} samples",
        title_justify="left",
    )
    for head in (
        "n",
        "KL",
        "prompts",
        f"proxy [{level}% CI]",
        f"gold [{level}% CI]",
        "gap (proxy - gold)",
    ):
        table.add_column(head, justify="right")
    for point in doc["points"]:
        table.add_row(
            str(point["n"]),
            f"{point['kl']:.3f}",
            f"{point['prompts']:,}"
            + (f" (-{point['prompts_excluded']:,})" if point["prompts_excluded"] else ""),
            _cell(point, "proxy"),
            _cell(point, "gold"),
            _cell(point, "gap"),
        )
    out_console.print(table)
    for column in ("gold", "proxy"):
        for form in ("bon", "rl"):
            out_console.print(_fit_line(column, form, doc["fits"][column][form]), highlight=False)
    peak = doc["peak"]
    if peak["at_edge"]:
        verdict = (
            f"gold is highest at the largest n measured ({peak['n']}): no peak within the data"
        )
    else:
        d = peak["decline"]
        verdict = (
            f"gold peaks at n = {peak['n']} (KL {peak['kl']:.2f}; {level}% CI of the arg-max n "
            f"{peak['n_ci'][0]:g}-{peak['n_ci'][1]:g}) and falls by {d['estimate']:.4f} "
            f"[{d['ci_low']:.4f}, {d['ci_high']:.4f}] by n = {doc['points'][-1]['n']}"
            + (": overoptimized" if peak["overoptimized"] else " (not significant)")
        )
    out_console.print(verdict, highlight=False)
    for note in result.notes:
        out_console.print(f"note: {note}", style="dim", highlight=False)
    from truegrade.report import plot_overopt

    write_outputs(doc, out, plot, plot_overopt)
