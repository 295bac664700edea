"""One shape for every benchmark's results: measurements side by side, and ratios to the anchor.

Benchmarks measure; they never assert. A report names what was run, on what machine, with which
parameters, and gives each measurement next to the anchor's from the same run.
"""

from __future__ import annotations

import os
import platform
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["BenchReport", "Measurement", "load_average", "machine"]


def load_average() -> list[float]:
    """The machine's 1, 5 and 15 minute load averages: other work running beside a benchmark
    changes its numbers, so every report carries them, at its start and at its end."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not every platform keeps them
        return []


def machine() -> dict[str, Any]:
    """What the numbers were measured on, and how busy it was when the run started."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        cores = os.cpu_count() or 1
    return {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cores": cores,
        "load average at start": load_average(),
    }


@dataclass
class Measurement:
    """One contender's numbers.

    Attributes:
        name: What ran ("truegrade engine", "ProcessPoolExecutor.map, chunksize=1").
        anchor: True for the tool we compare against.
        samples: Raw measurements of the main metric, one per repeat.
        extra: Other named numbers (latency percentiles, counts of errors...).
    """

    name: str
    anchor: bool
    samples: list[float]
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")


@dataclass
class BenchReport:
    """A benchmark's results.

    Attributes:
        title: What was measured.
        metric: The main metric's name and unit, e.g. "µs per item".
        lower_is_better: Direction of the main metric.
        params: The parameters of the run (items, workers, repeats...).
        measurements: Every contender, anchors included.
        notes: What a reader must know to interpret the numbers.
        pairs: Which (ours, anchor) measurements to compare; all pairs when empty.
        details: Other results of the run (agreement counts, disagreements...).
    """

    title: str
    metric: str
    lower_is_better: bool
    params: dict[str, Any]
    measurements: list[Measurement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    machine: dict[str, Any] = field(default_factory=machine)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def ratios(self) -> list[tuple[str, str, float]]:
        """(ours, anchor, ratio), read as "ours is N x the anchor"; every ours/anchor pair unless
        ``pairs`` names which to compare (e.g. the same worker count)."""
        by_name = {m.name: m for m in self.measurements}
        wanted = self.pairs or [
            (o.name, a.name)
            for o in self.measurements
            if not o.anchor
            for a in self.measurements
            if a.anchor
        ]
        out = []
        for ours_name, anchor_name in wanted:
            ours, anchor = by_name[ours_name], by_name[anchor_name]
            if anchor.median and anchor.median == anchor.median:
                out.append((ours.name, anchor.name, ours.median / anchor.median))
        return out

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for m, raw in zip(self.measurements, data["measurements"], strict=True):
            raw["median"] = m.median
        data["ratios"] = [{"ours": o, "anchor": a, "ratio": r} for o, a, r in self.ratios()]
        return data

    def markdown(self) -> str:
        """A table for the README: each contender's median, then the ratios."""
        extra_keys = sorted({k for m in self.measurements for k in m.extra})
        head = ["", self.metric, *extra_keys]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for m in self.measurements:
            cells = [m.name + (" (anchor)" if m.anchor else ""), f"{m.median:.3g}"]
            cells += [f"{m.extra[k]:.3g}" if k in m.extra else "" for k in extra_keys]
            lines.append("| " + " | ".join(cells) + " |")
        better = "lower" if self.lower_is_better else "higher"
        lines.append("")
        for ours, anchor, ratio in self.ratios():
            lines.append(f"- {ours} / {anchor}: **{ratio:.2f}x** ({better} is better)")
        return "\n".join(lines)
