"""``truegrade review`` from the command line: every action of the app, with clear errors."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tests.review.conftest import meta_rows, write_jsonl
from truegrade.cli._app import app
from truegrade.review import ReviewStore

runner = CliRunner()


def invoke(*args, env=None):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", **(env or {})})


def test_init_user_label_export(tmp_path):
    data = tmp_path / "meta.jsonl"
    write_jsonl(data, meta_rows())
    project = tmp_path / "proj"
    made = invoke("review", "init", project, "--data", data)
    assert made.exit_code == 0, made.output
    assert "20 items, 2 experts imported" in made.output
    added = invoke(
        "review", "user", project, "md", "--role", "expert", env={"TRUEGRADE_REVIEW_PASSWORD": "pw"}
    )
    assert added.exit_code == 0, added.output
    store = ReviewStore(project)
    item = store.items()[0]
    [criterion] = store.criteria(item.id)
    labelled = invoke(
        "review",
        "label",
        project,
        "--expert",
        "md",
        "--item",
        item.key,
        "--criterion",
        criterion.key,
        "--not-met",
        "--reason",
        "vague",
    )
    assert labelled.exit_code == 0, labelled.output
    assert [(lb.met, lb.reason) for lb in store.labels(user="md")] == [(False, "vague")]
    out = tmp_path / "export"
    exported = invoke("review", "export", project, "--out", out)
    assert exported.exit_code == 0, exported.output
    numbers = json.loads((out / "agreement.json").read_text())
    assert numbers["experts"] == ["dr_a", "dr_b", "md"]


def test_errors_are_one_line_and_write_nothing(tmp_path):
    missing = invoke("review", "export", tmp_path / "nowhere", "--out", tmp_path / "x")
    assert missing.exit_code == 2 and "no review project here" in missing.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "x", "completion": "y", "binary_labels": "yes"}\n')
    refused = invoke("review", "init", tmp_path / "proj", "--data", bad)
    assert refused.exit_code == 2 and f"{bad}:1" in refused.output
    assert not (tmp_path / "proj").exists()
    data = tmp_path / "meta.jsonl"
    write_jsonl(data, meta_rows())
    invoke("review", "init", tmp_path / "p2", "--data", data)
    viewer = invoke(
        "review",
        "user",
        tmp_path / "p2",
        "v",
        "--role",
        "viewer",
        env={"TRUEGRADE_REVIEW_PASSWORD": "pw"},
    )
    assert viewer.exit_code == 0
    store = ReviewStore(tmp_path / "p2")
    item = store.items()[0]
    [criterion] = store.criteria(item.id)
    refused = invoke(
        "review",
        "label",
        tmp_path / "p2",
        "--expert",
        "v",
        "--item",
        item.key,
        "--criterion",
        criterion.key,
        "--met",
    )
    assert refused.exit_code == 2 and "only experts label" in refused.output
    remote = invoke("review", "serve", tmp_path / "p2", "--host", "0.0.0.0")
    assert remote.exit_code == 2 and "--allow-remote" in remote.output
    no_admin = invoke("review", "serve", tmp_path / "p2", "--host", "0.0.0.0", "--allow-remote")
    assert no_admin.exit_code == 2 and "admin" in no_admin.output


def test_init_from_an_export(tmp_path):
    data = tmp_path / "meta.jsonl"
    write_jsonl(data, meta_rows())
    invoke("review", "init", tmp_path / "a", "--data", data)
    invoke("review", "export", tmp_path / "a", "--out", tmp_path / "out")
    made = invoke("review", "init", tmp_path / "b", "--import", tmp_path / "out")
    assert made.exit_code == 0 and "20 items, 2 experts imported" in made.output, made.output
    both = invoke("review", "init", tmp_path / "c", "--import", tmp_path / "out", "--data", data)
    assert both.exit_code == 2 and "--import" in both.output


def test_the_criterion_page_s_edit_and_the_dispute_from_the_command_line(tmp_path):
    from tests.review.conftest import meta_rows, write_jsonl
    from truegrade.review import ReviewStore

    data = tmp_path / "meta.jsonl"
    write_jsonl(data, meta_rows()[:2])
    project = tmp_path / "proj"
    assert runner.invoke(app, ["review", "init", str(project), "--data", str(data)]).exit_code == 0
    store = ReviewStore(project)
    item = store.items()[0]
    [criterion] = store.criteria(item.id)
    runner.invoke(
        app, ["review", "user", str(project), "lead", "--role", "admin", "--password", "pw"]
    )
    label = runner.invoke(
        app,
        ["review", "label", str(project), "--expert", "dr_a", "--item", item.key,
         "--criterion", criterion.key, "--not-met", "--reason", "too vague",
         "--disputes-grader"],
    )  # fmt: skip
    assert label.exit_code == 0, label.output
    [mine] = [lb for lb in store.labels(user="dr_a") if lb.item_id == item.id]
    assert mine.disputes_grader and mine.reason == "too vague"
    edit = ["review", "edit", str(project), "--criterion", criterion.key, "--by", "lead"]
    first = runner.invoke(app, [*edit, "--text", "Advises care within 24 hours"])
    assert first.exit_code == 0 and "version 2 saved" in first.output, first.output
    stale = runner.invoke(app, [*edit, "--text", "Advises rest", "--version", "1"])
    assert stale.exit_code == 2 and "version 2" in stale.output  # refused, never overwritten
    assert "+Advises rest" in stale.output  # with the difference
    assert [v.text for v in store.versions(criterion.key)][-1] == "Advises care within 24 hours"
