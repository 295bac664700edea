"""HumanEval+ grading against its own evaluator: ``code`` through the ``humaneval`` preset versus
``evalplus.evaluate``, on the same model solutions, in one run.

EvalPlus is not a dependency of truegrade (it brings a model-serving stack with it): the
benchmark runs it with the Python of an environment that has it (``--evalplus PYTHON``), as its
users run it, from the command line on a samples file. Both grade every solution on all of a
task's base and plus inputs, against the canonical solution's answers, which each computes
first: **cold** with nothing computed (EvalPlus with an empty cache of expected answers;
``code`` with new workers, whose first solution of each task runs the reference), **warm** with
them kept (EvalPlus's cache written by the cold run; ``code``'s workers of the cold run).

What runs in this process is the benchmark's own: the solutions are graded in the sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from truegrade.bench._report import BenchReport, Measurement
from truegrade.core import DataError, require_fields
from truegrade.data import read_rows

__all__ = ["run_evalplus_bench"]


_TASK_FIELDS = ("task_id", "prompt", "canonical_solution", "base_input", "plus_input")
_SOLUTION_FIELDS = ("task_id", "model", "solution")


def _read(path: Path, fields: tuple[str, ...], what: str) -> list[dict[str, Any]]:
    rows = []
    for line, row in read_rows(path, what=what):
        require_fields(row, fields, what, path=path, line=line)
        rows.append(row)
    if not rows:
        raise DataError(f"holds no {what}s", path=str(path))
    return rows


def _check_evalplus(python: str) -> None:
    """Fail before any timing when ``python`` cannot run EvalPlus."""
    try:
        found = subprocess.run(
            [python, "-c", "import evalplus.evaluate"], capture_output=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DataError(f"--evalplus {python} cannot be run: {exc}") from None
    if found.returncode != 0:
        last = found.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise DataError(
            f"--evalplus {python} cannot import evalplus.evaluate "
            f"(pip install evalplus==0.3.1 there): {' '.join(last)}"
        )


def run_evalplus_bench(
    *,
    data: Path,
    solutions: Path,
    evalplus: str,
    model: str | None = None,
    workers: int | None = None,
    repeats: int = 2,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Time per solution: ``code`` against ``evalplus.evaluate``, cold and warm.

    Args:
        data: HumanEval+ as published (``HumanEvalPlus.jsonl.gz``).
        solutions: Rows of ``task_id``, ``model`` and ``solution`` (one per task per model).
        evalplus: A Python that can run ``-m evalplus.evaluate``.
        model: The model whose solutions are graded (default: the first in the file).
        workers: Workers for both (default: the core count).
        repeats: Alternating runs of each (medians are reported).
    """
    from truegrade.core import Sample
    from truegrade.exec import Engine, default_worker_count
    from truegrade.graders.code import CodeGrader

    tasks = {row["task_id"]: row for row in _read(data, _TASK_FIELDS, "HumanEval+ task")}
    rows = _read(solutions, _SOLUTION_FIELDS, "model solution")
    chosen = model or rows[0]["model"]
    mine = [row for row in rows if row["model"] == chosen]
    if not mine:
        raise DataError(f"holds no solutions of {chosen}", path=str(solutions))
    unknown = sorted({row["task_id"] for row in mine} - set(tasks))
    if unknown:
        raise DataError(f"solutions to tasks not in {data}: {unknown[:5]}", path=str(solutions))
    _check_evalplus(evalplus)
    n_workers = workers or default_worker_count()
    samples = [
        Sample.from_row({**tasks[r["task_id"]], "response": r["solution"]}, default_id=i)
        for i, r in enumerate(mine)
    ]
    report = BenchReport(
        title=f"HumanEval+ grading per solution ({len(mine)} solutions of {chosen})",
        metric="ms per solution",
        lower_is_better=True,
        params={"solutions": len(mine), "workers": n_workers, "repeats": repeats},
        notes=[
            "Time per solution = wall time of the whole run / solutions; both grade every base "
            "and plus input of a task against the canonical solution's answers.",
            "evalplus.evaluate runs from the command line, as its users run it (its start-up "
            "included), with --parallel = workers. Cold: an empty cache of expected answers; "
            "warm: the cache its cold run wrote.",
            "truegrade: the humaneval preset, score: all (a solution passes only if every "
            "input does, and its inputs stop at the first failure: what evalplus.evaluate "
            "does by default). Cold: new workers, each computing a task's reference answers "
            "at its first solution; warm: the same workers again.",
            "score: fraction (the grader's default) runs every input of every solution to "
            "score the share that passes, work evalplus.evaluate does not do: one warm run, "
            "for what that costs.",
        ],
    )
    theirs = Measurement("evalplus.evaluate", True, [])
    theirs_cold = Measurement("evalplus.evaluate, cold", True, [])
    ours = Measurement("truegrade code", False, [])
    ours_cold = Measurement("truegrade code, cold", False, [])
    fraction = Measurement("truegrade code, score: fraction", False, [])
    report.pairs = [
        (ours.name, theirs.name),
        (ours_cold.name, theirs_cold.name),
        (fraction.name, theirs.name),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        samples_file = work / "samples.jsonl"
        samples_file.write_text(
            "".join(
                json.dumps({"task_id": r["task_id"], "solution": r["solution"]}) + "\n"
                for r in mine
            )
        )
        for r in range(repeats):
            if progress:
                progress(f"repeat {r + 1}/{repeats}")
            cache = work / f"cache-{r}"
            for measurement in (theirs_cold, theirs):
                start = time.perf_counter()
                passed = _evalplus(evalplus, data, samples_file, cache, n_workers)
                measurement.samples.append((time.perf_counter() - start) / len(mine) * 1e3)
                measurement.extra["passed"] = passed
            engine = Engine(workers=n_workers)
            with engine:
                grader = CodeGrader(CodeGrader.Options(score="all"), engine=engine)
                for measurement in (ours_cold, ours):
                    _time(grader, samples, measurement)
                if r == 0:
                    _time(CodeGrader(engine=engine), samples, fraction)
    report.measurements = [ours, theirs, ours_cold, theirs_cold, fraction]
    return report


def _time(grader: Any, samples: list[Any], measurement: Measurement) -> None:
    start = time.perf_counter()
    grades = grader.grade_batch(samples)
    measurement.samples.append((time.perf_counter() - start) / len(samples) * 1e3)
    measurement.extra["passed"] = sum(bool(g.passed) for g in grades)
    measurement.extra["errors"] = sum(g.error is not None for g in grades)


def _evalplus(python: str, data: Path, samples: Path, cache: Path, workers: int) -> int:
    """Run ``evalplus.evaluate`` on ``samples``; how many solutions passed base and plus."""
    env = {**os.environ, "HUMANEVAL_OVERRIDE_PATH": str(data), "XDG_CACHE_HOME": str(cache)}
    command = [python, "-m", "evalplus.evaluate", "--dataset", "humaneval"]
    command += ["--samples", str(samples), "--parallel", str(workers)]
    subprocess.run(command, env=env, check=True, capture_output=True)
    results_file = samples.with_name("samples_eval_results.json")
    results = json.loads(results_file.read_text())["eval"]
    results_file.unlink()
    return sum(
        1
        for (result, *_) in results.values()
        if result["base_status"] == "pass" and result["plus_status"] == "pass"
    )
