"""A row that cannot be graded is an error, never a score: one table of unusable rows, through
every built-in grader each applies to and through every face a trainer reads (TRL's reward
function, verl's ``compute_score``, the reward server); and GSM8K's answers, short and long, as
keys that grade.

An unusable row gets ``error`` set and ``passed`` None from the grader, ``None`` from TRL's
reward function, ``grader_error == 1.0`` from verl and an ``error`` from the server: a 0 there
would be trained on as a wrong answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.simulator.fixtures import endpoint, simulator
from truegrade.core import Grader, load_grader
from truegrade.integrations import verl
from truegrade.integrations.trl import reward_func
from truegrade.serve import ServerProcess

__all__ = ["simulator"]  # the judge simulator: a fixture, found by pytest here

ROOT = Path(__file__).resolve().parents[2]
REWARDS = ROOT / "tests" / "graders" / "python" / "rewards_for_tests.py"
GSM8K_SHORT = ROOT / "tests" / "data" / "gsm8k_short_answers.jsonl"

SPECS: dict[str, dict[str, Any]] = {
    "math": {"type": "math"},
    "numeric": {"type": "numeric"},
    "exact": {"type": "exact"},
    "choice": {"type": "choice"},
    "regex": {"type": "regex", "pattern_from_reference": True},
    "json": {"type": "json", "schema_from_reference": True},
    "instructions": {"type": "instructions"},
    "code": {"type": "code"},
    "rubric": {"type": "rubric", "cache": None},
    "python": {"type": "python", "path": str(REWARDS), "function": "not_applicable"},
    "judge": {"type": "judge", "mode": "reference", "cache": None},  # + the simulator endpoint
}
"""Each built-in grader that reads a reference, as the faces build it: from a spec (``judge``
asks the simulator, so a row that reached a judge would get a real score). ``reward_model``
reads none."""

PROGRAM = "def f(x):\n    return x\n"
EMPTY_KEYED = ("math", "numeric", "exact", "choice", "regex", "json", "judge", "rubric")


@dataclass(frozen=True)
class Row:
    """A row, and the built-in graders it is meant for."""

    name: str
    row: dict[str, Any]
    graders: tuple[str, ...]
    passed: bool | None = None  # for a good row: the verdict it must get
    columns: dict[str, Any] = field(default_factory=dict)


UNUSABLE = [
    Row("no reference", {"response": r"\boxed{5}"}, EMPTY_KEYED),
    Row("an empty reference", {"response": "", "reference": ""}, (*EMPTY_KEYED, "code")),
    Row("a blank reference", {"response": "  ", "reference": "  "}, (*EMPTY_KEYED, "code")),
    Row(
        "a prose key, echoed",
        {
            "response": r"\boxed{Let's think step by step.}",
            "reference": "Let's think step by step.",
        },
        ("math", "numeric", "choice"),
    ),
    Row(
        "a sentence as the key",
        {"response": r"\boxed{5}", "reference": "The answer depends on the context."},
        ("math", "numeric", "choice"),
    ),
    Row("a bare ####", {"response": "#### 10", "reference": "####"}, ("math", "numeric")),
    Row(
        "a GSM8K answer whose #### line is empty",
        {"response": r"\boxed{10}", "reference": "The total is 5+5=<<5+5=10>>10.\n####"},
        ("math", "numeric"),
    ),
    Row(
        "a key the parser refuses", {"response": r"\boxed{2}", "reference": "2^{x^{x}}"}, ("math",)
    ),
    Row(
        "a reference of the wrong type",
        {"response": "{'a': 1}", "reference": {"a": 1}},
        ("math", "numeric", "exact", "choice", "regex", "instructions", "code", "rubric"),
    ),
    Row(
        "a list of accepted answers, one empty",
        {"response": "", "reference": ["Paris", ""]},
        ("exact",),
    ),
    Row(
        "a code spec that is not a spec",
        {"response": PROGRAM, "reference": "assert f(1) == 1"},
        ("code",),
    ),
    Row(
        "a code spec with no tests",
        {"response": PROGRAM, "reference": {"entry_point": "f"}},
        ("code",),
    ),
    Row(
        "IFEval's constraints missing",
        {"prompt": "Write a haiku about rain.", "response": "Rain on the tin roof."},
        ("instructions", "code"),
    ),
    Row(
        "an unknown IFEval instruction",
        {
            "prompt": "Write a haiku about rain.",
            "response": "Rain on the tin roof.",
            "reference": {"instruction_id_list": ["no:such_check"], "kwargs": [{}]},
        },
        ("instructions",),
    ),
    Row(
        "IFEval's arguments missing, as columns",
        {"prompt": "Write a haiku about rain.", "response": "Rain on the tin roof."},
        ("instructions",),
        columns={"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{}]},
    ),
    Row("a regex that does not compile", {"response": "(", "reference": "("}, ("regex",)),
    Row("an empty regex", {"response": "anything", "reference": ""}, ("regex",)),
    Row("two letters as a choice key", {"response": "Answer: B", "reference": "AB"}, ("choice",)),
    Row(
        "a choice key outside the choices", {"response": "Answer: E", "reference": "E"}, ("choice",)
    ),
    Row("a word as a choice key", {"response": "Answer: Paris", "reference": "Paris"}, ("choice",)),
    Row(
        "a JSON schema that is text",
        {"response": '{"name": "x"}', "reference": "an object with a name"},
        ("json",),
    ),
    Row(
        "a JSON schema with a bad keyword",
        {"response": '{"name": "x"}', "reference": {"type": "bogus"}},
        ("json",),
    ),
    Row(
        "a JSON value where its schema belongs",
        {"response": '{"name": "x"}', "reference": {"name": "x"}},
        ("json",),
    ),
    Row("a rubric that is text", {"response": "Cool it.", "reference": "Be helpful."}, ("rubric",)),
    Row("an empty rubric", {"response": "Cool it.", "reference": []}, ("rubric", "judge")),
    Row(
        "a rubric with no positive criterion",
        {"response": "Cool it.", "reference": [{"criterion": "Recommends butter.", "points": -4}]},
        ("rubric",),
    ),
    Row(
        "a reward function that returns None",
        {"response": r"\boxed{5}", "reference": "5"},
        ("python",),
    ),
]

LONG = (
    "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n"
    "Natalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72"
)
SHORT = "The total is 5+5=<<5+5=10>>10.\n#### 10"
THOUSANDS = "He earns 25*40=<<25*40=1000>>1,000 a week.\n#### 1,000"
GSM8K = ("math", "numeric")
GOOD = [
    Row("short, boxed", {"response": r"so \boxed{10}", "reference": SHORT}, GSM8K, True),
    Row("short, ####", {"response": "5+5=<<5+5=10>>10\n#### 10", "reference": SHORT}, GSM8K, True),
    Row("short, wrong", {"response": r"\boxed{11}", "reference": SHORT}, GSM8K, False),
    Row("short, #### wrong", {"response": "#### 9", "reference": SHORT}, GSM8K, False),
    Row("bare ####, right", {"response": r"\boxed{10}", "reference": "#### 10"}, GSM8K, True),
    Row("long, boxed", {"response": r"\boxed{72}", "reference": LONG}, GSM8K, True),
    Row("long, ####", {"response": "#### 72", "reference": LONG}, GSM8K, True),
    Row("long, wrong", {"response": r"\boxed{24}", "reference": LONG}, GSM8K, False),
    Row("thousands, plain", {"response": r"\boxed{1000}", "reference": THOUSANDS}, GSM8K, True),
    Row("thousands, grouped", {"response": "#### 1,000", "reference": THOUSANDS}, GSM8K, True),
    Row(
        "box and #### differ",
        {"response": "\\boxed{3}\n#### 5", "reference": "#### 5"},
        GSM8K,
        False,
    ),
    Row(
        "a calculator mark is not an answer",
        {"response": "48/2=<<48/2=24>>\n#### 72", "reference": LONG},
        GSM8K,
        True,
    ),
]


def _cases(rows: list[Row]) -> list[Any]:
    return [pytest.param(r, g, id=f"{g}: {r.name}") for r in rows for g in r.graders]


def _sample(row: Row, i: int = 0) -> dict[str, Any]:
    return {"id": i, **row.row, **row.columns}


@pytest.fixture(scope="module")
def specs(simulator, tmp_path_factory) -> dict[str, Path]:
    """Each grader's spec as a file: the form every face (TRL, verl, the server) loads."""
    folder = tmp_path_factory.mktemp("specs")
    paths = {}
    for name, spec in SPECS.items():
        full = {**spec, **endpoint(simulator)} if name == "judge" else spec
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(full))
    return paths


