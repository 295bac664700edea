"""The math benchmark reports cold and warm figures side by side with the anchor's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from truegrade.bench import machine, run_math_bench

pytest.importorskip("math_verify")


def test_every_report_carries_the_machine_load() -> None:
    info = machine()
    assert len(info["load average at start"]) == 3
    assert all(x >= 0 for x in info["load average at start"])


@pytest.mark.slow
def test_cold_and_warm_are_each_paired_with_the_anchor(tmp_path: Path) -> None:
    data = tmp_path / "two.jsonl"
    rows = [
        {"answer": "12", "code": ["so \\boxed{12}", "so \\boxed{13}"]},
        {"answer": "\\frac{1}{2}", "code": ["\\boxed{0.5}", "\\boxed{2}"]},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = run_math_bench(data=data, workers=(1,), repeats=1)
    names = {m.name: m for m in report.measurements}
    assert set(report.pairs) == {
        ("truegrade math, 1 worker", "Math-Verify parse+verify, 1 worker"),
        ("truegrade math, 1 worker, cold", "Math-Verify parse+verify, 1 worker, cold"),
    }
    for name in {n for pair in report.pairs for n in pair}:
        assert len(names[name].samples) == 1
        assert names[name].samples[0] > 0
    assert report.details["agreement"]["ours_accepts"] == 2
    assert len(report.ratios()) == 2
    # the tail: the slowest 1% of four pairs is one pair, named, with its share of the deadline
    ours = names["truegrade math, 1 worker"].extra
    assert 0 < ours["slowest_1pct_ms"] == ours["max_ms"]
    [slowest] = report.details["slowest"]["1"]
    assert slowest["pair"] in range(4)
    assert slowest["share_of_deadline"] == pytest.approx(slowest["ms"] / 2000, abs=1e-4)
