"""``truegrade rubric lint | meta | score`` as a user runs them, against the judge simulator."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.simulator.fixtures import endpoint
from truegrade.cli._app import app

ROOT = Path(__file__).resolve().parents[2]
ADVICE = ROOT / "examples" / "data" / "advice_rubric.jsonl"
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


BAD_RUBRIC = """\
- criterion: Mentions "ibuprofen".
  points: 2
- criterion: Is helpful and accurate.
  points: 3
- criterion: Advises resting the ankle "for two days" before walking on it.
  points: 4
  tags: [axis:safety]
- criterion: Advises resting the ankle "for two days" before walking on it.
  points: 4
"""


def test_lint_reports_findings_writes_json_and_fails_on_errors(simulator, tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(BAD_RUBRIC)
    opts = endpoint(simulator)
    out = tmp_path / "lint.json"
    result = invoke(
        "rubric", "lint", rubric, "--judge-endpoint", opts["endpoint"], "--judge-model",
        opts["model"], "-o", "cache=null", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    doc = json.loads(out.read_text())
    assert doc["counts"] == {
        "duplicate": 1,
        "keyword_gameable": 1,
        "no_negative_criteria": 1,
        "vague": 1,
    }
    assert "keyword_gameable" in result.output and "4 criteria" in result.output
    lenient = invoke("rubric", "lint", rubric, "--fail-on", "never")
    assert lenient.exit_code == 0
    assert "not probed for keyword gaming" in lenient.output


def test_lint_reads_rubrics_from_data_rows_with_exemplars(simulator, tmp_path):
    opts = endpoint(simulator)
    result = invoke(
        "rubric", "lint", ADVICE, "--exemplars", ADVICE, "--judge-endpoint", opts["endpoint"],
        "--judge-model", opts["model"], "-o", "cache=null", "--out", tmp_path / "l.json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output  # warnings only
    doc = json.loads((tmp_path / "l.json").read_text())
    assert doc["rubrics"] == 6 and doc["exemplars"] == 12
    assert "keyword_gameable" not in doc["counts"]
    # two exemplars per rubric: never/always-met needs --min-exemplars 2 here, and says so
    assert doc["exemplar_checked"] == 0 and "not checked: 27 fewer than 3" in result.output
    lower = invoke(
        "rubric", "lint", ADVICE, "--exemplars", ADVICE, "--judge-endpoint", opts["endpoint"],
        "--judge-model", opts["model"], "-o", "cache=null", "--min-exemplars", 2,
        "--out", tmp_path / "l2.json",
    )  # fmt: skip
    assert lower.exit_code == 0, lower.output
    assert json.loads((tmp_path / "l2.json").read_text())["exemplar_checked"] == 27
    assert "checked on 27 of 27 criteria" in lower.output


def test_lint_errors_are_one_clear_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- criterion: x\n  points: zero\n")
    result = invoke("rubric", "lint", bad)
    assert result.exit_code == 2
    assert "bad.yaml[0]: points" in result.output


def test_meta_with_recorded_verdicts_and_with_a_judge(simulator, tmp_path):
    rows = [
        {
            "prompt": [{"role": "user", "content": "Rice?"}],
            "completion": completion,
            "rubric": {
                "criterion": 'Says to refrigerate "within one hour".',
                "points": 5,
                "tags": ["axis:accuracy"],
            },
            "binary_labels": labels,
            "category": category,
            "prompt_id": f"p{k}",
        }
        for k, (completion, labels, category) in enumerate(
            [
                ("Refrigerate it within one hour of cooking, in a shallow box.", [True, True], "a"),
                ("within one hour", [False, False], "a"),
                ("Leave it out overnight and it will be fine.", [False, True], "b"),
                ("Put it in the fridge within one hour, then eat it soon.", [True, True], "b"),
            ]
        )
    ]
    data = tmp_path / "meta.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps({"met": m}) + "\n" for m in [True, True, False, True]))
    recorded = invoke("rubric", "meta", data, "--verdicts", verdicts, "--out", tmp_path / "m.json")
    assert recorded.exit_code == 0, recorded.output
    assert "by category" in recorded.output and "by tag" in recorded.output
    assert "axis:accuracy" in recorded.output
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["rows"] == 4 and doc["pairs"] == 8
    assert doc["worst_categories"][0] == "a"  # the keyword-only row was called met
    opts = endpoint(simulator)
    judged = invoke(
        "rubric", "meta", data, "--judge-endpoint", opts["endpoint"], "--judge-model",
        opts["model"], "-o", "cache=null", "--out", tmp_path / "j.json",
    )  # fmt: skip
    assert judged.exit_code == 0, judged.output
    assert json.loads((tmp_path / "j.json").read_text())["predicted_met_rate"] == 0.5
    neither = invoke("rubric", "meta", data)
    assert neither.exit_code == 2 and "name an evaluator" in neither.output
    short = tmp_path / "short.jsonl"
    short.write_text('{"met": true}\n')
    assert "1 verdicts for 4 rows" in invoke("rubric", "meta", data, "--verdicts", short).output


def test_score_summarises_a_grade_run(simulator, tmp_path):
    spec = tmp_path / "rubric.yaml"
    spec.write_text(json.dumps({"type": "rubric", "judge": endpoint(simulator), "cache": None}))
    results = tmp_path / "results.jsonl"
    graded = invoke("grade", ADVICE, "--grader", spec, "--out", results, "--quiet")
    assert graded.exit_code == 0, graded.output
    summary = tmp_path / "summary.json"
    result = invoke("rubric", "score", results, "--out", summary)
    assert result.exit_code == 0, result.output
    doc = json.loads(summary.read_text())
    # six ideal answers at 1.0 and six careless ones below 0: the clipped mean of the mean
    scores = [json.loads(line)["score"] for line in results.read_text().splitlines()]
    assert doc["overall"]["estimate"] == max(0.0, sum(scores) / len(scores))
    assert {"axis:safety", "axis:accuracy", "axis:completeness"} <= set(doc["tags"])
    assert doc["overall"]["clusters"] == 12  # every row its own cluster
    # with the rows, the ideal and the careless answer to one prompt resample together: 6 prompts,
    # the same estimate, a different interval
    by_prompt = invoke("rubric", "score", results, "--data", ADVICE, "--out", summary)
    assert by_prompt.exit_code == 0, by_prompt.output
    assert "prompts" in by_prompt.output
    clustered = json.loads(summary.read_text())
    assert clustered["overall"]["clusters"] == 6
    assert clustered["overall"]["estimate"] == doc["overall"]["estimate"]
    assert clustered["overall"]["ci_high"] != doc["overall"]["ci_high"]
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": "elsewhere", "response": "x"}\n')
    wrong = invoke("rubric", "score", results, "--data", other)
    assert (
        wrong.exit_code == 2
        and "12 result ids of" in wrong.output
        and "are not rows of" in wrong.output
    )
