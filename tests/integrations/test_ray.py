"""The Ray backend against a real local Ray: same results as the local backend, item by item."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations.ray_local import init_local_ray

pytest.importorskip("ray", reason="the Ray backend is an optional extra: truegrade[ray]")

from tests.task_rows import (
    APPS_INPUT_OUTPUT,
    PY_EVERY_ANSWER,
    PY_RIGHT,
    STDIO,
    STDIO_ROWS,
    STDIO_SCORES,
    instruction_rows,
)
from truegrade.core import load_grader

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = [
    pytest.mark.slow,
    # Ray warns about its own deprecated internals; that noise is not ours to fail on
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.fixture(scope="module")
def local_ray():
    import ray

    init_local_ray(ray)
    yield ray
    ray.shutdown()


def test_ten_thousand_items_match_the_local_backend(local_ray):
    from truegrade.integrations.ray import RayGrader

    rows = [
        {
            "id": i,
            "response": f"\\boxed{{{i % 7}}}" if i % 11 else "\\boxed{1} or \\boxed{2}",
            "reference": str(i % 5),
        }
        for i in range(10_000)
    ]
    remote = RayGrader("math", batch_size=500)
    try:
        via_ray = remote.grade_batch(rows)
    finally:
        remote.close()
    local = load_grader("math").grade_batch(rows)
    assert len(via_ray) == len(local) == 10_000
    for a, b in zip(via_ray, local, strict=True):
        assert (a.score, a.passed, a.flags, a.error) == (b.score, b.passed, b.flags, b.error)


@pytest.mark.timeout(300)
def test_the_code_grader_runs_sandboxed_in_warm_actors(local_ray):
    from truegrade.data import read_samples
    from truegrade.integrations.ray import RayGrader

    tasks = [s for _, s in read_samples(EXAMPLES / "data" / "code_tasks.jsonl")]
    right = [
        t.model_copy(update={"response": t.prompt_text + t.metadata["canonical_solution"]})
        for t in tasks
    ]
    early_exit = [
        t.model_copy(update={"id": f"{t.id}-exit", "response": "import sys\nsys.exit(0)\n"})
        for t in tasks
    ]
    remote = RayGrader("code", actors=1, workers_per_actor=1)
    try:
        first = remote.grade_batch(right + early_exit)
        again = remote.grade_batch(right)  # the same actor: its engine and sandbox stay warm
        (actor,) = remote._actors()
        stats = local_ray.get(actor.stats.remote())
    finally:
        remote.close()
    assert [g.passed for g in first] == [True] * len(right) + [False] * len(early_exit)
    assert all("sandbox: " in g.explanation for g in first[: len(right)])
    assert [g.passed for g in again] == [True] * len(right)
    # both batches in one actor, whose single engine worker (and its sandbox) started once
    assert stats == {"batches": 2, "workers_started": 1}


@pytest.mark.timeout(180)
def test_ray_data_scores_a_parquet_file(local_ray, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from truegrade.integrations.ray import grade_dataset

    rows = [{"id": i, "response": f"\\boxed{{{i}}}", "reference": str(i % 2)} for i in range(300)]
    path = tmp_path / "rollouts.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    graded = grade_dataset(local_ray.data.read_parquet(str(path)), "math").take_all()
    by_id = {row["id"]: row for row in graded}
    assert len(by_id) == 300
    assert by_id[1]["passed"] is True and by_id[2]["passed"] is False
    assert by_id[0]["flags"] == "exact_match"


def _cluster(ray) -> dict[str, str]:
    """The environment that points a command at the module's cluster (starting one per command
    would cost a Ray start-up each time)."""
    return {"RAY_ADDRESS": ray.get_runtime_context().gcs_address}


def test_the_grade_command_runs_on_ray(local_ray, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": i, "response": f"\\boxed{{{i}}}", "reference": str(i % 3)}) + "\n"
            for i in range(200)
        )
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "truegrade",
            "grade",
            str(data),
            "-g",
            "math",
            "--backend",
            "ray",
            "--out",
            str(tmp_path / "o.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **_cluster(local_ray), "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert sum(r["passed"] for r in records) == sum(1 for i in range(200) if i % 3 == i)


def _cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "truegrade", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def test_attack_on_ray_finds_what_the_local_backend_finds(local_ray, tmp_path):
    naive = EXAMPLES / "graders" / "naive_last_number.py:reward"
    args = ["attack", EXAMPLES / "data" / "arith.jsonl", "-g", naive, "--limit", "6", "-q"]
    local = _cli(*args, "--out", tmp_path / "local.json")
    ray = _cli(*args, "--backend", "ray", "--out", tmp_path / "ray.json", env=_cluster(local_ray))
    assert local.returncode == 0, local.stderr[-2000:]
    assert ray.returncode == 0, ray.stderr[-3000:]
    here, there = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("local", "ray"))
    assert there["exploitability"] == here["exploitability"]
    assert [(a["name"], a["tried"], a["exploited"]) for a in there["attacks"]] == [
        (a["name"], a["tried"], a["exploited"]) for a in here["attacks"]
    ]


def test_an_unreachable_cluster_is_a_clear_error_at_once(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": 1, "response": "\\boxed{1}", "reference": "1"}) + "\n")
    result = _cli("grade", data, "-g", "math", "--backend", "ray", "--ray-address", "127.0.0.1:1")
    assert result.returncode == 2
    assert "cannot reach the Ray cluster at 127.0.0.1:1" in result.stderr


@pytest.mark.timeout(300)
@pytest.mark.system_tool("g++", package="g++")
def test_stdio_programs_in_warm_actors(local_ray):
    from truegrade.integrations.ray import RayGrader

    remote = RayGrader("code", actors=1, workers_per_actor=1)
    try:
        grades = remote.grade_batch(STDIO_ROWS)
    finally:
        remote.close()
    assert [g.score for g in grades] == STDIO_SCORES
    assert grades[0].subscores == {"stdio_0": 1.0, "stdio_1": 1.0, "accepted": 2.0}
    assert "wrong_answer" in grades[3].flags and remote.sandboxed


@pytest.mark.timeout(300)
def test_ray_data_reads_ifeval_and_stdio_columns_from_parquet(local_ray, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from truegrade.integrations.ray import grade_dataset

    kinds = instruction_rows()
    rows = [
        {k: kinds[kind][k] for k in ("id", "prompt", "response", "instruction_id_list", "kwargs")}
        for kind in ("honest", "slip", "gamed")
    ]
    # Parquet hands nested lists back as arrays: kwargs is [{"keywords": array([...])}, ...]
    path = tmp_path / "ifeval.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    graded = grade_dataset(local_ray.data.read_parquet(str(path)), "instructions").take_all()
    by_id = {row["id"]: row for row in graded}
    assert [by_id[r["id"]]["score"] for r in rows] == [1.0, 0.0, 0.0]
    assert [by_id[r["id"]]["error"] for r in rows] == ["", "", ""]
    assert "keyword_stuffing" in by_id[rows[2]["id"]]["flags"]
    assert json.loads(by_id[rows[0]["id"]]["subscores"]) == {
        "change_case:english_lowercase": 1.0,
        "keywords:existence": 1.0,
    }
    stdio = [
        {"id": "right", "response": PY_RIGHT, "input_output": APPS_INPUT_OUTPUT},
        {"id": "every", "response": PY_EVERY_ANSWER, "input_output": APPS_INPUT_OUTPUT},
        {"id": "broken", "response": PY_RIGHT, "input_output": '{"inputs": []}'},
        # a spec stored as a Parquet struct: its 'stdio' list comes back as an array
        {"id": "struct", "response": PY_RIGHT, "input_output": None, "reference": STDIO},
    ]
    stdio = [{"reference": None, **row} for row in stdio]
    path = tmp_path / "apps.parquet"
    pq.write_table(pa.Table.from_pylist(stdio), path)
    graded = grade_dataset(local_ray.data.read_parquet(str(path)), "code").take_all()
    by_id = {row["id"]: row for row in graded}
    assert [by_id[k]["score"] for k in ("right", "every", "struct")] == [1.0, 0.0, 1.0]
    assert json.loads(by_id["every"]["subscores"]) == {"stdio_0": 0.0, "stdio_1": 0.0}
    assert by_id["broken"]["passed"] is None and "input_output" in by_id["broken"]["error"]


KILLER = """\
import os
import signal
from pathlib import Path


