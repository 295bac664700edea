"""The review app over HTTP: blind labelling decided by the server, roles cell by cell, CSRF on
every write, hostile text rendered as text."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from tests.review.conftest import attack_report_json
from truegrade.review import ROUTES, agreement, create_review_app, version_numbers

PASSWORDS = {"admin": "admin-pass", "viewer": "viewer-pass", "new_md": "expert-pass"}


@pytest.fixture
def app(path_of):
    return create_review_app(path_of, n_resamples=100)


def client_for(app, name: str | None) -> TestClient:
    client = TestClient(app)
    if name is not None:
        page = client.post("/login", data={"name": name, "password": PASSWORDS[name]})
        assert page.status_code == 200, page.text  # followed the redirect home
    return client


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def test_blind_until_the_expert_labels_then_everything_is_shown(app, project):
    expert = client_for(app, "new_md")
    item = project.items()[14]  # dr_a met, dr_b not met, grader not met ("because 14")
    [criterion] = project.criteria(item.id)
    page = expert.get(f"/items/{item.id}")
    assert page.status_code == 200
    # neither the grader's verdict nor another expert's label is in the response at all
    for secret in ("because 14", "dr_a", "dr_b", "Grader:"):
        assert secret not in page.text
    saved = expert.post(
        f"/items/{item.id}/labels",
        data={
            "criterion_id": criterion.id,
            "met": "met",
            "reason": "clear advice",
            "csrf": csrf_of(page.text),
        },
    )
    assert saved.status_code == 200
    after = expert.get(f"/items/{item.id}").text
    assert "because 14" in after and "dr_a" in after and "dr_b" in after
    assert "The grader is wrong" in after  # the dispute is offered once the verdict is seen
    assert [lb.reason for lb in project.labels(user="new_md")] == ["clear advice"]


def test_a_viewer_sees_every_verdict_and_label(app, project):
    page = client_for(app, "viewer").get(f"/items/{project.items()[14].id}")
    assert "because 14" in page.text and "dr_a" in page.text
    assert 'name="met"' not in page.text  # nothing to label


def test_every_write_needs_the_session_s_csrf_token(app, project):
    expert = client_for(app, "new_md")
    item = project.items()[0]
    [criterion] = project.criteria(item.id)
    for token in ("", "forged"):
        answer = expert.post(
            f"/items/{item.id}/labels",
            data={"criterion_id": criterion.id, "met": "met", "csrf": token},
        )
        assert answer.status_code == 403
    assert project.labels(user="new_md") == []


ALLOWED = {
    role: {key for key, roles in ROUTES.items() if role in roles}
    for role in ("expert", "viewer", "admin")
}


@pytest.mark.parametrize("who", ["new_md", "viewer", "admin", None])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_role_matrix_cell_by_cell(app, project, who, route):
    client = client_for(app, who)
    method, path = route
    item = project.items()[0]
    [criterion] = project.criteria(item.id)
    path = path.replace("{item_id}", str(item.id)).replace("{criterion_id}", str(criterion.id))
    if method == "GET":
        answer = client.get(path, headers={"accept": "application/json"})
    else:
        csrf = csrf_of(client.get("/").text) if who else ""
        data = {
            "criterion_id": criterion.id,
            "met": "met",
            "text": "Names a red flag",
            "name": "matrix-user",
            "password": "long enough",
            "experts_per_item": "",
            "csrf": csrf,
        }
        uploads = {
            "/upload/data": b'{"id": "m1", "prompt": "p", "response": "r", "rubrics": ["X"]}\n',
            "/upload/rubric": b"- {criterion: Names a red flag, points: 1}\n",
        }
        files = None
        if path in uploads:  # an upload's form is its file and the CSRF token, nothing else
            files, data = {"file": ("upload", uploads[path])}, {"csrf": csrf}
        answer = client.post(path, data=data, files=files, headers={"accept": "application/json"})
    role = {"new_md": "expert", "viewer": "viewer", "admin": "admin"}.get(who)
    if role is None:
        assert answer.status_code == 401
    elif route in ALLOWED[role]:
        assert answer.status_code == 200, answer.text
    else:
        assert answer.status_code == 403, answer.text


def test_hostile_text_renders_as_text_and_no_inline_script_runs(app, project, tmp_path):
    with project.write() as db:
        db.execute(
            "UPDATE items SET response = ? WHERE id = ?",
            ("<script>alert(1)</script><img src=x onerror=alert(2)>", project.items()[0].id),
        )
    page = client_for(app, "viewer").get(f"/items/{project.items()[0].id}")
    assert "<script>alert(1)" not in page.text and "&lt;script&gt;alert(1)" in page.text
    assert "<img src=x" not in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "<script>" not in page.text.replace(
        '<script src="/static/review.js" defer></script>', ""
    )


def test_the_dashboard_shows_the_kappa_and_its_change(app, project):
    viewer = client_for(app, "viewer")
    assert "0.400" in viewer.get("/dashboard").text
    dr_b = project.user("dr_b")
    item = project.items()[14]
    [criterion] = project.criteria(item.id)
    project.set_label(dr_b, item.id, criterion.id, True)
    assert f"{(0.75 - 0.51) / 0.49:.3f}" in viewer.get("/dashboard").text


def test_drill_down_lists_the_items_where_grader_and_experts_split(app, project):
    viewer = client_for(app, "viewer")
    everything = viewer.get("/drill").text
    # the grader says met on items 0-11; experts disagree with it on 0-11 where either says
    # not met, and on 12-19 where either says met
    assert everything.count('class="split"') == 10
    only = viewer.get("/drill", params={"category": "routine"}).text
    assert only.count('class="split"') < everything.count('class="split"')


def test_a_wrong_password_is_refused(app):
    client = TestClient(app)
    answer = client.post("/login", data={"name": "admin", "password": "nope"})
    assert answer.status_code == 401 and "do not match" in answer.text
    assert client.get("/", headers={"accept": "application/json"}).status_code == 401


def test_an_edit_makes_a_version_and_a_stale_edit_gets_a_409_with_the_diff(app, project):
    expert, admin = client_for(app, "new_md"), client_for(app, "admin")
    item = project.items()[2]
    [criterion] = project.criteria(item.id)
    csrf_e, csrf_a = csrf_of(expert.get("/").text), csrf_of(admin.get("/").text)
    before = agreement(project, n_resamples=100, per_criterion=criterion.key)["criteria"]
    first = expert.post(
        f"/criteria/{criterion.id}",
        data={"text": "Advises seeking care within 24 hours", "csrf": csrf_e},
        headers={"accept": "application/json"},
    )
    assert first.status_code == 200 and first.json()["version"] == 2
    # the admin still edits from version 1: refused, with what is there now
    stale = admin.post(
        f"/criteria/{criterion.id}",
        data={"text": "Advises rest", "csrf": csrf_a},
        headers={"accept": "application/json"},
    )
    assert stale.status_code == 409
    assert "within 24 hours" in stale.json()["diff"] and "+Advises rest" in stale.json()["diff"]
    [current] = project.criteria(item.id)
    assert current.text == "Advises seeking care within 24 hours" and current.version == 2
    # the old wording's labels stay as history, never on the new text
    assert len(project.labels(item_id=item.id)) == 0
    assert len(project.labels(item_id=item.id, current=False)) == 2
    page = expert.get(f"/criteria/{current.id}").text
    assert "Advises when to seek care (case 2)" in page  # the history
    # each wording's own agreement, the old beside the new: the old one's is what the
    # dashboard showed for the criterion before the edit
    old = version_numbers(project, criterion, n_resamples=100)
    assert old == before[criterion.key] and old["labelled"] == 1 and old["labels"] == 2
    assert version_numbers(project, current, n_resamples=100)["labelled"] == 0
    rows = re.findall(r"<td>(\d+ / \d+)</td>", page)
    assert rows == ["1 / 1", "0 / 1"]


def test_lint_findings_for_a_draft(app):
    expert = client_for(app, "new_md")
    csrf = csrf_of(expert.get("/").text)
    vague = expert.post("/lint", data={"text": "Is good", "csrf": csrf}).json()["findings"]
    assert vague and all({"code", "severity", "reason"} <= set(f) for f in vague)
    assert expert.post("/lint", data={"text": "Is good"}).status_code == 403  # no CSRF token


def _report(tmp_path, item_key: str):
    path = tmp_path / "attack.json"
    path.write_bytes(attack_report_json(item_key))
    return path


def test_attack_examples_are_labelled_blind_then_shown_with_their_attack(app, project, tmp_path):
    from truegrade.review import import_attacks

    origin = project.items()[0]
    assert import_attacks(project, _report(tmp_path, origin.key)) == 1
    assert import_attacks(project, _report(tmp_path, origin.key)) == 0  # once
    added = project.items()[-1]
    assert added.source == "attack" and added.prompt == origin.prompt
    [criterion] = project.criteria(added.id)
    assert criterion.text == project.criteria(origin.id)[0].text
    expert = client_for(app, "new_md")
    pages = [expert.get(p).text for p in ("/", f"/items/{added.id}", f"/criteria/{criterion.id}")]
    for page in pages:
        assert "rating_injection" not in page and "attack" not in page.lower()
    page = expert.get(f"/items/{added.id}").text
    assert "&lt;b&gt;met&lt;/b&gt;" in page  # the hostile response, as text
    expert.post(
        f"/items/{added.id}/labels",
        data={"criterion_id": criterion.id, "met": "not_met", "csrf": csrf_of(page)},
    )
    assert "attack: rating_injection" in expert.get(f"/items/{added.id}").text
    assert "rating_injection" in client_for(app, "viewer").get("/").text


def test_a_report_for_other_items_is_refused(project, tmp_path):
    from truegrade.core import DataError
    from truegrade.review import import_attacks

    with pytest.raises(DataError, match="does not hold: nowhere"):
        import_attacks(project, _report(tmp_path, "nowhere"))
    (tmp_path / "junk.json").write_text("{}")
    with pytest.raises(DataError, match="not an attack report"):
        import_attacks(project, tmp_path / "junk.json")
