"""Uploads from the project page: rows and rubrics added all or none. Every malformed upload
(YAML errors, ``!!python/object`` tags, wrong types, non-UTF-8, oversize, a row of an item the
project has) gets a 4xx whose message names the line or the field, and writes nothing: the
project's file is the same before and after, event log included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.review.test_app import client_for, csrf_of
from truegrade.review import add_rows, add_rubric, create_review_app

JSON = {"accept": "application/json"}


def _rows(*rows: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


GOOD_ROWS = _rows(
    {"id": "new-1", "prompt": "Fever of 39C?", "response": "Rest and fluids.", "rubrics": ["X"]},
    {"id": "new-2", "prompt": "Rash?", "response": "See a doctor.", "rubrics": ["Y", "Z"]},
)


def _snapshot(project) -> tuple:
    return (
        project.count_items(),
        len(project.criteria(current=False)),
        len(project.users()),
        project.last_event(),
        project.experts_per_item(),
    )


@pytest.fixture
def admin(path_of):
    app = create_review_app(path_of, n_resamples=50, upload_limit=4096)
    client = client_for(app, "admin")
    client.headers["x-csrf"] = csrf_of(client.get("/admin").text)
    return client


def _send(client: TestClient, route: str, name: str, body: bytes, **headers: str):
    return client.post(
        route,
        data={"csrf": client.headers["x-csrf"]},
        files={"file": (name, body, "application/octet-stream")},
        headers={**JSON, **headers},
    )


def test_rows_and_a_rubric_upload_add_items_and_shared_criteria(admin, project):
    before = project.count_items()
    answer = _send(admin, "/upload/data", "more.jsonl", GOOD_ROWS)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"file": "more.jsonl", "added": 2}
    assert project.count_items() == before + 2
    rubric = (
        b"rubric:\n  - criterion: Names a red flag\n    points: 3\n"
        b"  - criterion: Asks about allergies\n    points: 1\n"
    )
    answer = _send(admin, "/upload/rubric", "shared.yaml", rubric)
    assert answer.status_code == 200, answer.text
    shared = [c for c in project.criteria() if c.item_id is None]
    assert [(c.key, c.text, c.points) for c in shared] == [
        ("c001", "Names a red flag", 3.0),
        ("c002", "Asks about allergies", 1.0),
    ]
    again = _send(admin, "/upload/rubric", "more.yaml", b"- {criterion: Follow-up, points: 1}\n")
    assert (
        again.status_code == 200
        and [c.key for c in project.criteria() if c.item_id is None][-1] == "c003"
    )
    kinds = [e["kind"] for e in project.events()]
    assert kinds.count("rows_added") == 1 and kinds.count("rubric_added") == 2


BAD = [
    # (route, file name, body, status, what the message must name)
    (
        "/upload/rubric",
        "r.yaml",
        b"rubric:\n  - criterion: [unclosed\n    points: 2\n",
        422,
        "r.yaml:3",
    ),
    (
        "/upload/rubric",
        "r.yaml",
        b'!!python/object/apply:os.system ["touch MARKER"]\n',
        422,
        "python/object",
    ),
    (
        "/upload/rubric",
        "r.yaml",
        b"rubric:\n  - criterion: Kind\n    points: five\n",
        422,
        "points",
    ),
    ("/upload/rubric", "r.yaml", b"rubric:\n  - criterion: caf\xe9\n", 422, "r.yaml"),
    ("/upload/rubric", "r.yaml", b"just: a mapping\n", 422, "r.yaml"),
    ("/upload/data", "d.jsonl", b'{"id": "a", "prompt": "\xff", "response": "r"}\n', 422, ":1"),
    (
        "/upload/data",
        "d.jsonl",
        GOOD_ROWS + _rows({"id": "b", "prompt": 5, "response": "r", "rubrics": ["X"]}),
        422,
        "d.jsonl:3: 'prompt'",
    ),
    ("/upload/data", "d.jsonl", GOOD_ROWS + b'{"id": "c", "prompt": \n', 422, "d.jsonl:3"),
    (
        "/upload/data",
        "d.jsonl",
        GOOD_ROWS + _rows({"id": "d", "prompt": "p", "response": "r"}),
        422,
        "d.jsonl:3: the row has no 'rubrics'",
    ),
    ("/upload/data", "d.jsonl", b"", 422, "no rows"),
    ("/upload/data", "big.jsonl", GOOD_ROWS * 60, 413, "4,096 bytes"),
    ("/upload/rubric", "big.yaml", b"- {criterion: x, points: 1}\n" * 300, 413, "4,096 bytes"),
]


@pytest.mark.parametrize(("route", "name", "body", "status", "named"), BAD)
def test_a_bad_upload_gets_a_4xx_naming_where_and_writes_nothing(
    admin, project, tmp_path, monkeypatch, route, name, body, status, named
):
    monkeypatch.chdir(tmp_path)  # where a `touch MARKER` would land, were the tag obeyed
    before = _snapshot(project)
    answer = _send(admin, route, name, body)
    assert answer.status_code == status, answer.text
    assert named in answer.json()["error"]
    assert "truegrade-upload-" not in answer.json()["error"]  # the temporary file is not named
    assert _snapshot(project) == before
    assert not (tmp_path / "MARKER").exists()


def test_an_item_already_in_the_project_is_named_with_its_line(admin, project):
    key = project.items()[0].key
    body = GOOD_ROWS + _rows({"id": key, "prompt": "p", "response": "r", "rubrics": ["X"]})
    before = _snapshot(project)
    answer = _send(admin, "/upload/data", "dup.jsonl", body)
    assert answer.status_code == 422
    assert answer.json()["error"] == f"dup.jsonl:3: item {key} is already in the project"
    assert _snapshot(project) == before


def test_the_file_name_is_only_a_name_and_a_missing_file_is_named(admin, project):
    answer = _send(admin, "/upload/data", "../../etc/x.jsonl", GOOD_ROWS)
    assert answer.status_code == 200 and answer.json()["file"] == "x.jsonl"
    empty = admin.post("/upload/data", data={"csrf": admin.headers["x-csrf"]}, headers=JSON)
    assert empty.status_code == 422 and "field 'file'" in empty.json()["error"]
    forged = admin.post(
        "/upload/data", data={"csrf": "wrong"}, files={"file": ("a.jsonl", GOOD_ROWS)}
    )
    assert forged.status_code == 403


def test_in_the_browser_a_bad_upload_shows_the_page_with_the_reason_as_text(admin, project):
    answer = _send(admin, "/upload/data", "<b>x</b>.jsonl", b"{not json\n", accept="text/html")
    assert answer.status_code == 422
    # the name is cut to its last path part, in plain characters; the reason shows as text
    assert '<p class="problem" role="alert">b.jsonl:1: malformed JSON' in answer.text
    assert "<b>x" not in answer.text
    good = _send(admin, "/upload/data", "ok.jsonl", GOOD_ROWS, accept="text/html")
    assert good.status_code == 200 and "ok.jsonl: 2 items added" in good.text


def test_the_admin_sets_slots_adds_people_and_downloads_the_export(admin, project):
    csrf = admin.headers["x-csrf"]
    too_few = admin.post("/admin/slots", data={"experts_per_item": "1", "csrf": csrf}, headers=JSON)
    assert too_few.status_code == 422 and "already has 2 experts" in too_few.json()["error"]
    ok = admin.post("/admin/slots", data={"experts_per_item": "3", "csrf": csrf}, headers=JSON)
    assert ok.json() == {"experts_per_item": 3} and project.experts_per_item() == 3
    short = admin.post(
        "/admin/users", data={"name": "kim", "password": "short", "csrf": csrf}, headers=JSON
    )
    assert short.status_code == 422
    added = admin.post(
        "/admin/users",
        data={"name": "kim", "role": "expert", "password": "long enough", "csrf": csrf},
        headers=JSON,
    )
    assert added.status_code == 200 and project.user("kim").role == "expert"
    import io
    import zipfile

    archive = admin.get("/export.zip")
    assert archive.status_code == 200
    names = zipfile.ZipFile(io.BytesIO(archive.content)).namelist()
    assert "export/validate.jsonl" in names and "export/agreement.json" in names


def test_the_python_faces_take_the_same_files(project, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(GOOD_ROWS)
    assert add_rows(project, rows) == 2
    rubric = tmp_path / "r.yaml"
    rubric.write_text("- criterion: Names a red flag\n  points: 2\n")
    assert add_rubric(project, rubric) == 1
    assert Path(rows).exists()


def test_the_cli_adds_the_same_files_and_names_a_bad_line(project, tmp_path):
    from typer.testing import CliRunner

    from truegrade.cli._app import app

    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(GOOD_ROWS)
    runner = CliRunner()
    folder = str(project.path.parent)
    added = runner.invoke(app, ["review", "add", folder, "--data", str(rows)])
    assert added.exit_code == 0 and "2 items added" in added.output, added.output
    before = _snapshot(project)
    again = runner.invoke(app, ["review", "add", folder, "--data", str(rows)])
    assert again.exit_code == 2 and "rows.jsonl:1: item new-1 is already in the project" in (
        again.output
    )
    assert _snapshot(project) == before
