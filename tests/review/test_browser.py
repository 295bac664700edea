"""The review app in a real browser (the machine's Chromium, driven by Playwright, launched by
path): an expert logs in, labels with the keyboard, sees the grader only after labelling, and
the dashboard moves when another expert labels. The pages are captured as the docs' screenshots
(``TRUEGRADE_SCREENSHOTS=docs/images`` writes them there)."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn

from truegrade.review import create_review_app

pytestmark = [
    pytest.mark.slow,
    pytest.mark.system_tool("chromium", "chromium-browser", "google-chrome", package="chromium"),
]


def _browser_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return found or str(shutil.which("google-chrome"))


@pytest.fixture
def server(project):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    app = create_review_app(project.path.parent, n_resamples=100)
    running = uvicorn.Server(uvicorn.Config(app, port=port, log_level="error"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    running.should_exit = True
    thread.join(timeout=10)


def test_an_expert_labels_blind_with_the_keyboard_and_the_dashboard_moves(
    server, project, tmp_path
):
    from playwright.sync_api import sync_playwright

    shots = Path(os.environ.get("TRUEGRADE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    item = project.items()[14]  # dr_a met, dr_b not met, the grader not met
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=_browser_path(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 800})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"{server}/login")
        page.fill("input[name=name]", "new_md")
        page.fill("input[name=password]", "expert-pass")
        page.click("button[type=submit]")
        page.wait_for_url(f"{server}/")
        page.screenshot(path=str(shots / "review-items.png"))
        page.goto(f"{server}/items/{item.id}")
        assert "appear once you label" in page.inner_text(".criterion")
        assert "because 14" not in page.content() and "dr_a" not in page.content()
        page.screenshot(path=str(shots / "review-blind.png"), full_page=True)
        page.focus(".criterion")
        page.keyboard.press("m")  # met, from the keyboard
        page.wait_for_selector(".revealed")
        revealed = page.inner_text(".revealed")
        assert "because 14" in revealed and "dr_a" in revealed and "dr_b" in revealed
        page.screenshot(path=str(shots / "review-revealed.png"), full_page=True)
        assert [lb.met for lb in project.labels(user="new_md")] == [True]
        # a viewer's dashboard refreshes itself when an expert labels
        viewer = browser.new_page(viewport={"width": 1100, "height": 800})
        viewer.goto(f"{server}/login")
        viewer.fill("input[name=name]", "viewer")
        viewer.fill("input[name=password]", "viewer-pass")
        viewer.click("button[type=submit]")
        viewer.goto(f"{server}/dashboard")
        assert "0.400" in viewer.inner_text("table.pairs")
        [criterion] = project.criteria(item.id)
        project.set_label(project.user("dr_b"), item.id, criterion.id, True)
        # the page's own script refetches it (the CSP forbids the test evaluating any)
        deadline = time.monotonic() + 15
        while "0.490" not in viewer.inner_text("table.pairs"):
            assert time.monotonic() < deadline, "the dashboard did not refresh"
            viewer.wait_for_timeout(250)
        viewer.screenshot(path=str(shots / "review-dashboard.png"), full_page=True)
        browser.close()
    assert not [e for e in errors if "Content Security Policy" in e], errors


def _login(page, server: str, name: str, password: str) -> None:
    page.goto(f"{server}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server}/")


def _launch(play):
    return play.chromium.launch(executable_path=_browser_path(), args=["--no-sandbox"])


def test_a_label_clicked_just_before_the_tab_closes_is_saved(server, project):
    from playwright.sync_api import sync_playwright

    item = project.items()[3]
    [criterion] = project.criteria(item.id)
    with sync_playwright() as play:
        browser = _launch(play)
        context = browser.new_context()
        page = context.new_page()
        _login(page, server, "new_md", "expert-pass")
        page.goto(f"{server}/items/{item.id}")
        page.click("button[value=not_met]", no_wait_after=True)
        page.close()  # at once: the label is in flight, the page is gone
        deadline = time.monotonic() + 15
        while not project.labels(user="new_md"):
            assert time.monotonic() < deadline, "the label sent as the tab closed was lost"
            time.sleep(0.1)
        browser.close()
    [label] = project.labels(user="new_md")
    assert (label.item_id, label.criterion_id, label.met) == (item.id, criterion.id, False)


def test_two_tabs_of_one_expert_give_one_label_the_last_clicked(server, project):
    from playwright.sync_api import sync_playwright

    item = project.items()[7]
    with sync_playwright() as play:
        browser = _launch(play)
        context = browser.new_context()  # one expert: the tabs share the session
        first, second = context.new_page(), context.new_page()
        _login(first, server, "new_md", "expert-pass")
        for tab in (first, second):
            tab.goto(f"{server}/items/{item.id}")
        first.click("button[value=met]")
        first.wait_for_selector(".revealed")
        second.click("button[value=not_met]")  # the second tab still shows the blind page
        second.wait_for_selector(".revealed")
        assert [lb.met for lb in project.labels(user="new_md")] == [False]
        first.reload()
        assert "chosen" in (first.get_attribute("button[value=not_met]", "class") or "")
        assert "chosen" not in (first.get_attribute("button[value=met]", "class") or "")
        browser.close()
    events = [e for e in project.events() if e["kind"] == "label" and e["actor"] == "new_md"]
    assert [e["detail"]["met"] for e in events] == [True, False]  # both kept in the log


def test_enter_in_the_reason_keeps_the_chosen_label(server, project):
    from playwright.sync_api import sync_playwright

    item = project.items()[2]
    with sync_playwright() as play:
        browser = _launch(play)
        page = browser.new_page()
        _login(page, server, "new_md", "expert-pass")
        page.goto(f"{server}/items/{item.id}")
        page.fill("input[name=reason]", "no label chosen yet")
        page.press("input[name=reason]", "Enter")
        page.wait_for_selector(".criterion .problem")
        assert "Choose Met or Not met first" in page.inner_text(".criterion .problem")
        assert project.labels(user="new_md") == []
        page.click("button[value=not_met]")
        page.wait_for_selector(".revealed")
        page.fill("input[name=reason]", "no follow-up advice")
        page.press("input[name=reason]", "Enter")
        deadline = time.monotonic() + 10
        while not project.labels(user="new_md")[0].reason:
            assert time.monotonic() < deadline, "the reason was not saved"
            time.sleep(0.1)
        browser.close()
    [label] = project.labels(user="new_md")
    assert (label.met, label.reason) == (False, "no follow-up advice")


def test_an_admin_upload_names_the_bad_line_and_adds_nothing(server, project, tmp_path):
    from playwright.sync_api import sync_playwright

    shots = Path(os.environ.get("TRUEGRADE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    good = '{"id": "n1", "prompt": "Fever?", "response": "Rest.", "rubrics": ["Says rest"]}\n'
    bad = tmp_path / "rows.jsonl"
    bad.write_text(good + '{"id": "n2", "prompt": 7, "response": "r", "rubrics": ["X"]}\n')
    fine = tmp_path / "more.jsonl"
    fine.write_text(good)
    before = project.count_items()
    with sync_playwright() as play:
        browser = _launch(play)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        _login(page, server, "admin", "admin-pass")
        page.goto(f"{server}/admin")
        page.set_input_files("form[action='/upload/data'] input[type=file]", str(bad))
        page.click("form[action='/upload/data'] button")
        page.wait_for_selector("[role=alert]")
        assert "rows.jsonl:2: 'prompt'" in page.inner_text("[role=alert]")
        assert project.count_items() == before
        page.screenshot(path=str(shots / "review-project.png"), full_page=True)
        page.set_input_files("form[action='/upload/data'] input[type=file]", str(fine))
        page.click("form[action='/upload/data'] button")
        page.wait_for_selector("[role=status]")
        assert "more.jsonl: 1 item added" in page.inner_text("[role=status]")
        browser.close()
    assert project.count_items() == before + 1
