"""Assignments: with N experts per item each item has N slots, an expert labelling an item takes
one, and no two experts ever hold the same slot, whatever the race; over HTTP a full item is
closed to a third expert (409), and "label the next item" hands out unfinished items first."""

from __future__ import annotations

import threading

import pytest
from typer.testing import CliRunner

from tests.review.conftest import write_jsonl
from tests.review.test_app import client_for, csrf_of
from truegrade.cli._app import app as cli
from truegrade.core import DataError
from truegrade.review import ReviewStore, SlotsTaken, create_review_app, init_project

runner = CliRunner()


def test_a_full_item_refuses_a_third_expert_and_keeps_every_label(project):
    new_md = project.user("new_md")
    project.set_experts_per_item(2)  # dr_a and dr_b hold both slots of every item
    item = project.items()[0]
    [criterion] = project.criteria(item.id)
    with pytest.raises(SlotsTaken, match="dr_a, dr_b"):
        project.set_label(new_md, item.id, criterion.id, True)
    assert project.next_item(new_md) is None
    assert [lb.user for lb in project.labels(item_id=item.id)] == ["dr_a", "dr_b"]
    project.set_experts_per_item(3)
    assert project.next_item(new_md) == item.id
    assert project.assignments(item.id) == [(0, "dr_a"), (1, "dr_b"), (2, "new_md")]
    # taken, not yet labelled: next still gives it back, and no second item is taken for it
    assert project.next_item(new_md) == item.id
    project.set_label(new_md, item.id, criterion.id, False)
    assert project.next_item(new_md) == project.items()[1].id


def test_fewer_slots_than_an_item_has_experts_is_refused_by_name(project):
    with pytest.raises(DataError, match="already has 2 experts"):
        project.set_experts_per_item(1)
    assert project.experts_per_item() is None


def test_racing_experts_never_share_a_slot_and_fill_every_item(tmp_path):
    data = tmp_path / "rows.jsonl"
    write_jsonl(
        data,
        [
            {"id": f"r{k}", "prompt": "p", "response": f"r{k}", "rubrics": ["Is kind"]}
            for k in range(12)
        ],
    )
    store = init_project(tmp_path / "proj", data=data, experts_per_item=2)
    names = [f"md{k}" for k in range(6)]
    for name in names:
        store.add_user(name, "expert", "pw")
    start = threading.Barrier(len(names))

    def work(name: str) -> None:
        mine = ReviewStore(tmp_path / "proj")
        user = mine.user(name)
        start.wait()
        while (item := mine.next_item(user)) is not None:
            for criterion in mine.criteria(item):
                mine.set_label(user, item, criterion.id, True)
        mine.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for item in store.items():
        holders = store.assignments(item.id)
        assert [slot for slot, _ in holders] == [0, 1]
        assert len({name for _, name in holders}) == 2
        assert sorted(lb.user for lb in store.labels(item_id=item.id)) == sorted(
            name for _, name in holders
        )


def test_over_http_a_closed_item_shows_no_buttons_and_a_label_gets_409(project, path_of):
    project.set_experts_per_item(2)
    client = client_for(create_review_app(path_of, n_resamples=50), "new_md")
    item = project.items()[3]
    [criterion] = project.criteria(item.id)
    page = client.get(f"/items/{item.id}")
    assert "it is not yours to label" in page.text
    assert 'value="met"' not in page.text
    answer = client.post(
        f"/items/{item.id}/labels",
        data={"criterion_id": criterion.id, "met": "met", "csrf": csrf_of(page.text)},
        headers={"accept": "application/json"},
    )
    assert answer.status_code == 409 and "no slot is free" in answer.json()["error"]
    assert "Nothing left for you" in client.get("/next").text
    project.set_experts_per_item(3)
    landed = client.get("/next")
    assert landed.url.path == f"/items/{project.items()[0].id}"
    assert 'value="met"' in landed.text


def test_the_cli_sets_slots_and_hands_out_items(tmp_path):
    data = tmp_path / "rows.jsonl"
    write_jsonl(
        data,
        [{"id": f"r{k}", "prompt": "p", "response": "r", "rubrics": ["Is kind"]} for k in range(5)],
    )
    project = tmp_path / "proj"
    made = runner.invoke(
        cli, ["review", "init", str(project), "--data", str(data), "--experts-per-item", "1"]
    )
    assert made.exit_code == 0, made.output
    for name in ("ana", "ben"):
        added = runner.invoke(cli, ["review", "user", str(project), name, "--password", "pw"])
        assert added.exit_code == 0, added.output
    first = runner.invoke(
        cli, ["review", "assign", str(project), "--expert", "ana", "--count", "3"]
    )
    assert first.exit_code == 0, first.output
    assert first.output.split() == ["r0", "r1", "r2"]
    second = runner.invoke(cli, ["review", "assign", str(project), "--expert", "ben"])
    assert second.output.split() == ["r3", "r4"]  # one expert per item: the rest only
    widened = runner.invoke(cli, ["review", "assign", str(project), "--experts-per-item", "2"])
    assert widened.exit_code == 0 and ReviewStore(project).experts_per_item() == 2
    refused = runner.invoke(cli, ["review", "assign", str(project)])
    assert refused.exit_code == 2 and "--experts-per-item" in refused.output
