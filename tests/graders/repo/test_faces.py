"""A patch's reward from every face a trainer uses: the reward server over real HTTP, TRL's
reward function and verl's ``compute_score``, each with the per-test subscores, on a real
instance (marshmallow-1359): the gold patch is rewarded, a conftest hook is not."""

from __future__ import annotations

import json
import random
from pathlib import Path

import httpx
import pytest

from tests.cli.test_grade_cli import run
from tests.graders.repo import DATA, ROWS
from tests.graders.repo.conftest import NEEDS
from truegrade.attacks import attacks_for
from truegrade.core import to_samples
from truegrade.integrations.trl import reward_func
from truegrade.integrations.verl import compute_score
from truegrade.serve import ServerProcess

pytestmark = [*NEEDS, pytest.mark.slow]

ROW = ROWS[0]
TASK_COLUMNS = {k: v for k, v in ROW.items() if k != "patch"}  # what a trainer's dataset holds


@pytest.fixture(scope="module")
def hook(hardened):
    del hardened  # its snapshot roots are where the attack reads the base tree
    [attack] = attacks_for("repo", ["conftest_hook"])
    return attack.candidates(to_samples([ROW])[0], random.Random(0))[0].response


def test_the_reward_server_grades_patches(hook):
    with ServerProcess("repo", workers=1, options={"repos": [str(DATA)]}) as server:
        rows = [
            {**ROW, "id": "gold", "model_patch": ROW["patch"]},
            {**ROW, "id": "hook", "model_patch": hook},
        ]
        answer = httpx.post(server.url + "/grade", json={"samples": rows}, timeout=300)
    assert answer.status_code == 200, answer.text
    gold, hooked = answer.json()["grades"]
    assert gold["passed"] is True and gold["subscores"]["fail_to_pass"] == 1.0
    assert hooked["passed"] is False and "patch_refused" in hooked["flags"]


def test_trl_rewards_the_fix_and_logs_the_test_shares(hook):
    reward = reward_func({"type": "repo", "repos": [str(DATA)]})
    metrics: dict[str, float] = {}
    columns = {k: [v, v] for k, v in TASK_COLUMNS.items()}
    rewards = reward(
        prompts=["fix it", "fix it"],
        completions=[f"```diff\n{ROW['patch']}```", hook],
        log_metric=metrics.__setitem__,
        **columns,
    )
    assert rewards == [1.0, 0.0]
    assert metrics["truegrade/truegrade_repo/sub/fail_to_pass"] == 0.5  # the mean of 1 and 0
    assert metrics["truegrade/truegrade_repo/flag/patch_refused"] == 0.5


def test_verl_scores_a_patch_with_its_test_shares(tmp_path, hook):
    spec = tmp_path / "repo.yaml"
    spec.write_text(f"type: repo\nrepos: [{DATA}]\n")
    gold = compute_score("swe-bench", ROW["patch"], None, TASK_COLUMNS, grader=str(spec))
    assert gold["score"] == 1.0 and gold["fail_to_pass"] == 1.0 and gold["pass_to_pass"] == 1.0
    hooked = compute_score("swe-bench", hook, None, TASK_COLUMNS, grader=str(spec))
    assert hooked["score"] == 0.0 and hooked["grader_error"] == 0.0
    assert set(hooked) == set(gold)  # the same keys in every result, as verl needs


def test_the_command_line_grades_published_rows_with_no_conversion(tmp_path):
    # SWE-bench instance rows with a prediction's model_patch, as examples/data holds them
    rows = Path(__file__).parents[3] / "examples" / "data" / "repo_tasks.jsonl"
    out = tmp_path / "grades.jsonl"
    done = run(
        "grade",
        str(rows),
        "--grader",
        "repo",
        "-o",
        f"repos=[{DATA}]",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "as swebench" in done.stderr + done.stdout  # the preset named
    grades = {g["id"]: g for g in map(json.loads, out.read_text().splitlines())}
    assert grades["marshmallow-1359"]["passed"] is True
    assert grades["flask-5014"]["passed"] is False
    assert grades["flask-5014"]["subscores"]["fail_to_pass"] == 0.0


def test_many_predictions_of_one_instance_in_one_file(tmp_path):
    # a rollout dump: the instance's row once per prediction, none with an id of its own
    rows = tmp_path / "rollouts.jsonl"
    patches = [ROW["patch"], "", ROW["patch"]]
    rows.write_text(
        "".join(
            json.dumps({**TASK_COLUMNS, "model_patch": p, "model_name_or_path": "m"}) + "\n"
            for p in patches
        )
    )
    out = tmp_path / "grades.jsonl"
    done = run(
        "grade", str(rows), "--grader", "repo", "-o", f"repos=[{DATA}]", "--out", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = done.stderr.count("each is its own prediction")
    assert said == 1, done.stderr  # said once, in one line
    grades = {g["id"]: g for g in map(json.loads, out.read_text().splitlines())}
    instance = ROW["instance_id"]
    assert sorted(grades) == sorted([instance, f"{instance}#2", f"{instance}#3"])
    assert [grades[k]["passed"] for k in (instance, f"{instance}#2", f"{instance}#3")] == [
        True,
        False,
        True,
    ]
