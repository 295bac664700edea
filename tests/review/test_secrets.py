"""The judge's API key reaches the judge and nothing else: not a page, not the event log, not an
export, not the project's file, not a log line. By construction the project keeps the name of
the key's environment variable (``api_key_env``), never the key."""

from __future__ import annotations

import json
import logging

import yaml
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.review.conftest import write_jsonl
from tests.review.test_app import csrf_of
from tests.simulator.fixtures import endpoint
from truegrade.cli._app import app as cli
from truegrade.cli._review import _project_grader
from truegrade.review import ReviewStore, create_review_app

KEY = "sk-review-test-7f3a9c1e5b2d"
runner = CliRunner()


def test_the_judge_key_is_in_no_page_log_export_or_file(simulator, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("REVIEW_JUDGE_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    spec = tmp_path / "grader.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "type": "rubric",
                "judge": {**endpoint(simulator), "api_key_env": "REVIEW_JUDGE_KEY"},
                "cache": None,
            }
        )
    )
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("rubric:\n  - criterion: Says to call emergency services\n    points: 5\n")
    data = tmp_path / "rows.jsonl"
    write_jsonl(
        data,
        [
            {"id": k, "prompt": "Crushing chest pain?", "response": text}
            for k, text in enumerate(["Call emergency services now.", "Rest a bit."])
        ],
    )
    project = tmp_path / "proj"
    said = []
    for args in (
        ["review", "init", str(project), "--data", str(data), "--rubric", str(rubric)]
        + ["--grader", str(spec)],
        ["review", "grade", str(project)],  # the project's own grader: no --spec needed
        ["review", "user", str(project), "admin", "--role", "admin", "--password", "pw"],
    ):
        ran = runner.invoke(cli, args)
        assert ran.exit_code == 0, ran.output
        said.append(ran.output)
    assert "2 judged" in said[1]
    store = ReviewStore(project)
    assert len(store.verdicts()) == 2
    # the app re-grades an edited criterion's items with the project's grader, on save
    app = create_review_app(project, n_resamples=50, grader=_project_grader(project))
    client = TestClient(app)
    client.post("/login", data={"name": "admin", "password": "pw"})
    [shared] = store.criteria()
    page = client.get(f"/criteria/{shared.id}")
    edit = client.post(
        f"/criteria/{shared.id}",
        data={"text": "Says to call emergency services now", "csrf": csrf_of(page.text)},
        headers={"accept": "application/json"},
    )
    assert edit.status_code == 200 and edit.json()["regraded"] == 2, edit.text
    seen = [said, page.text, edit.text]
    for path in ("/", "/dashboard", "/agreement.json", "/drill", "/events", "/items/1"):
        answer = client.get(path)
        assert answer.status_code == 200, path
        seen.append(answer.text)
    export = runner.invoke(cli, ["review", "export", str(project), "--out", str(tmp_path / "x")])
    assert export.exit_code == 0, export.output
    seen += [p.read_text() for p in (tmp_path / "x").iterdir()]
    seen.append(caplog.text)
    for text in seen:
        assert KEY not in json.dumps(text) and KEY not in str(text)
    for file in project.iterdir():  # the database, its WAL and shared memory
        assert KEY.encode() not in file.read_bytes(), file.name
    assert store.meta("grader") == {"spec": str(spec.resolve())}
