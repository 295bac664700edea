"""TRL adapter: any truegrade grader as a ``GRPOTrainer`` reward function.

``reward_func(spec)`` returns a picklable callable in TRL's signature: it receives ``prompts``,
``completions`` (text or chat messages), TRL's hooks and every dataset column, and returns one
reward per completion, ``None`` where the grader could not grade (TRL's "not applicable", so a
broken grader never turns into a silent 0). With TRL's ``log_metric`` and ``log_extra`` hooks it
logs the pass rate, the error rate and the rate of every flag, and adds the flags and reasons to
the completions table.

Examples:
    >>> from trl import GRPOTrainer  # doctest: +SKIP
    >>> trainer = GRPOTrainer(model, reward_funcs=[reward_func("math")], ...)  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from truegrade.core import Grade, Grader, Sample, grade_rows, load_grader
from truegrade.integrations._plain import plain

__all__ = ["TruegradeReward", "reward_func"]

_TRAINER_KEYS = {"trainer_state", "log_extra", "log_metric", "completion_ids", "environments"}


class TruegradeReward:
    """A grader in TRL's reward-function signature (see the module docstring).

    Attributes:
        spec: The grader spec; the grader is rebuilt from it after unpickling.
        reference_column: The dataset column holding the reference (default: the row is read as
            every truegrade command reads it: a published dataset's preset when its columns say
            which (GSM8K, MATH, HumanEval, MBPP, IFEval...), else the first of ``reference``,
            ``answer``, ``ground_truth``, ``solution`` present).
        __name__: The name TRL logs the reward under.
    """

    def __init__(
        self,
        spec: Any,
        *,
        reference_column: str | None = None,
        name: str | None = None,
        **options: Any,
    ) -> None:
        if not isinstance(spec, (str, dict)) and getattr(spec, "spec", None) is None:
            raise TypeError(
                "reward_func needs a grader spec (a name, a dict, a YAML path or "
                "'file.py:function') so the reward can be rebuilt in other processes"
            )
        self.spec = spec if isinstance(spec, (str, dict)) else spec.spec
        self.options = options
        self.reference_column = reference_column
        label = self.spec if isinstance(self.spec, str) else self.spec.get("type", "grader")
        self.__name__ = name or f"truegrade_{str(label).split(':')[-1].split('/')[-1]}"
        self._grader: Grader | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_grader"] = None
        return state

    @property
    def grader(self) -> Grader:
        if self._grader is None:
            self._grader = load_grader(self.spec, **self.options)
        return self._grader

    def _rows(self, columns: dict[str, Any], n: int) -> list[dict[str, Any]]:
        """One row per completion from the dataset's columns (TRL passes each as a list)."""
        if self.reference_column and self.reference_column not in columns:
            raise KeyError(
                f"the dataset has no column {self.reference_column!r}; columns: {sorted(columns)}"
            )
        rows: list[dict[str, Any]] = [{} for _ in range(n)]
        for name, values in columns.items():
            if name in _TRAINER_KEYS or not isinstance(values, (list, tuple)):
                continue
            if len(values) != n:
                raise ValueError(f"column {name!r} has {len(values)} values for {n} completions")
            for row, value in zip(rows, values, strict=True):
                row[name] = plain(value)
        if self.reference_column:
            for row in rows:
                row["reference"] = row.pop(self.reference_column)
        return rows

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Any = None,
        trainer_state: Any = None,
        log_extra: Callable[[str, list[Any]], None] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        """Grade a batch of completions; ``None`` where the grader could not grade."""
        items = list(completions or [])
        n = len(items)
        asked = list(prompts) if prompts is not None else [None] * n
        rows = self._rows(columns, n)
        for i, row in enumerate(rows):
            # the dataset's own 'prompt' column is TRL's prompts; the completion is the response
            row.update({"id": i, "prompt": asked[i], "response": items[i]})
            row.pop("completion", None)
        grades = grade_rows(self.grader, rows, lambda row, _: Sample.from_row(row))
        self._log(grades, log_extra, log_metric)
        return [None if g.error is not None else g.score for g in grades]

    def _log(
        self,
        grades: list[Grade],
        log_extra: Callable[[str, list[Any]], None] | None,
        log_metric: Callable[[str, float], None] | None,
    ) -> None:
        if not grades:
            return
        prefix = f"truegrade/{self.__name__}"
        if log_metric is not None:
            n = len(grades)
            verdicts = [g.passed for g in grades if g.passed is not None]
            if verdicts:
                log_metric(f"{prefix}/pass_rate", sum(verdicts) / len(verdicts))
            log_metric(f"{prefix}/error_rate", sum(g.error is not None for g in grades) / n)
            counts = Counter(flag for g in grades for flag in set(g.flags))
            for flag, count in counts.items():
                log_metric(f"{prefix}/flag/{flag}", count / n)
            for name, mean in _subscore_means(grades).items():
                log_metric(f"{prefix}/sub/{name}", mean)
        if log_extra is not None:
            log_extra(f"{self.__name__}_flags", [", ".join(g.flags) for g in grades])
            log_extra(f"{self.__name__}_reason", [g.error or g.explanation for g in grades])
            log_extra(
                f"{self.__name__}_subscores",
                [json.dumps(g.subscores, sort_keys=True) if g.subscores else "" for g in grades],
            )


#: At most this many subscore means per step: a code grader's per-test subscores (case_0 ...
#: case_41) would otherwise flood the trainer's metrics.
MAX_SUBSCORE_METRICS = 16


def _subscore_means(grades: list[Grade]) -> dict[str, float]:
    """The mean of each subscore over the graded rows that have it, the most common first."""
    values: dict[str, list[float]] = {}
    for g in grades:
        if g.error is None:
            for name, value in g.subscores.items():
                values.setdefault(name, []).append(value)
    common = sorted(values, key=lambda k: (-len(values[k]), k))[:MAX_SUBSCORE_METRICS]
    return {k: sum(values[k]) / len(values[k]) for k in sorted(common)}


def reward_func(spec: Any, **kwargs: Any) -> TruegradeReward:
    """A TRL reward function backed by a truegrade grader spec (see ``TruegradeReward``)."""
    return TruegradeReward(spec, **kwargs)
