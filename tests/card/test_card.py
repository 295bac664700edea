"""The grader card: built from the bundled examples, complete, escaped, rendered by a browser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from truegrade.attacks import AttackReport
from truegrade.card import Card, build_card, write_card
from truegrade.card._render import render_html
from truegrade.cli._app import app
from truegrade.core import Sample, load_grader
from truegrade.data import read_samples

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
EVERYTHING = Path(__file__).with_name("everything.py")


def rows(name: str) -> list[Sample]:
    return [s for _, s in read_samples(EXAMPLES / "data" / name)]


@pytest.fixture(scope="module")
def arith_cards() -> dict[str, Card]:
    data = rows("arith.jsonl")
    naive = load_grader(f"{EXAMPLES}/graders/naive_last_number.py:reward", pass_threshold=1)
    return {
        "naive": build_card(naive, data, data_name="arith.jsonl"),
        "math": build_card(load_grader("math"), data, data_name="arith.jsonl"),
    }


def test_the_naive_reward_is_unsafe_and_math_holds(arith_cards):
    naive, math = arith_cards["naive"], arith_cards["math"]
    assert naive.verdict.status == "unsafe"
    assert naive.verdict.validity.value == pytest.approx(0.8)
    assert naive.exploitability.exploitability.rate == 1.0
    assert any(f.startswith("hedge_") for f in naive.verdict.fix_first)
    assert math.verdict.status == "holds"
    assert math.verdict.validity.value == 0.0
    assert math.exploitability.exploitability.items_exploited == 0
    assert math.verdict.fix_first == []


def test_the_json_has_every_section(arith_cards, tmp_path):
    paths = write_card(arith_cards["naive"], tmp_path / "naive.html")
    doc = json.loads(paths["json"].read_text())
    for section in ("verdict", "validity", "exploitability", "soundness", "seconds", "machine"):
        assert doc[section] is not None, section
    assert doc["verdict"]["status"] == "unsafe"
    assert Card.model_validate(doc).rows == 84
    markdown = paths["markdown"].read_text()
    assert markdown.startswith("# Grader card: naive_last_number.py:reward")
    assert "## Verdict: UNSAFE" in markdown


def test_the_code_and_rubric_examples_build(tmp_path):
    code = build_card(
        load_grader(f"{EXAMPLES}/graders/exit_code.py:reward"),
        rows("code_tasks.jsonl"),
        attacks=["exit_early", "always_equal"],
    )
    assert code.exploitability.kind == "code"
    assert code.verdict.status == "unsafe"
    assert code.validity is None and not code.verdict.validity.measured
    rubric = build_card(
        load_grader(f"{EXAMPLES}/graders/keyword_rubric.py:reward"), rows("advice_rubric.jsonl")
    )
    assert rubric.verdict.worst_attack == "keyword_stuffing"
    write_card(rubric, tmp_path / "rubric.html")


def test_hostile_examples_are_escaped_in_the_html():
    items = [Sample(id=i, prompt="Explain.", reference="an answer") for i in range(2)]
    card = build_card(
        load_grader(f"{EVERYTHING}:reward"),
        items,
        kind="text",
        attacks=["template_break", "prompt_injection"],
        checks=[],
    )
    html = render_html(card)
    assert "<instructions>" not in html and "</response>" not in html
    assert "&lt;instructions&gt;" in html
    assert "<script" not in html


def test_overoptimization_section_from_proxy_and_gold_columns(tmp_path):
    from truegrade.goodhart import synthetic_pool

    pool = synthetic_pool(prompts=60, pool_size=32, noise="student_t", seed=0)
    data = [
        Sample(
            id=i,
            prompt=f"p{g}",
            response="\\boxed{1}",
            reference="1",
            group=str(g),
            metadata={"proxy": float(p), "gold": float(q)},
        )
        for i, (p, q, g) in enumerate(zip(pool.proxy, pool.gold, pool.groups, strict=True))
    ]
    card = build_card(
        load_grader("math"),
        data[:400],
        proxy="metadata.proxy",
        gold="metadata.gold",
        checks=[],
        attacks=["hedge_boxes"],
    )
    assert card.overoptimization is not None
    assert card.overoptimization["peak"]["n"] >= 1
    assert "<polyline" in render_html(card)
    # the same columns are found without being named, and the written JSON carries the section
    found = build_card(load_grader("math"), data[:400], checks=[], attacks=["hedge_boxes"])
    assert found.overoptimization == card.overoptimization
    paths = write_card(found, tmp_path / "overopt.html")
    assert (
        json.loads(paths["json"].read_text())["overoptimization"]["peak"]
        == card.overoptimization["peak"]
    )
    plain = build_card(load_grader("math"), data[:40], checks=[], attacks=["hedge_boxes"])
    assert (
        build_card(
            load_grader("math"),
            [s.model_copy(update={"metadata": {}}) for s in data[:40]],
            checks=[],
            attacks=["hedge_boxes"],
        ).overoptimization
        is None
        and plain.overoptimization is not None
    )


def _chromium() -> str | None:
    return (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )


@pytest.mark.system_tool("chromium", "chromium-browser", "google-chrome", package="chromium")
@pytest.mark.parametrize(("name", "colour"), [("naive", (192, 57, 43)), ("math", (46, 125, 79))])
def test_the_html_renders_in_a_browser_with_the_verdict_on_top(arith_cards, tmp_path, name, colour):
    from PIL import Image

    paths = write_card(arith_cards[name], tmp_path / f"{name}.html")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--hide-scrollbars",
    ]
    dom = subprocess.run(
        [_chromium(), *flags, "--dump-dom", paths["html"].as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert 'id="verdict"' in dom.stdout and "What to fix first" in dom.stdout
    shot = tmp_path / f"{name}.png"
    subprocess.run(
        [
            _chromium(),
            *flags,
            "--window-size=1100,900",
            f"--screenshot={shot}",
            paths["html"].as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    image = Image.open(shot).convert("RGB")
    top = image.crop((0, 0, image.width, image.height // 3))
    width, height = top.size
    pixels = [top.getpixel((x, y)) for x in range(0, width, 4) for y in range(0, height, 4)]
    share = sum(
        1 for p in pixels if all(abs(a - b) <= 6 for a, b in zip(p, colour, strict=True))
    ) / len(pixels)
    assert share > 0.03, f"the verdict colour covers only {share:.1%} of the top third"


def test_the_card_command_writes_three_files(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "truegrade",
            "card",
            str(EXAMPLES / "data" / "arith.jsonl"),
            "-g",
            "math",
            "--out",
            str(tmp_path / "card.html"),
            "--checks",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert "HOLDS" in result.stdout
    for suffix in (".html", ".md", ".json"):
        assert (tmp_path / f"card{suffix}").exists()
    bad = subprocess.run(
        [sys.executable, "-m", "truegrade", "card", "x.jsonl", "-g", "math", "--proxy", "a"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "--proxy and --gold" in bad.stderr
    typo = CliRunner().invoke(
        app, ["card", str(EXAMPLES / "data" / "arith.jsonl"), "-g", "math", "--kind", "maths"]
    )
    assert typo.exit_code == 2 and "'maths' is not one of math, code, text" in typo.output


def test_the_card_asks_an_attacker_llm_when_given_one(simulator, tmp_path):
    # items with no number-free exploit in the library (master keys only): what the card reports
    # as exploited, the attacker wrote, and the card shows it and what it cost
    data = tmp_path / "items.jsonl"
    products = [(53, 31), (95, 18), (86, 19)]
    data.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "prompt": f"What is {a} * {b}?", "reference": a * b}) + "\n"
            for i, (a, b) in enumerate(products)
        )
    )
    naive = f"{EXAMPLES}/graders/naive_last_number.py:reward"
    args = ["card", data, "-g", naive, "--attacks", "master_key", "--checks", "none"]
    args += ["--budget", 10, "--out", tmp_path / "card.html"]
    attacker = ["--attacker-endpoint", simulator.base_url, "--attacker-model", "sim"]
    result = CliRunner().invoke(app, [str(a) for a in args + attacker], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "UNSAFE" in result.output
    doc = json.loads((tmp_path / "card.json").read_text())
    report = AttackReport.model_validate(doc["exploitability"])
    assert report.exploitability.items_exploited == 3
    assert report.attacker is not None and report.attacker.exploits >= 3
    assert {s.source for s in report.search} == {"attacker"}
    html = (tmp_path / "card.html").read_text()
    assert "Attacker LLM <code>sim</code>" in html and html.count("<td>attacker</td>") == 3
    assert "### Adaptive search (10 queries per item)" in (tmp_path / "card.md").read_text()
    # without the attacker the same card finds nothing; an attacker without a budget is refused
    alone = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert alone.exit_code == 0 and "HOLDS" in alone.output, alone.output
    no_budget = [a for a in args if a not in ("--budget", 10)] + attacker
    refused = CliRunner().invoke(app, [str(a) for a in no_budget])
    assert refused.exit_code == 2 and "--budget" in refused.output


def test_the_demo_shows_naive_graders_exploited_and_hardened_ones_holding(tmp_path):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    verdicts = dict(
        line.split()[::-1] for line in result.stdout.splitlines() if line.strip().endswith(".html")
    )
    assert len(verdicts) == 12  # six examples, a naive and a hardened grader each
    for path, status in verdicts.items():
        hardened = "truegrade_" in path
        assert status == ("holds" if hardened else "unsafe"), (path, status)
        assert (tmp_path / path).exists()
        doc = json.loads((tmp_path / path).with_suffix(".json").read_text())
        for section in ("verdict", "exploitability", "soundness", "seconds", "machine"):
            assert doc[section] is not None, (path, section)
        attack = doc["exploitability"]
        assert sum(a["tried"] for a in attack["attacks"]) > 0, path  # attacked, not skipped
        exploited = attack["exploitability"]["items_exploited"]
        # unsafe because exploited (not only for rejecting right answers); holding against it
        assert (exploited == 0) if hardened else (exploited > 0), (path, exploited)
        if "stdio" in path or "repo" in path:  # their tests audited: probes, the task's claim
            assert doc["soundness"]["checks"]["tests"].startswith("ran"), path


def test_preference_rows_put_pairwise_agreement_on_the_card(tmp_path):
    # a reward that likes the longer response, on pairs where the chosen one is longer in three
    # of four: 75% pairwise accuracy, the rules in force shown beside it
    pairs = [
        Sample.from_row(
            {"id": i, "prompt": f"Say something {i}.", "chosen": chosen, "rejected": rejected}
        )
        for i, (chosen, rejected) in enumerate(
            [("a b c d", "a"), ("a b c", "a b"), ("one two", "one"), ("x", "x y z")]
        )
    ]
    reward = tmp_path / "length.py"
    reward.write_text(
        "def reward(completions, **kwargs):\n    return [len(c.split()) for c in completions]\n"
    )
    card = build_card(load_grader(f"{reward}:reward"), pairs, checks=[], attacks=[])
    assert card.validity is None and card.pairwise is not None
    assert card.pairwise.accuracy.estimate == 0.75
    paths = write_card(card, tmp_path / "pairs.html")
    markdown = paths["markdown"].read_text()
    assert "pairwise accuracy 75%" in markdown and "combine=both_agree" in markdown
    assert "pairwise accuracy 75%" in paths["html"].read_text()
    assert json.loads(paths["json"].read_text())["pairwise"]["pairs"] == 4
