"""Grading a project with the rubric grader (against the judge simulator): every pair once,
and after an edit exactly the items that carry the edited criterion."""

from __future__ import annotations

from typer.testing import CliRunner

from tests.review.conftest import write_jsonl
from tests.simulator.fixtures import endpoint
from truegrade.cli._app import app
from truegrade.review import ReviewStore, init_project

runner = CliRunner()


def test_an_edit_regrades_only_its_items(simulator, tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(
        "rubric:\n  - criterion: Says to call emergency services\n    points: 5\n"
        "  - criterion: Mentions aspirin\n    points: 2\n"
    )
    data = tmp_path / "rows.jsonl"
    write_jsonl(
        data,
        [
            {"id": k, "prompt": "Crushing chest pain, what now?", "response": text}
            for k, text in enumerate(["Call emergency services now.", "Rest a bit.", "Aspirin."])
        ],
    )
    project = tmp_path / "proj"
    init_project(project, data=data, rubric=rubric)
    opts = endpoint(simulator)
    args = [
        "review",
        "grade",
        str(project),
        "--judge-endpoint",
        opts["endpoint"],
        "--judge-model",
        opts["model"],
        "-o",
        "cache=null",
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "6 judged" in first.output
    store = ReviewStore(project)
    assert len(store.verdicts()) == 6
    admin = store.add_user("lead", "admin", "pw")
    shared = next(c for c in store.criteria() if c.key == "c002")
    store.edit_criterion(admin, shared.id, "Mentions aspirin, unless allergic")
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "3 judged" in again.output  # the three items carrying c002, and nothing else
    assert len(store.verdicts()) == 9  # the old wording's verdicts kept as history
    assert "0 judged" in runner.invoke(app, args).output


def test_grade_needs_a_grader(tmp_path):
    data = tmp_path / "rows.jsonl"
    write_jsonl(data, [{"id": 1, "prompt": "p", "response": "r", "rubrics": ["Is kind"]}])
    init_project(tmp_path / "proj", data=data)  # made without --grader
    answer = runner.invoke(app, ["review", "grade", str(tmp_path / "proj")])
    assert answer.exit_code == 2 and "name the grader" in answer.output
