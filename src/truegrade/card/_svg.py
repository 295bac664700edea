"""Small inline SVG charts for the card: no plotting library, no network, no script.

Inline SVG keeps the HTML self-contained and crisp at any zoom. Every label that comes from data
is escaped: attack names are ours, but item ids and flags come from the dataset.
"""

from __future__ import annotations

import math
from html import escape

__all__ = ["bar_chart", "line_chart"]

_RED, _GREY, _GREEN, _BLUE = "#c0392b", "#9aa5ad", "#2e7d4f", "#2d6fb5"


def bar_chart(
    rows: list[tuple[str, float, float | None, float | None]],
    *,
    width: int = 620,
    label_width: int = 190,
    empty_is_good: bool = True,
) -> str:
    """Horizontal bars of rates in [0, 1] with interval whiskers: ``(label, rate, low, high)``."""
    if not rows:
        return ""
    bar_h, gap = 16, 8
    height = len(rows) * (bar_h + gap) + 24
    span = width - label_width - 60
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" font-family="sans-serif" font-size="12">'
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        x = label_width + tick * span
        parts.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - 18}" stroke="#e3e7ea"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{height - 4}" text-anchor="middle" '
            f'fill="#66737c">{tick:.0%}</text>'
        )
    for i, (label, rate, low, high) in enumerate(rows):
        y = i * (bar_h + gap) + 4
        colour = (_RED if rate > 0 else _GREEN) if empty_is_good else _BLUE
        parts.append(
            f'<text x="{label_width - 8}" y="{y + 12}" text-anchor="end">{escape(label)}</text>'
        )
        w = max(rate * span, 1.5 if rate == 0 else 0)
        parts.append(
            f'<rect x="{label_width}" y="{y}" width="{w:.1f}" height="{bar_h}" '
            f'fill="{colour}" opacity="{0.85 if rate > 0 else 0.5}"/>'
        )
        if low is not None and high is not None and not (math.isnan(low) or math.isnan(high)):
            x1, x2 = label_width + low * span, label_width + high * span
            mid = y + bar_h / 2
            parts.append(
                f'<line x1="{x1:.1f}" y1="{mid}" x2="{x2:.1f}" y2="{mid}" '
                f'stroke="#2b2f33" stroke-width="1.2"/>'
            )
            for x in (x1, x2):
                parts.append(
                    f'<line x1="{x:.1f}" y1="{mid - 4}" x2="{x:.1f}" y2="{mid + 4}" '
                    f'stroke="#2b2f33" stroke-width="1.2"/>'
                )
        parts.append(
            f'<text x="{label_width + span + 8}" y="{y + 12}" fill="#2b2f33">{rate:.0%}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def line_chart(
    series: dict[str, list[tuple[float, float, float | None, float | None]]],
    *,
    x_label: str,
    y_label: str,
    marker: float | None = None,
    width: int = 620,
    height: int = 280,
) -> str:
    """Lines with shaded intervals: ``{name: [(x, y, low, high), ...]}``; ``marker`` draws a
    dashed vertical line (the peak)."""
    points = [p for line in series.values() for p in line]
    if not points:
        return ""
    xs = [p[0] for p in points]
    ys = [v for p in points for v in (p[1], p[2], p[3]) if v is not None and not math.isnan(v)]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0, y1 = min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1
    pad_l, pad_r, pad_t, pad_b = 52, 120, 12, 36

    def sx(x: float) -> float:
        return pad_l + (x - x0) / (x1 - x0) * (width - pad_l - pad_r)

    def sy(y: float) -> float:
        return pad_t + (1 - (y - y0) / (y1 - y0)) * (height - pad_t - pad_b)

    colours = [_BLUE, _RED, _GREEN, _GREY]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" font-family="sans-serif" font-size="12">',
        f'<line x1="{pad_l}" y1="{height - pad_b}" x2="{width - pad_r}" '
        f'y2="{height - pad_b}" stroke="#66737c"/>',
        f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{height - pad_b}" stroke="#66737c"/>',
        f'<text x="{(pad_l + width - pad_r) / 2}" y="{height - 6}" text-anchor="middle" '
        f'fill="#66737c">{escape(x_label)}</text>',
        f'<text x="12" y="{pad_t + 8}" fill="#66737c">{escape(y_label)}</text>',
    ]
    for v in (y0, (y0 + y1) / 2, y1):
        parts.append(
            f'<text x="{pad_l - 6}" y="{sy(v) + 4:.1f}" text-anchor="end" '
            f'fill="#66737c">{v:.2f}</text>'
        )
    for v in (x0, (x0 + x1) / 2, x1):
        parts.append(
            f'<text x="{sx(v):.1f}" y="{height - pad_b + 14}" text-anchor="middle" '
            f'fill="#66737c">{v:.2f}</text>'
        )
    for (name, line), colour in zip(series.items(), colours, strict=False):
        band_top = [(sx(x), sy(hi)) for x, _, _, hi in line if hi is not None]
        band_bottom = [(sx(x), sy(lo)) for x, _, lo, _ in line if lo is not None]
        if len(band_top) == len(line) == len(band_bottom):
            outline = band_top + band_bottom[::-1]
            parts.append(
                '<polygon points="'
                + " ".join(f"{a:.1f},{b:.1f}" for a, b in outline)
                + f'" fill="{colour}" opacity="0.15"/>'
            )
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y, _, _ in line)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        last_x, last_y = line[-1][0], line[-1][1]
        parts.append(
            f'<text x="{sx(last_x) + 6:.1f}" y="{sy(last_y) + 4:.1f}" '
            f'fill="{colour}">{escape(name)}</text>'
        )
    if marker is not None and x0 <= marker <= x1:
        parts.append(
            f'<line x1="{sx(marker):.1f}" y1="{pad_t}" x2="{sx(marker):.1f}" '
            f'y2="{height - pad_b}" stroke="#2b2f33" stroke-dasharray="4 3"/>'
        )
    parts.append("</svg>")
    return "".join(parts)