def score(data_source, solution_str, ground_truth, extra_info=None):
    marker, always = Path(__file__).with_name("died"), Path(__file__).with_name("always")
    if solution_str == "die" and (always.exists() or not marker.exists()):
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)  # inline: this process is the Ray actor
    return float(solution_str == ground_truth)
"""


def _killer(tmp_path: Path) -> dict:
    path = tmp_path / "killer.py"
    path.write_text(KILLER)
    return {"type": "python", "path": str(path), "function": "score", "execution": "inline"}


def _rows(count: int, dies: int) -> list[dict]:
    return [
        {"id": i, "response": "die" if i == dies else "x", "reference": "x" if i % 2 else "y"}
        for i in range(count)
    ]


@pytest.mark.timeout(300)
def test_a_dead_actor_is_replaced_and_its_batch_graded_again(local_ray, tmp_path):
    from truegrade.integrations.ray import RayGrader

    remote = RayGrader(_killer(tmp_path), actors=1, batch_size=100)
    try:
        grades = remote.grade_batch(_rows(300, dies=150))
    finally:
        remote.close()
    assert remote.replaced == 1 and (tmp_path / "died").exists()
    assert [g.error for g in grades] == [None] * 300
    assert [g.score for g in grades] == [float(i % 2 == 1 and i != 150) for i in range(300)]


@pytest.mark.timeout(300)
def test_an_actor_that_dies_on_every_try_gives_crashed_errors_for_its_batch_only(
    local_ray, tmp_path
):
    from truegrade.integrations.ray import RETRIES, RayGrader

    (tmp_path / "always").touch()  # the row kills its actor on every try
    remote = RayGrader(_killer(tmp_path), actors=1, batch_size=100)
    try:
        grades = remote.grade_batch(_rows(300, dies=150))
    finally:
        remote.close()
    assert remote.replaced == RETRIES + 1
    crashed = [i for i, g in enumerate(grades) if g.error is not None]
    assert crashed == list(range(100, 200))
    assert all("crashed" in grades[i].flags and grades[i].passed is None for i in crashed)
    assert all(g.error is None for i, g in enumerate(grades) if i not in crashed)


@pytest.mark.timeout(300)
def test_the_command_exits_1_on_crashed_rows_and_resume_grades_them_again(local_ray, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(300, dies=150)))
    spec = tmp_path / "killer.yaml"
    spec.write_text(json.dumps(_killer(tmp_path)))
    out = tmp_path / "o.jsonl"
    env = _cluster(local_ray)
    (tmp_path / "always").touch()
    base = ["grade", data, "-g", spec, "--backend", "ray", "--batch-size", "100", "--out", out]
    first = _cli(*base, env=env)
    assert first.returncode == 1, first.stderr[-3000:]
    assert "100 rows could not be graded" in first.stderr and "--resume" in first.stderr
    assert sum(1 for line in out.read_text().splitlines() if '"crashed"' in line) == 100
    (tmp_path / "always").unlink()  # the next run's actor dies once, then grades the batch
    (tmp_path / "died").unlink()
    second = _cli(*base, "--resume", env=env)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "100 rows the last run could not grade are graded again" in second.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in records) == list(range(300))  # each id once
    assert not [r for r in records if r["error"]]


@pytest.mark.timeout(300)
def test_ray_data_grades_every_row_when_an_actor_dies_mid_run(local_ray, tmp_path):
    from truegrade.integrations.ray import grade_dataset

    rows = _rows(300, dies=150)
    dataset = local_ray.data.from_items(rows)
    graded = grade_dataset(dataset, _killer(tmp_path), batch_size=100).take_all()
    assert (tmp_path / "died").exists()  # the actor did die
    by_id = {row["id"]: row for row in graded}
    assert sorted(by_id) == list(range(300))  # nothing lost, nothing twice
    assert len(graded) == 300 and not [r for r in graded if r["error"]]


@pytest.mark.timeout(300)
def test_a_spec_the_actors_cannot_load_gives_crashed_rows_not_a_hang(local_ray, tmp_path):
    from truegrade.integrations.ray import RayGrader

    spec = tmp_path / "exact.yaml"
    spec.write_text(json.dumps({"type": "exact"}))
    remote = RayGrader(str(spec), batch_size=100)  # read here, where the file is
    spec.unlink()  # and gone where the actors look for it, as on a node it was not shipped to
    try:
        grades = remote.grade_batch(_rows(300, dies=-1))
        assert remote.replaced == 0  # an actor that cannot be built is not rebuilt without end
        assert {g.error for g in grades} == {
            f"no Ray actor could start to grade this row: truegrade.core._errors.SpecError: "
            f"{spec}: grader spec not found (files a spec names must exist on every node: ship "
            "them with runtime_env)"
        }
        assert all(g.flags == ["crashed"] and g.passed is None for g in grades)
        spec.write_text(json.dumps({"type": "exact"}))  # the file shipped: a new pool grades
        again = remote.grade_batch(_rows(300, dies=-1))
    finally:
        remote.close()
    assert [g.score for g in again] == [float(i % 2 == 1) for i in range(300)]
