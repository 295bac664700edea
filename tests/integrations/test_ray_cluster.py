"""The Ray backend on a cluster of three nodes (a head and two workers, one CPU each, started on
this machine by ``ray.cluster_utils.Cluster``), with a worker node removed while a job runs:
every row is graded, once, by a surviving node, and none is an error."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("ray", reason="the Ray backend is an optional extra: truegrade[ray]")

pytestmark = [
    pytest.mark.slow,
    # Ray warns about its own deprecated internals; that noise is not ours to fail on
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

MIB = 1024 * 1024
ROWS = 100_000


@pytest.fixture
def cluster():
    """A fresh cluster per test (each test takes a node away), this process connected to it,
    and everything shut down after, whatever the test did."""
    import ray
    from ray.cluster_utils import Cluster

    ray.shutdown()  # a connection an earlier test left open would hide this cluster
    nodes = Cluster()
    try:
        nodes.add_node(num_cpus=1, object_store_memory=128 * MIB, include_dashboard=False)
        for _ in range(2):
            nodes.add_node(num_cpus=1, object_store_memory=128 * MIB)
        nodes.wait_for_nodes()
        ray.init(address=nodes.address, log_to_driver=False, configure_logging=False)
        yield nodes
    finally:
        ray.shutdown()
        nodes.shutdown()


def _rows(count: int) -> list[dict]:
    """Rows whose grades are their own: one in three right, and each grade's explanation names
    its row's numbers, so a grade given to the wrong row shows."""
    return [
        {"id": i, "response": f"\\boxed{{{i}}}", "reference": str(i if i % 3 == 0 else i + 1)}
        for i in range(count)
    ]


def _expected(i: int) -> tuple[float, str]:
    return (1.0, f"{i} equals {i}") if i % 3 == 0 else (0.0, f"{i} is not {i + 1}")


def _nodes(ray, actors: list) -> list[str]:
    return ray.get([actor.node.remote() for actor in actors])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("room", [True, False], ids=["room-for-a-replacement", "no-room-left"])
def test_a_hundred_thousand_rows_survive_a_worker_node_removed_mid_run(cluster, room):
    import ray

    from truegrade.integrations.ray import RayGrader

    # two actors leave a CPU free for the replacement; three (one per CPU) leave none, and the
    # job has to finish on the two actors left (on a fifth of the rows, in batches a fifth the
    # size: 200 batches either way, so the node goes early in the run and the batch its actor
    # was grading has to run again; with fewer batches the other two could finish the queue
    # before the victim's fifth batch, and its death would go unnoticed)
    rows = ROWS if room else ROWS // 5
    remote = RayGrader(
        "math",
        address=cluster.address,
        actors=2 if room else None,
        workers_per_actor=1,
        batch_size=500 if room else 100,
    )
    try:
        pool = remote._actors()
        where = dict(zip(pool, _nodes(ray, pool), strict=True))
        assert len(pool) == (2 if room else 3)
        victim = next(n for n in cluster.worker_nodes if n.node_id in where.values())
        (doomed,) = [a for a, node in where.items() if node == victim.node_id]
        with ThreadPoolExecutor(1) as runner:
            job = runner.submit(remote.grade_batch, _rows(rows))
            # the node goes once its actor has graded a few batches (of 200), not on a clock
            while not job.done() and ray.get(doomed.stats.remote())["batches"] < 5:
                time.sleep(0.05)
            cluster.remove_node(victim, allow_graceful=False)  # SIGKILL: the node is lost
            grades = job.result()
        starting = list(remote._starting.values())
        started = [a for a in remote._pool if a not in starting]
        after = set(_nodes(ray, remote._pool if room else started))
    finally:
        remote.close()

    survivors = {n.node_id for n in [cluster.head_node, *cluster.worker_nodes]}
    assert victim.node_id not in survivors
    assert remote.replaced == 1  # the one actor on the lost node, during the run
    if room:
        # the replacement started on the CPU left free, on a surviving node
        assert after == survivors
    else:
        # no room for it anywhere: it is still starting, and no batch waited for it
        assert len(starting) == 1 and after == survivors
    assert len(grades) == rows  # nothing lost
    assert [i for i, g in enumerate(grades) if g.error is not None] == []
    # nothing twice, nothing crossed: each row has the one grade its own numbers give
    assert [(g.score, g.explanation) for g in grades] == [_expected(i) for i in range(rows)]


@pytest.mark.timeout(300)
def test_ray_data_grades_every_row_once_with_a_worker_node_removed_mid_run(cluster):
    import ray

    from truegrade.integrations.ray import grade_dataset

    count = 20_000
    dataset = ray.data.from_items(_rows(count), override_num_blocks=40)
    # three one-CPU actors: one on each node, so the node removed holds one
    graded = grade_dataset(
        dataset, "math", batch_size=250, concurrency=3, num_cpus=1, workers_per_actor=1
    )
    victim = next(iter(cluster.worker_nodes))
    out: list[dict] = []
    removed_at = None
    for batch in graded.iter_batches(batch_size=None, batch_format="pandas"):
        out.extend(batch.to_dict("records"))
        if removed_at is None and len(out) >= 1_000:
            removed_at = len(out)
            cluster.remove_node(victim, allow_graceful=False)
    assert removed_at is not None and removed_at < count  # rows were still to come
    assert not [n for n in ray.nodes() if n["NodeID"] == victim.node_id and n["Alive"]]
    assert sorted(r["id"] for r in out) == list(range(count))  # nothing lost, nothing twice
    assert [r for r in out if r["error"]] == []
    assert [(r["score"], r["explanation"]) for r in sorted(out, key=lambda r: r["id"])] == [
        _expected(i) for i in range(count)
    ]
