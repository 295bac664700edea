"""A rollout dump (several responses per prompt, no group column) is read as its prompts: the
audit counts 10 items, not 40, and flags none as a near-duplicate of its own rollouts; the
validation's intervals cluster on the prompts; both say so in one line."""

from __future__ import annotations

import json

from tests.cli.test_grade_cli import run


def _rollouts(path) -> None:
    rows = []
    for k in range(10):
        total = (k + 3) + (2 * k + 1)
        for r in range(4):
            said = total + (r == 3)  # one wrong rollout per prompt
            rows.append(
                {
                    "id": f"p{k}-r{r}",
                    "prompt": f"Tom has {k + 3} apples and buys {2 * k + 1} more. How many now?",
                    "response": f"He has {said} apples. #### {said}",
                    "reference": str(total),
                    "label": r != 3,
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_audit_counts_prompts_not_rollouts(tmp_path):
    data = tmp_path / "rollouts.jsonl"
    _rollouts(data)
    done = run("audit", str(data), "-g", "math", "--out", "a.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "40 rows share their prompt and reference with another, read as 10 items" in (
        " ".join(done.stderr.split())
    )
    report = json.loads((tmp_path / "a.json").read_text())
    assert report["items_total"] == 10
    assert "near_duplicate" not in report["by_flag"]


def test_validation_intervals_cluster_on_the_prompts(tmp_path):
    data = tmp_path / "rollouts.jsonl"
    _rollouts(data)
    done = run("validate", str(data), "-g", "math", "--out", "v.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    overall = json.loads((tmp_path / "v.json").read_text())["overall"]
    assert overall["items"] == 40 and overall["accuracy"]["estimate"] == 1.0
    assert overall["accuracy"]["clusters"] == 10
