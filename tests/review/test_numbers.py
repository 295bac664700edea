"""The numbers: two experts' kappa is the hand computation, a moved label moves it, and the
grader against the experts equals ``truegrade rubric meta`` on the export."""

from __future__ import annotations

import json

import pytest
from sklearn.metrics import cohen_kappa_score

from tests.review.conftest import GRADER, KAPPA, TABLE
from truegrade.data import read_rows
from truegrade.review import EXPORT_FILES, RULES, agreement, export_project
from truegrade.rubric import meta_evaluate, meta_rows


def test_two_experts_kappa_is_the_hand_computation(project):
    numbers = agreement(project, n_resamples=200)
    [pair] = numbers["overall"]["pairwise_kappa"]
    assert pair["experts"] == ["dr_a", "dr_b"] and pair["units"] == 20
    assert pair["estimate"] == pytest.approx(KAPPA)
    assert pair["estimate"] == pytest.approx(
        cohen_kappa_score([a for a, _ in TABLE], [b for _, b in TABLE])
    )
    assert pair["rule"] == RULES["pairwise_kappa"]
    # every number names its rule
    for name in (
        "grader_macro_f1",
        "grader_kappa",
        "expert_macro_f1",
        "fleiss_kappa",
        "krippendorff_alpha",
    ):
        assert numbers["overall"][name]["rule"] == RULES[name]


def test_a_moved_label_moves_the_kappa(project):
    # dr_b turns one "only dr_a" item to agree: p_o 15/20, p_e 0.6*0.55 + 0.4*0.45 = 0.51
    dr_b = project.user("dr_b")
    item = project.items()[14]  # the first (1, 0) row
    [criterion] = project.criteria(item.id)
    project.set_label(dr_b, item.id, criterion.id, True)
    [pair] = agreement(project, n_resamples=200)["overall"]["pairwise_kappa"]
    assert pair["estimate"] == pytest.approx((0.75 - 0.51) / (1 - 0.51))


