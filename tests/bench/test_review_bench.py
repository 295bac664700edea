"""The review app's benchmark: every figure measured on a real server, with its count, its p95
and, where the issue gives one, its target beside it. Nothing here is timed against a bound."""

from __future__ import annotations

import json

import pytest

from truegrade.bench import review_rows, run_review_bench
from truegrade.bench._review import ITEM_TARGET_MS, START_TARGET_MS


def test_the_rows_are_what_review_init_reads_with_a_response_of_about_a_kilobyte() -> None:
    rows = review_rows(20, seed=3)
    assert rows == review_rows(20, seed=3)  # a fixed seed, the same project
    assert len({r["id"] for r in rows}) == 20
    assert all(1000 <= len(r["response"]) <= 1300 for r in rows)
    assert all(len(r["rubrics"]) == 3 for r in rows)
    assert all(isinstance(r["prompt"][0]["content"], str) for r in rows)


@pytest.mark.slow
def test_each_figure_comes_with_its_count_p95_and_the_issue_s_target() -> None:
    report = run_review_bench(
        items=50, starts=1, requests=10, recomputes=2, labelled=40, builds=1, seed=1
    )
    names = [m.name for m in report.measurements]
    assert names == [
        "cold start: launch to the first page after logging in",
        "item page, expert, random items",
        "item page, expert, items they labelled",
        "item page, viewer, random items",
        "items list (GET /), expert",
        "label (POST /items/{id}/labels), expert",
        "dashboard, first view after a change (numbers computed), viewer",
        "dashboard again (cached), viewer",
        "item page, expert, while another viewer's dashboard is computed",
        "project build: init_project, 50 rows",
    ]
    assert not any(m.anchor for m in report.measurements) and report.ratios() == []
    counts = [m.extra["count"] for m in report.measurements]
    assert counts[:8] == [1, 10, 10, 10, 10, 10, 2, 10] and counts[9] == 1
    assert counts[8] >= 1  # as many as fit beside the other viewer's dashboards
    for m in report.measurements:
        assert len(m.samples) == m.extra["count"] and all(ms > 0 for ms in m.samples)
        assert m.median <= m.extra["p95 ms"] <= max(m.samples)
        assert m.extra.get("errors", 0) == 0, m.name  # every page 200, every label saved
    assert [t["what"] for t in report.details["targets"]] == [names[k] for k in (0, 1, 2, 3, 8)]
    for target in report.details["targets"]:
        m = report.measurements[names.index(target["what"])]
        expected = START_TARGET_MS if m is report.measurements[0] else ITEM_TARGET_MS
        assert target["target ms"] == m.extra["target ms"] == expected
        assert target["target / measured"] == pytest.approx(expected / target["measured ms"])
        assert target["within"] == (target["target / measured"] > 1)
    cold = report.details["cold start"]
    assert cold["first answer ms"][0] <= cold["first page ms"][0] == report.measurements[0].median
    assert report.details["project"] == {
        "items": 50,
        "units": 150,
        "verdicts": 150,
        "units labelled by each expert": 40,
        "database MB": report.details["project"]["database MB"],
    }
    assert report.details["dashboard views beside the item pages"] == {"views": 2, "errors": 0}
    assert any("Label Studio" in note for note in report.notes)
    json.dumps(report.to_dict())  # the --out file
    assert "| item page, viewer, random items |" in report.markdown()
