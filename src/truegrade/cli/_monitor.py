"""``truegrade monitor``: replay a training log through the monitor and report its alerts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from truegrade.cli._common import (
    QuietOption,
    err_console,
    out_console,
    output_path,
    progress_bar,
    user_errors,
    write_outputs,
)

__all__ = ["monitor_command"]


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a log; a transformers ``trainer_state.json`` is read through its ``log_history``."""
    from truegrade.core import read_json
    from truegrade.data import read_rows

    if path.suffix.lower() == ".json":
        data = read_json(path, "training log")
        if isinstance(data, dict) and isinstance(data.get("log_history"), list):
            for number, row in enumerate(data["log_history"], start=1):
                if isinstance(row, dict):
                    yield number, row
            return
    yield from read_rows(path, what="training log")


def _key_number(alert: dict[str, Any]) -> str:
    ev = alert["evidence"]
    if alert["rule"] == "constant_batch":
        return f"value {ev['value']:g}" + (f", chance p = {ev['p']:.2g}" if "p" in ev else "")
    if alert["rule"] == "proxy_up_gold_down":
        up, down = ev["proxy"], ev["gold"]
        return (
            f"tau proxy {up['tau']:+.2f} (p {up['p']:.1g}), gold {down['tau']:+.2f} "
            f"(p {down['p']:.1g})"
        )
    if alert["rule"] == "reward_tracks_length":
        assoc = ev["association"]
        what = f"rho {assoc['rho']:+.2f}" if "rho" in assoc else f"tau {assoc['tau']:+.2f}"
        trend = ev["length_trend"]["tau"]
        return f"length tau {trend:+.2f}; reward~length {what} (p {assoc['p']:.1g})"
    prefix = f"{ev['flag']}: " if "flag" in ev else ""
    return f"{prefix}tau {ev['tau']:+.2f} (p {ev['p']:.1g}, level {ev['level']:.1g})"


def monitor_command(
    log: Annotated[
        Path, typer.Argument(help="Training log: JSONL/JSON/Parquet rows, or a trainer_state.json.")
    ],
    step: Annotated[
        str | None, typer.Option(help="Step column (default: step, global_step, ...).")
    ] = None,
    proxy: Annotated[
        str | None,
        typer.Option(help="Reward column (default: reward, score, critic/score/mean, ...)."),
    ] = None,
    gold: Annotated[
        str | None,
        typer.Option(help="Gold / held-out reward column (default: gold, gold_reward, ...)."),
    ] = None,
    length: Annotated[
        str | None,
        typer.Option(help="Response length column (default: length, completion_length, ...)."),
    ] = None,
    flags: Annotated[
        str | None, typer.Option(help="Per-sample flags column (default: flags).")
    ] = None,
    subscores: Annotated[
        str | None, typer.Option(help="Per-sample grader scores column (default: subscores).")
    ] = None,
    reward_std: Annotated[
        str | None, typer.Option(help="Per-step reward std column (default: reward_std, ...).")
    ] = None,
    graders: Annotated[
        str | None,
        typer.Option(help="Subscores to compare for disagreement, comma-separated (default: all)."),
    ] = None,
    watch: Annotated[
        list[str],
        typer.Option("--watch-flag", help="Flag to watch (repeatable; default: every flag seen)."),
    ] = [],
    window: Annotated[
        int, typer.Option(help="Steps per trend window (also tested at 2x and 4x).", min=4)
    ] = 32,
    alpha: Annotated[
        float,
        typer.Option(help="False-alarm budget per check, shared by the rules.", min=1e-9, max=0.5),
    ] = 0.01,
    out: Annotated[
        Path | None,
        typer.Option(
            callback=output_path,
            help="Write alerts and series as JSON (schema truegrade.monitor/1).",
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            callback=output_path,
            help="Draw the series and alerts to this image (needs matplotlib).",
        ),
    ] = None,
    fail_on_alert: Annotated[
        bool, typer.Option(help="Exit with status 1 when there is any alert.")
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Check a training log for reward hacking: proxy up while gold falls, a widening proxy-gold
    gap, reward tracking length, rising grader disagreement, constant (all-zero) batches, and
    climbing flag rates. Each alert gives its start step and its evidence."""
    from truegrade.core import DataError
    from truegrade.goodhart import LogColumns, monitor_log

    columns = LogColumns(
        step=step,
        proxy=proxy,
        gold=gold,
        length=length,
        flags=flags,
        subscores=subscores,
        reward_std=reward_std,
        graders=tuple(g.strip() for g in graders.split(",") if g.strip()) if graders else None,
    )
    with user_errors(), progress_bar(enabled=not quiet) as bar:
        task = bar.add_task("monitoring", total=None)
        try:
            monitor, read = monitor_log(
                _rows(log),
                columns,
                progress=lambda done: bar.update(task, completed=done),
                window=window,
                alpha=alpha,
                flags=watch or None,
            )
        except DataError as exc:
            if exc.path is None:
                raise DataError(exc.reason, path=str(log), line=exc.line) from None
            raise
    doc = {"input": {"file": str(log), **read.describe()}, **monitor.to_dict()}
    shape = read.describe()
    cols = ", ".join(f"{k}={v}" for k, v in shape["columns"].items())
    out_console.print(
        f"{log.name}: {shape['steps']:,} steps, {shape['rows']:,} rows ({shape['shape']}); "
        f"columns: {cols}",
        highlight=False,
    )
    for reason, count in read.skipped.items():
        err_console.print(f"skipped {count:,} rows: {reason}")
    if not monitor.alerts:
        out_console.print("no alerts", highlight=False)
    else:
        table = Table(title=f"{len(monitor.alerts)} alert(s)", title_justify="left")
        for head in ("rule", "starts", "significant", "until", "evidence"):
            table.add_column(head)
        for alert in doc["alerts"]:
            table.add_row(
                alert["rule"],
                f"{alert['start_step']:g}",
                f"{alert['detected_step']:g}",
                f"{alert['end_step']:g}",
                _key_number(alert),
            )
        out_console.print(table)
        for alert in monitor.alerts:
            out_console.print(f"- {alert.message}", highlight=False)
    from truegrade.report import plot_monitor

    write_outputs(doc, out, plot, plot_monitor)
    if fail_on_alert and monitor.alerts:
        raise typer.Exit(1)