@pytest.fixture(scope="module")
def graders(specs) -> dict[str, Grader]:
    return {name: load_grader(path) for name, path in specs.items()}


def test_every_grader_here_has_unusable_rows():
    assert {g for row in UNUSABLE for g in row.graders} == set(SPECS)


@pytest.mark.parametrize(("row", "name"), _cases(UNUSABLE))
def test_an_unusable_row_is_an_error_not_a_score(graders, row, name):
    grade = graders[name].grade(_sample(row))
    assert grade.error is not None, (grade.score, grade.passed, grade.flags, grade.explanation)
    assert grade.passed is None and grade.score == 0.0


@pytest.mark.parametrize(("row", "name"), _cases(GOOD))
def test_gsm8k_answers_are_keys(graders, row, name):
    grade = graders[name].grade(_sample(row))
    assert grade.error is None, grade.error
    assert grade.passed is row.passed, (grade.flags, grade.explanation)


def _gsm8k_short_answers() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GSM8K_SHORT.read_text().splitlines()[1:]]


@pytest.mark.parametrize("name", GSM8K)
def test_every_short_gsm8k_answer_is_a_key(graders, name):
    """GSM8K's own answers under 80 characters (53 of its 8,792): each was once read as an
    equation, so the right answer scored 0."""
    keys = _gsm8k_short_answers()
    assert len(keys) == 53
    rows = []
    for i, key in enumerate(keys):
        final = key["answer"].rpartition("#### ")[2].strip()
        wrong = str(int(final.replace(",", "")) + 1)
        rows += [
            {"id": f"{i}-boxed", "response": f"\\boxed{{{final}}}", "reference": key["answer"]},
            {"id": f"{i}-hashes", "response": f"#### {final}", "reference": key["answer"]},
            {"id": f"{i}-wrong", "response": f"\\boxed{{{wrong}}}", "reference": key["answer"]},
        ]
    grades = graders[name].grade_batch(rows)
    assert [g.error for g in grades] == [None] * len(rows)
    assert [g.passed for g in grades] == [not r["id"].endswith("wrong") for r in rows]


