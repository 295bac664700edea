"""verl adapter: truegrade graders as verl's ``compute_score`` (per sample or batched).

Point verl's ``custom_reward_function`` at this file (its path is printed by
``python -c "import truegrade.integrations.verl as v; print(v.__file__)"``) with
``name: compute_score``, or ``compute_score_batch`` for verl's batch reward manager. The grader
comes from the ``grader`` reward kwarg, else the ``TRUEGRADE_GRADER`` environment variable, else
``math``. verl calls reward functions from threads: the grader is built once per process under a
lock, and its deadlines are enforced by killing worker processes, never by signals, so nothing
here breaks (or silently returns 0) off the main thread.

Every result is a dict with the same keys, which verl logs as metrics: ``score``, ``acc``, and
0/1 indicators ``grader_error``, ``hedged``, ``no_answer``, ``timeout``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from truegrade.core import Flag, Grade, Grader, Sample, load_grader, run_grader

__all__ = ["compute_score", "compute_score_batch", "grader_for"]

_lock = threading.Lock()
_graders: dict[str, Grader] = {}


def grader_for(spec: str | None = None) -> Grader:
    """The process-wide grader for ``spec`` (built once, shared by threads)."""
    key = spec or os.environ.get("TRUEGRADE_GRADER") or "math"
    with _lock:
        grader = _graders.get(key)
        if grader is None:
            grader = _graders[key] = load_grader(key)
        return grader


def _result(grade: Grade) -> dict[str, Any]:
    return {
        "score": grade.score,
        "acc": bool(grade.passed),
        "grader_error": float(grade.error is not None),
        "hedged": float(Flag.HEDGED in grade.flags),
        "no_answer": float(Flag.NO_ANSWER in grade.flags),
        "timeout": float(Flag.TIMEOUT in grade.flags),
    }


def _sample(i: int, data_source: Any, solution: str, truth: Any, extra: Any) -> Sample:
    metadata: dict[str, Any] = {"data_source": data_source}
    if extra is not None:
        metadata["extra_info"] = extra
    return Sample(id=i, response=solution, reference=truth, metadata=metadata)


def compute_score(
    data_source: Any = None,
    solution_str: str = "",
    ground_truth: Any = None,
    extra_info: Any = None,
    grader: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's per-sample reward: grade one solution against its ground truth."""
    [grade] = run_grader(
        grader_for(grader), [_sample(0, data_source, solution_str, ground_truth, extra_info)]
    )
    return _result(grade)


def compute_score_batch(
    data_sources: Sequence[Any] | None = None,
    solution_strs: Sequence[str] = (),
    ground_truths: Sequence[Any] = (),
    extra_infos: Sequence[Any] | None = None,
    grader: str | None = None,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """verl's batch reward manager entry point: one dict per solution, in order."""
    n = len(solution_strs)
    if len(ground_truths) != n:
        raise ValueError(f"{len(ground_truths)} ground truths for {n} solutions")
    sources = list(data_sources) if data_sources is not None else [None] * n
    extras = list(extra_infos) if extra_infos is not None else [None] * n
    samples = [
        _sample(i, sources[i], solution_strs[i], ground_truths[i], extras[i]) for i in range(n)
    ]
    return [_result(g) for g in run_grader(grader_for(grader), samples)]
