"""Plots of ``truegrade overopt`` and ``truegrade monitor`` results.

Both take the JSON documents (``to_dict()``), so a saved result can be drawn again without
recomputing. Figures are drawn with matplotlib's object API on the Agg canvas: no GUI, no global
pyplot state, safe in a server or a test.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from truegrade.core import OutputError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_monitor", "plot_overopt"]

_HINT = "plotting needs matplotlib: pip install 'truegrade[plot]'"


def _figure(rows: int, cols: int, size: tuple[float, float]) -> tuple[Figure, list[Axes]]:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise OutputError(_HINT) from None
    figure = Figure(figsize=size, layout="constrained")
    axes = figure.subplots(rows, cols, squeeze=False)
    return figure, [ax for row in axes for ax in row]


def _save(figure: Figure, path: str | Path) -> Path:
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(out, dpi=120)
    except (OSError, ValueError) as exc:
        raise OutputError(f"cannot write the plot {out}: {exc}") from None
    return out


def _values(points: list[dict[str, Any]], column: str, key: str) -> list[float]:
    return [math.nan if p[column][key] is None else p[column][key] for p in points]


def plot_overopt(doc: dict[str, Any], path: str | Path) -> Path:
    """Proxy and gold against n (log scale) and against KL, with bands, fitted forms and the peak.

    Curves are drawn relative to n = 1 (the base policy), as Gao et al. plot them, so a proxy and
    a gold on different scales share the axes.
    """
    figure, (by_n, by_kl) = _figure(1, 2, (11, 4.2))
    points = doc["points"]
    ns = [p["n"] for p in points]
    kl = [p["kl"] for p in points]
    for column, colour in (("proxy", "tab:blue"), ("gold", "tab:orange")):
        mid = _values(points, column, "estimate")
        base = mid[0]
        low = [v - base for v in _values(points, column, "ci_low")]
        high = [v - base for v in _values(points, column, "ci_high")]
        rel = [v - base for v in mid]
        for ax, x in ((by_n, ns), (by_kl, kl)):
            ax.plot(x, rel, "o-", color=colour, label=f"{column} (best of n)", markersize=3)
            ax.fill_between(x, low, high, color=colour, alpha=0.2, linewidth=0)
        fit = doc["fits"][column]["bon"]
        grid = [kl[-1] * i / 100 for i in range(101)]
        fitted = [math.sqrt(k) * (fit["alpha"] - fit["beta"] * math.sqrt(k)) for k in grid]
        by_kl.plot(
            grid,
            fitted,
            "--",
            color=colour,
            linewidth=1,
            label=f"{column} fit d(alpha - beta d), R2 = {fit['r2']:.3f}",
        )
    peak = doc["peak"]
    if not peak["at_edge"]:
        gold_base = points[0]["gold"]["estimate"]
        for ax, x in ((by_n, peak["n"]), (by_kl, peak["kl"])):
            ax.axvline(x, color="grey", linestyle=":", linewidth=1)
            ax.annotate(
                f"gold peaks at n={peak['n']}",
                (x, peak["gold"] - gold_base),
                textcoords="offset points",
                xytext=(5, 5),
                fontsize=8,
            )
    by_n.set_xscale("log")
    by_n.set_xlabel("n (best of n)")
    by_kl.set_xlabel("KL = log n - (n-1)/n  (an upper bound)")
    for ax in (by_n, by_kl):
        ax.set_ylabel("score relative to n = 1")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    level = round(100 * doc["confidence"])
    figure.suptitle(
        f"Overoptimization: {doc['prompts']:,} prompts, {doc['samples']:,} samples "
        f"({level}% bands, bootstrap over prompts)"
    )
    return _save(figure, path)


def plot_monitor(doc: dict[str, Any], path: str | Path) -> Path:
    """The monitored series against step (reward and gold, gap, length, flag rates), with each
    alert shaded from its start to its end step."""
    series = doc["series"]
    steps = series["step"]
    panels: list[tuple[str, list[tuple[str, list[Any]]]]] = [
        (
            "reward",
            [("proxy", series["proxy"])] + ([("gold", series["gold"])] if "gold" in series else []),
        ),
    ]
    if "gold" in series:
        gap = [
            None if g is None else p - g
            for p, g in zip(series["proxy"], series["gold"], strict=True)
        ]
        panels.append(("proxy - gold", [("gap", gap)]))
    if "length" in series:
        panels.append(("length", [("mean length", series["length"])]))
    if "disagreement" in series:
        panels.append(("grader disagreement", [("disagreement", series["disagreement"])]))
    flags = [(k.split(":", 1)[1], v) for k, v in series.items() if k.startswith("flag:")]
    if flags:
        panels.append(("flag rate", flags))
    figure, axes = _figure(len(panels), 1, (10, 2.2 * len(panels) + 0.6))
    for ax, (label, lines) in zip(axes, panels, strict=True):
        for name, values in lines:
            ax.plot(steps, [math.nan if v is None else v for v in values], linewidth=1, label=name)
        for alert in doc["alerts"]:
            ax.axvspan(alert["start_step"], alert["end_step"], color="tab:red", alpha=0.08)
            ax.axvline(alert["detected_step"], color="tab:red", linewidth=0.8, linestyle=":")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        if len(lines) > 1 or label == "flag rate":
            ax.legend(fontsize=8)
    axes[-1].set_xlabel("step")
    rules = sorted({a["rule"] for a in doc["alerts"]})
    title = f"{len(doc['alerts'])} alert(s): {', '.join(rules)}" if rules else "no alerts"
    figure.suptitle(f"Training monitor: {title} (shaded: start to end; dotted: detected)")
    return _save(figure, path)