def test_the_grader_against_the_experts_equals_rubric_meta_on_the_export(project, tmp_path):
    written = export_project(project, tmp_path / "out", n_resamples=300)
    assert [p.name for p in written] == list(EXPORT_FILES)
    assert all(p.stat().st_size > 0 for p in written)
    rows = meta_rows(list(read_rows(tmp_path / "out" / "meta_eval.jsonl")))
    verdicts = {
        (v["item"]): v["met"]
        for v in map(json.loads, (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines())
    }
    order = [r["completion_id"] for _, r in read_rows(tmp_path / "out" / "meta_eval.jsonl")]
    report = meta_evaluate(rows, verdicts=[verdicts[k] for k in order], n_resamples=300)
    numbers = json.loads((tmp_path / "out" / "agreement.json").read_text())
    overall = numbers["overall"]
    assert overall["grader_macro_f1"]["estimate"] == pytest.approx(report.macro_f1.estimate)
    assert overall["grader_kappa"]["estimate"] == pytest.approx(report.kappa.estimate)
    assert overall["expert_macro_f1"]["estimate"] == pytest.approx(report.expert_macro_f1.estimate)
    assert overall["grader_macro_f1"]["ci_low"] == pytest.approx(report.macro_f1.ci_low)
    assert [v for v in GRADER] == [verdicts[k] for k in sorted(verdicts, key=order.index)]


def test_categories_and_criteria_are_sliced_and_old_wordings_never_count(project):
    numbers = agreement(project, n_resamples=100)
    assert set(numbers["categories"]) == {"emergency", "routine"}
    assert sum(s["units"] for s in numbers["categories"].values()) == 20
    assert len(numbers["criteria"]) == 20
    # a criterion's old wording: its labels stay as history, out of every number
    item = project.items()[0]
    [criterion] = project.criteria(item.id)
    with project.write() as db:
        db.execute("UPDATE criteria SET current = 0 WHERE id = ?", (criterion.id,))
    after = agreement(project, n_resamples=100)
    assert after["overall"]["units"] == 19
    assert len(project.labels(current=False)) == 40 and len(project.labels()) == 38


def test_an_export_imported_and_exported_again_is_byte_identical(project, tmp_path):
    from tests.review.test_app import _report
    from truegrade.core import DataError
    from truegrade.review import ReviewStore, import_attacks, import_export

    expert = project.user("new_md")
    item = project.items()[4]
    [criterion] = project.criteria(item.id)
    project.set_label(expert, item.id, criterion.id, False, "too vague", disputes_grader=True)
    project.edit_criterion(project.user("admin"), criterion.id, "Names when to seek care today")
    import_attacks(project, _report(tmp_path, project.items()[0].key))
    project.set_experts_per_item(3)
    first = tmp_path / "first"
    export_project(project, first, n_resamples=200)
    again = import_export(tmp_path / "copy", first)
    assert [u.name for u in again.users("expert")] == ["dr_a", "dr_b", "new_md"]
    assert again.experts_per_item() == 3
    # slots follow the current labels (item 4's were of the old wording: history, not exported)
    slots = {i.key: again.assignments(i.id) for i in again.items()}
    assert slots[project.items()[6].key] == [(0, "dr_a"), (1, "dr_b")]
    assert slots[item.key] == []
    second = tmp_path / "second"
    export_project(again, second, n_resamples=200)
    for name in EXPORT_FILES:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    # a broken export leaves no project behind
    (second / "labels.jsonl").write_text(
        '{"item": "nowhere", "criterion": "x", "expert": "dr_a"}\n'
    )
    with pytest.raises(DataError, match=r"labels\.jsonl:1"):
        import_export(tmp_path / "broken", second)
    assert not (tmp_path / "broken" / ReviewStore.FILE).exists()


def test_rubric_meta_gives_each_rater_s_numbers(project, tmp_path):
    from sklearn.metrics import f1_score

    export_project(project, tmp_path / "out", n_resamples=100)
    rows = meta_rows(list(read_rows(tmp_path / "out" / "meta_eval.jsonl")))
    report = meta_evaluate(rows, verdicts=GRADER, n_resamples=100)
    by_name = {b.name: b for b in report.raters}
    assert set(by_name) == {"dr_a", "dr_b"} and by_name["dr_a"].rows == 20
    dr_a = [bool(a) for a, _ in TABLE]
    dr_b = [bool(b) for _, b in TABLE]
    assert by_name["dr_a"].macro_f1.estimate == pytest.approx(
        f1_score(dr_a, GRADER, average="macro")
    )
    # dr_a against the other rater: dr_b's labels as the truth
    assert by_name["dr_a"].expert_macro_f1.estimate == pytest.approx(
        f1_score(dr_b, dr_a, average="macro")
    )
    assert "raters" in report.to_dict()


def test_the_export_feeds_validate_each_label_paired_with_the_grader(project, tmp_path):
    from typer.testing import CliRunner

    from truegrade.cli._app import app

    item = project.items()[5]
    with project.write() as db:  # one unit the grader gave no verdict on
        db.execute("DELETE FROM verdicts WHERE item_id = ?", (item.id,))
    out = tmp_path / "out"
    export_project(project, out, n_resamples=100)
    grades = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    missing = [g for g in grades if g.get("error")]
    assert len(missing) == 2 and all("score" not in g for g in missing)  # an error, never a 0
    report_path = tmp_path / "report.json"
    ran = CliRunner().invoke(
        app,
        [
            "validate",
            str(out / "validate.jsonl"),
            "--scores",
            str(out / "grades.jsonl"),
            "--out",
            str(report_path),
        ],
    )
    assert ran.exit_code == 0, ran.output
    overall = json.loads(report_path.read_text())["overall"]
    assert (overall["items"], overall["graded"], overall["grader_errors"]) == (40, 38, 2)
    # HealthBench's pairing by hand: each expert's label beside the grader's verdict
    labels, verdicts = [], []
    for k, (a, b) in enumerate(TABLE):
        if k != 5:
            labels += [a, b]
            verdicts += [int(GRADER[k])] * 2
    assert overall["kappa"]["estimate"] == pytest.approx(cohen_kappa_score(labels, verdicts))
    hits = sum(x == y for x, y in zip(labels, verdicts, strict=True))
    assert overall["accuracy"]["estimate"] == pytest.approx(hits / len(labels))
    assert overall["kappa"]["clusters"] == 10  # clustered on the conversation (prompt_id)