# -- the faces -----------------------------------------------------------------------------------


def _trl(reward: Any, row: Row) -> tuple[float | None, str]:
    sample = _sample(row)
    reasons: dict[str, list[Any]] = {}
    columns = {k: [v] for k, v in sample.items() if k not in ("id", "prompt", "response")}
    [value] = reward(
        prompts=[sample.get("prompt")],
        completions=[sample["response"]],
        log_extra=reasons.__setitem__,
        **columns,
    )
    return value, reasons[f"{reward.__name__}_reason"][0]


@pytest.mark.parametrize(("row", "name"), _cases(UNUSABLE))
def test_trl_gives_none_for_an_unusable_row(specs, graders, row, name):
    value, reason = _trl(reward_func(str(specs[name])), row)
    assert value is None
    assert reason == graders[name].grade(_sample(row)).error


@pytest.mark.parametrize(("row", "name"), _cases(GOOD))
def test_trl_rewards_gsm8k_rows(specs, row, name):
    value, _ = _trl(reward_func(str(specs[name])), row)
    assert value == (1.0 if row.passed else 0.0)


def _verl(spec: Path, row: Row) -> dict[str, Any]:
    sample = _sample(row)
    extra = {k: v for k, v in sample.items() if k not in ("id", "response", "reference")}
    return verl.compute_score(
        "truegrade/test",
        sample["response"],
        sample.get("reference"),
        extra_info=extra or None,
        grader=str(spec),
    )


@pytest.mark.parametrize(("row", "name"), _cases(UNUSABLE))
def test_verl_flags_an_unusable_row(specs, row, name):
    result = _verl(specs[name], row)
    assert result["grader_error"] == 1.0 and result["score"] == 0.0 and result["acc"] is False


@pytest.mark.parametrize(("row", "name"), _cases(GOOD))
def test_verl_scores_gsm8k_rows(specs, row, name):
    result = _verl(specs[name], row)
    assert result["grader_error"] == 0.0 and result["acc"] is row.passed


@pytest.mark.slow  # one server process per grader
@pytest.mark.parametrize("name", list(SPECS))
def test_the_server_answers_an_unusable_row_with_an_error(specs, graders, name):
    bad = [r for r in UNUSABLE if name in r.graders]
    good = [r for r in GOOD if name in r.graders]
    rows = [_sample(r, i) for i, r in enumerate(bad + good)]
    with ServerProcess(str(specs[name]), workers=1) as server:
        response = httpx.post(server.url + "/grade", json={"samples": rows}, timeout=120)
    assert response.status_code == 200, response.text
    grades = response.json()["grades"]
    expected = [graders[name].grade(_sample(r)).error for r in bad]
    assert [g["error"] for g in grades[: len(bad)]] == expected
    assert all(e is not None for e in expected)
    assert [g["passed"] for g in grades[: len(bad)]] == [None] * len(bad)
    assert [(g["error"], g["passed"]) for g in grades[len(bad) :]] == [
        (None, r.passed) for r in good
    ]
