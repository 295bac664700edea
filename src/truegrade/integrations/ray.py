"""Ray backend: one grader spread over a Ray cluster, and scoring of large datasets with Ray Data.

``RayGrader(spec)`` is a grader like any other (every command and analysis accepts it): it keeps
a pool of Ray actors, each holding a warm grader (and its engine of killable worker processes, or
its sandboxes), and sends them batches of at least ``batch_size`` items, since a Ray task costs
about a millisecond and a batch amortises it. Results come back in input order and are the same
as the local backend's. An actor that dies (a killed process, a lost node) is replaced, and its
batch runs again, once (``RETRIES``), in the next started actor that is free (never in the dead
one); a batch whose actor dies again becomes one ``crashed`` error per row, never a score. A
fresh actor gets work only once it has started, so a replacement the surviving nodes have no room
for waits (for a node to come back, or an autoscaler to add one) without holding a batch, and
the job finishes on the actors left. ``grade_dataset`` adds grade columns to a Ray
Dataset with ``map_batches``, for offline scoring of Parquet files too large for one machine.

Graders travel as their spec (a name, a dict, a YAML path or ``file.py:function``); files a spec
names must exist on the nodes (ship them with Ray's ``runtime_env``).

Needs ``pip install 'truegrade[ray]'``; nothing else in truegrade imports Ray.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
from collections import deque
from typing import Any

from truegrade.core import (
    BaseGrader,
    EngineError,
    Flag,
    Grade,
    Sample,
    grade_rows,
    load_grader,
    run_grader,
)
from truegrade.integrations._plain import plain

try:
    import ray
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Ray backend needs Ray: pip install 'truegrade[ray]'") from exc

__all__ = ["MIN_BATCH", "RETRIES", "RayGrader", "check_reachable", "close_ray", "grade_dataset"]

#: The smallest batch worth a Ray task: a smaller ``batch_size`` is raised to it.
MIN_BATCH = 100
_GRADE_COLUMNS = ("score", "passed", "flags", "error", "explanation", "subscores")


def _build(spec: Any, options: dict[str, Any], timeout_s: float | None, workers: int) -> Any:
    from truegrade.exec import configure_default_engine
    from truegrade.graders import set_timeout

    configure_default_engine(workers=workers)
    grader = load_grader(spec, **options)
    if timeout_s is not None:
        set_timeout(grader, timeout_s)
    return grader


class _GraderActor:
    """Holds one warm grader; grades whole batches of rows."""

    def __init__(
        self, spec: Any, options: dict[str, Any], timeout_s: float | None, workers: int
    ) -> None:
        self.grader = _build(spec, options, timeout_s, workers)
        self.batches = 0

    def grade(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.batches += 1
        return [g.model_dump() for g in run_grader(self.grader, rows)]

    def node(self) -> str:
        """The id of the node this actor runs on; its answer also says the actor has started."""
        return str(ray.get_runtime_context().get_node_id())

    def stats(self) -> dict[str, int]:
        """Batches graded and engine workers ever started: a warm actor starts none per batch."""
        from truegrade.exec import default_engine

        return {
            "batches": self.batches,
            "workers_started": default_engine().counters["workers_started"],
        }


def check_reachable(address: str | None, *, timeout_s: float = 5.0) -> None:
    """Fail fast on a cluster address nothing answers at: Ray itself keeps retrying for
    minutes, printing its own logs, before it gives up.

    Raises:
        EngineError: ``host:port`` (or ``ray://host:port``) refuses or does not answer a TCP
            connection within ``timeout_s``.
    """
    if not address or address in ("auto", "local"):
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # a form Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise EngineError(
            f"cannot reach the Ray cluster at {address}: {reason} (is `ray start --head` "
            "running there, and is this its GCS or client port?)"
        ) from None


def _ensure_ray(address: str | None) -> None:
    if not ray.is_initialized():
        ray.init(
            address=address,
            ignore_reinit_error=True,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )


class RayGrader(BaseGrader):
    """A grader whose batches are graded by Ray actors (see the module docstring).

    Args:
        spec: The grader spec (a grader built by ``load_grader`` works too, through its spec).
        address: The Ray cluster (``None``: connect to ``RAY_ADDRESS`` or start a local one).
        actors: Number of actors (default: as many as the live nodes hold, each actor reserving
            ``workers_per_actor`` CPUs, or the largest node's CPUs if fewer).
        workers_per_actor: Engine workers in each actor (each reserves that many CPUs).
        batch_size: Items per Ray task (at least 100).
        timeout_s: Per-item deadline override, applied inside the actors.
        **options: Options of the grader spec.
    """

    kind = "ray"
    requires_reference = False
    #: The smallest batch worth a Ray task: callers that size batches themselves stop here.
    min_batch = MIN_BATCH

    def __init__(
        self,
        spec: Any,
        *,
        address: str | None = None,
        actors: int | None = None,
        workers_per_actor: int = 2,
        batch_size: int = 256,
        timeout_s: float | None = None,
        **options: Any,
    ) -> None:
        the_spec = getattr(spec, "spec", None) if not isinstance(spec, (str, dict)) else spec
        if the_spec is None:
            raise TypeError(
                "the Ray backend needs a grader spec (name, dict, YAML path or "
                "'file.py:function'), so the grader can be rebuilt on Ray nodes"
            )
        super().__init__(name="ray")
        self.spec = the_spec if isinstance(the_spec, dict) else {"type": the_spec}
        self._target = the_spec
        self.options = options
        self.address = address or os.environ.get("RAY_ADDRESS")
        self.actors = actors
        self.workers_per_actor = max(1, workers_per_actor)
        self.batch_size = max(MIN_BATCH, batch_size)
        self.timeout_s = timeout_s
        self._pool: list[Any] = []
        self._starting: dict[Any, Any] = {}  # node() call -> an actor not yet seen started
        self._actor_class: Any = None
        self.replaced = 0
        """Actors started in place of ones that died (a killed process, a lost node)."""
        local = load_grader(the_spec, **options)  # fail fast, here, on a bad spec
        from truegrade.graders.code import runs_programs_sandboxed

        self.sandboxed = runs_programs_sandboxed(local)  # the actors build the same grader
        check_reachable(self.address)  # and on a cluster that is not there
        self.requires_reference = bool(getattr(local, "requires_reference", False))
        self.inner_family = getattr(local, "family", None)

    def _actors(self) -> list[Any]:
        """The pool, started on first use: as many actors as the nodes hold, each reserving
        ``workers_per_actor`` CPUs, or the largest node's CPUs if that is fewer. Sizing by the
        cluster's total CPUs asked for actors no single node could hold (2-CPU actors on 1-CPU
        nodes), which Ray keeps pending forever."""
        if not self._pool:
            _ensure_ray(self.address)
            nodes = _node_cpus()
            per_actor = max(1, min(self.workers_per_actor, int(max(nodes, default=1))))
            count = self.actors or max(1, sum(int(cpus // per_actor) for cpus in nodes))
            self._actor_class = ray.remote(num_cpus=per_actor)(_GraderActor)
            self._pool = [self._new_actor() for _ in range(count)]
        return self._pool

    def _new_actor(self) -> Any:
        """A new actor, counted as starting until its ``node()`` call answers."""
        actor = self._actor_class.remote(
            self._target, self.options, self.timeout_s, self.workers_per_actor
        )
        self._starting[actor.node.remote()] = actor
        return actor

    def _replace(self, dead: Any) -> None:
        """A fresh actor in the pool, in place of one that died. It gets work once it has
        started: on a cluster that lost a node it may have nowhere to start, and a batch handed
        to it would wait for it forever."""
        with contextlib.suppress(Exception):
            ray.kill(dead)
        fresh = self._new_actor()
        self._pool = [fresh if a is dead else a for a in self._pool]
        self.replaced += 1

    def _drop(self, dead: Any) -> None:
        """Take an actor that died before it started out of the pool, without a replacement
        (an actor that cannot be built would otherwise be rebuilt without end)."""
        with contextlib.suppress(Exception):
            ray.kill(dead)
        self._pool = [a for a in self._pool if a is not dead]

    def _precheck(self, sample: Sample) -> Grade | None:
        return None  # the actors' graders check their own inputs

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        pool = self._actors()
        rows = [s.model_dump() for s in samples]
        batches = [rows[i : i + self.batch_size] for i in range(0, len(rows), self.batch_size)]
        pending: dict[Any, tuple[int, Any]] = {}  # task -> (batch index, its actor)
        results: dict[int, list[dict[str, Any]]] = {}
        tries = [0] * len(batches)
        queue = deque(range(len(batches)))
        starting = self._starting
        free = [a for a in pool if a not in starting.values()]  # started, and idle
        why: BaseException | None = None
        while queue or pending:
            while free and queue:
                actor, index = free.pop(), queue.popleft()
                tries[index] += 1
                pending[actor.grade.remote(batches[index])] = (index, actor)
            if not pending and not starting:  # every actor died before it started
                for index in queue:
                    results[index] = _unstarted(batches[index], why)
                break
            done, _ = ray.wait([*pending, *starting], num_returns=1)
            for ref in done:
                if ref in starting:
                    actor = starting.pop(ref)
                    try:
                        ray.get(ref)
                    except ray.exceptions.RayError as exc:  # it could not be built, or its node
                        self._drop(actor)  # went before it started
                        why = exc
                    else:
                        free.append(actor)
                    continue
                index, actor = pending.pop(ref)
                try:
                    results[index] = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # the grader raised in the actor
                    results[index] = _raised(batches[index], exc)
                except ray.exceptions.RayError as exc:  # the actor died, was lost or OOM-killed
                    self._replace(actor)
                    if tries[index] <= RETRIES:
                        queue.append(index)  # its items run again, in another actor
                    else:
                        results[index] = _crashed(batches[index], tries[index], exc)
                    continue
                free.append(actor)
        return [Grade.model_validate(g) for i in range(len(batches)) for g in results[i]]

    def close(self) -> None:
        """Release the actors (those still starting too)."""
        for actor in self._pool:
            with contextlib.suppress(Exception):  # one on a lost node may already be gone
                ray.kill(actor)
        self._pool = []
        self._starting = {}


RETRIES = 1
"""How many more times a batch runs, each time in another actor, after the actor grading it
died (a killed process, a lost node); then each of its rows is a ``crashed`` error."""


def _node_cpus() -> list[float]:
    """The CPUs of each live node of the cluster."""
    nodes = ray.nodes()
    return [float(n["Resources"].get("CPU", 0)) for n in nodes if n.get("Alive")]


def _crashed(rows: list[dict[str, Any]], tries: int, exc: BaseException) -> list[dict[str, Any]]:
    why = " ".join(str(exc).split())[:300]
    error = (
        f"the Ray actor grading this row died {tries} times (each time the row ran again in "
        f"another actor): {why}"
    )
    return [Grade.failure(error, Flag.CRASHED).model_dump() for _ in rows]


def _unstarted(rows: list[dict[str, Any]], exc: BaseException | None) -> list[dict[str, Any]]:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    why = lines[-1][:300] if lines else "unknown"  # Ray's message ends with the actor's error
    error = (
        f"no Ray actor could start to grade this row: {why} (files a spec names must exist "
        "on every node: ship them with runtime_env)"
    )
    return [Grade.failure(error, Flag.CRASHED).model_dump() for _ in rows]


def _raised(rows: list[dict[str, Any]], exc: BaseException) -> list[dict[str, Any]]:
    why = " ".join(str(exc).split())[:300]
    error = f"the grader raised in its Ray actor: {why}"
    return [Grade.failure(error, Flag.GRADER_EXCEPTION).model_dump() for _ in rows]


class _GradeBatch:
    """Ray Data callable: adds grade columns to a batch of rows."""

    def __init__(
        self, spec: Any, options: dict[str, Any], timeout_s: float | None, workers: int
    ) -> None:
        self.grader = _build(spec, options, timeout_s, workers)

    def __call__(self, batch: Any) -> Any:
        import pandas as pd  # type: ignore[import-untyped]

        records = batch.to_dict("records")
        grades = _grade_records(self.grader, records)
        out = pd.DataFrame(records)
        out["score"] = [g.score for g in grades]
        out["passed"] = [g.passed for g in grades]
        out["flags"] = [",".join(g.flags) for g in grades]
        out["error"] = [g.error or "" for g in grades]
        out["explanation"] = [g.explanation for g in grades]
        out["subscores"] = [
            json.dumps(g.subscores, sort_keys=True) if g.subscores else "" for g in grades
        ]
        return out


def _cells(row: dict[str, Any]) -> dict[str, Any]:
    """A pandas record as a row: plain data, and a missing cell (pandas' NaN) as no value."""
    return {k: None if isinstance(v, float) and math.isnan(v) else plain(v) for k, v in row.items()}


def _grade_records(grader: Any, records: list[dict[str, Any]]) -> list[Grade]:
    """One grade per record, in order; a record that is not a row gets an error grade."""
    from truegrade.data import one_sample

    return grade_rows(grader, records, lambda row, i: one_sample(_cells(row), index=i + 1))


def grade_dataset(
    dataset: Any,
    spec: Any,
    *,
    batch_size: int = 256,
    concurrency: int = 1,
    workers_per_actor: int = 2,
    num_cpus: float = 1.0,
    timeout_s: float | None = None,
    **options: Any,
) -> Any:
    """Add ``score``, ``passed``, ``flags``, ``error``, ``explanation`` and ``subscores`` (JSON
    text: per-test or per-constraint verdicts) columns to a Ray Dataset of rows (one row, one
    response), grading with ``concurrency`` warm actors. Columns are read as plain data (Parquet
    lists arrive as arrays, at every depth); a row that is not a valid row gets an ``error``
    and the rest of the batch goes on.

    ``num_cpus`` is what each actor reserves from Ray's scheduler (keep it below the cluster's
    CPUs, or the dataset's read tasks starve); ``workers_per_actor`` is how many killable worker
    processes its engine runs."""
    the_spec = spec if isinstance(spec, (str, dict)) else getattr(spec, "spec", None)
    if the_spec is None:
        raise TypeError("grade_dataset needs a grader spec")
    return dataset.map_batches(
        _GradeBatch,
        fn_constructor_kwargs={
            "spec": the_spec,
            "options": options,
            "timeout_s": timeout_s,
            "workers": workers_per_actor,
        },
        batch_size=max(MIN_BATCH, batch_size),
        batch_format="pandas",
        concurrency=concurrency,
        num_cpus=num_cpus,
    )


def close_ray() -> None:
    """Shut down the Ray runtime this process started."""
    if ray.is_initialized():
        ray.shutdown()
