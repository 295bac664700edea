"""The project file: import as published, one label per expert and slot, an event log that
cannot be rewritten, and bad data refused with its file and line, leaving nothing behind."""

from __future__ import annotations

import sqlite3

import pytest

from tests.review.conftest import TABLE, meta_rows, write_jsonl
from truegrade.core import DataError
from truegrade.review import SCHEMA_VERSION, ReviewStore, init_project
from truegrade.review._store import check_password


def test_healthbench_meta_rows_become_items_experts_and_labels(project):
    assert len(project.items()) == 20
    assert [u.name for u in project.users("expert")] == ["dr_a", "dr_b", "new_md"]
    labels = project.labels()
    assert len(labels) == 40
    first = project.items()[0]
    mine = {lb.user: lb.met for lb in labels if lb.item_id == first.id}
    assert mine == {"dr_a": bool(TABLE[0][0]), "dr_b": bool(TABLE[0][1])}
    # one criterion of its own per item, clustered on the prompt
    assert all(c.item_id is not None for c in project.criteria())
    assert first.cluster == "p0" and first.prompt[0]["role"] == "user"


def test_an_expert_labelling_twice_gives_one_label_and_two_events(project):
    expert = project.user("new_md")
    item = project.items()[3]
    [criterion] = project.criteria(item.id)
    project.set_label(expert, item.id, criterion.id, True, "first tab")
    project.set_label(expert, item.id, criterion.id, False, "second tab")
    mine = project.labels(user="new_md")
    assert [(lb.met, lb.reason) for lb in mine] == [(False, "second tab")]
    kinds = [e["kind"] for e in project.events() if e["actor"] == "new_md"]
    assert kinds == ["label", "label"]


def test_only_experts_label_and_only_criteria_of_the_item(project):
    viewer = project.user("viewer")
    item, other = project.items()[:2]
    [criterion] = project.criteria(item.id)
    with pytest.raises(PermissionError):
        project.set_label(viewer, item.id, criterion.id, True)
    with pytest.raises(DataError, match="does not belong"):
        project.set_label(project.user("new_md"), other.id, criterion.id, True)


def test_the_event_log_is_append_only(project):
    db = sqlite3.connect(project.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE events SET actor = 'someone else'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM events")
    db.close()


def test_a_project_of_another_schema_is_refused(project):
    db = sqlite3.connect(project.path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(DataError, match="schema version"):
        ReviewStore(project.path.parent)


def test_passwords_are_stored_hashed_and_checked(project):
    [stored] = [
        r["password"] for r in project.query("SELECT password FROM users WHERE name = 'admin'")
    ]
    assert stored.startswith("scrypt$") and "admin-pass" not in stored
    assert check_password("admin-pass", stored) and not check_password("wrong", stored)
    assert project.login("admin", "wrong") is None
    token, csrf = project.login("admin", "admin-pass")
    user, same = project.session(token)
    assert user.role == "admin" and same == csrf
    # the session token is stored hashed: the file does not give a live session away
    assert not project.query("SELECT 1 FROM sessions WHERE token = ?", (token,))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("completion"), "needs 'completion' or 'response'"),
        (lambda r: r.update(binary_labels="yes"), "'binary_labels' must be"),
        (lambda r: r.update(anonymized_physician_ids=["one"]), "one rater per label"),
        (lambda r: r.update(prompt=3), "'prompt' must be text"),
        (lambda r: r.update(rubric={"criterion": "x", "points": "many"}), "'points'"),
    ],
)
def test_a_bad_row_names_its_line_and_nothing_is_written(tmp_path, change, message):
    rows = meta_rows()
    change(rows[6])
    data = tmp_path / "meta.jsonl"
    write_jsonl(data, rows)
    with pytest.raises(DataError, match=message) as found:
        init_project(tmp_path / "proj", data=data)
    assert f"{data}:7" in str(found.value)
    assert not (tmp_path / "proj").exists()


def test_responses_with_a_shared_rubric(tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("rubric:\n  - criterion: Says to call emergency services\n    points: 5\n")
    data = tmp_path / "rows.jsonl"
    write_jsonl(
        data,
        [
            {"id": "a", "prompt": "chest pain", "response": "call 911"},
            {"id": "b", "prompt": "chest pain", "response": "rest"},
        ],
    )
    store = init_project(tmp_path / "proj", data=data, rubric=rubric)
    assert [(i.key, c.key) for i, c in store.pairs()] == [("a", "c001"), ("b", "c001")]
    with pytest.raises(DataError, match="no 'rubrics' and no rubric file"):
        init_project(tmp_path / "other", data=data)
