"""Training logs as the monitor reads them: which column is which, and rows grouped into steps.

Accepted shapes (one JSON object per row; columns may be dotted paths such as ``metadata.step``):

* **per sample**: one row per scored response, several rows per step (truegrade results files
  with a step column, reward-function dumps): ``step``, ``reward``, optional ``gold``,
  ``length`` (else the length of ``response``/``completion`` text, in characters), ``flags``
  (a list), ``subscores`` (an object of grader -> score).
* **per batch**: one row per step whose reward column is a list (``{"step": 3, "rewards":
  [...], "lengths": [...]}``); the other columns are lists of the same length.
* **per step**: one row per step with aggregates, as TRL and verl log them: ``reward`` /
  ``reward_std`` (TRL), ``critic/score/mean`` / ``min`` / ``max`` (verl),
  ``completions/mean_length`` or ``completion_length`` (TRL), ``response_length/mean`` (verl),
  ``rewards/<name>/mean`` (TRL, one per reward function: compared as graders), ``flags/<name>``
  (a flag's rate).

Column names are detected from the first row that has one of the known names (see
:data:`CANDIDATES`); any can be named explicitly instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from truegrade.core import DataError
from truegrade.data import get_field

__all__ = [
    "CANDIDATES",
    "LogColumns",
    "StepBatch",
    "TrainingLog",
    "complete",
    "group_steps",
    "metrics_batch",
]

CANDIDATES: dict[str, tuple[str, ...]] = {
    "step": (
        "step",
        "global_step",
        "training/global_step",
        "train/global_step",
        "_step",
        "iteration",
    ),
    "proxy": (
        "reward",
        "rewards",
        "score",
        "proxy",
        "critic/score/mean",
        "critic/rewards/mean",
        "train/reward",
        "reward_mean",
    ),
    "reward_std": ("reward_std", "critic/score/std", "train/reward_std"),
    "reward_min": ("critic/score/min", "reward_min"),
    "reward_max": ("critic/score/max", "reward_max"),
    "gold": (
        "gold",
        "gold_reward",
        "gold_score",
        "heldout_reward",
        "held_out_reward",
        "eval_reward",
    ),
    "length": (
        "length",
        "lengths",
        "response_length",
        "completion_length",
        "completions/mean_length",
        "response_length/mean",
        "num_tokens",
    ),
    "text": ("response", "completion"),
    "flags": ("flags",),
    "subscores": ("subscores",),
}
# per-step columns that hold one grader's mean (TRL) or one flag's rate
_GRADER_COLUMN = re.compile(r"^rewards/(?P<name>[^/]+?)(?:/mean)?$")
_FLAG_COLUMN = re.compile(r"^flags/(?P<name>[^/]+)$")


@dataclass(frozen=True)
class LogColumns:
    """Which column holds what; None means "detect it" (or "absent" once resolved).

    Attributes:
        step: The training step.
        proxy: The reward being optimized.
        gold: A gold or held-out reward of the same responses.
        length: Response length.
        flags: Per-sample list of flags.
        subscores: Per-sample object of grader -> score.
        reward_std: Per-step reward standard deviation.
        reward_min: Per-step smallest reward.
        reward_max: Per-step largest reward.
        graders: Which subscores to compare for disagreement (default: all).
    """

    step: str | None = None
    proxy: str | None = None
    gold: str | None = None
    length: str | None = None
    flags: str | None = None
    subscores: str | None = None
    reward_std: str | None = None
    reward_min: str | None = None
    reward_max: str | None = None
    graders: tuple[str, ...] | None = None

    def detect(self, row: Mapping[str, Any]) -> LogColumns:
        """Fill unset columns with the first known name present in ``row``."""
        updates: dict[str, Any] = {}
        for name in (
            "step",
            "proxy",
            "gold",
            "length",
            "flags",
            "subscores",
            "reward_std",
            "reward_min",
            "reward_max",
        ):
            if getattr(self, name) is None:
                found = next((c for c in CANDIDATES[name] if c in row), None)
                if found is not None:
                    updates[name] = found
        return replace(self, **updates) if updates else self


@dataclass
class StepBatch:
    """Everything logged for one step, as lists (per sample) or single values (per step)."""

    step: float
    rewards: list[float] = field(default_factory=list)
    gold: list[float] = field(default_factory=list)
    lengths: list[float] = field(default_factory=list)
    flags: list[list[str]] = field(default_factory=list)
    subscores: dict[str, list[float]] = field(default_factory=dict)
    flag_rates: dict[str, float] = field(default_factory=dict)
    reward_std: float | None = None
    reward_min: float | None = None
    reward_max: float | None = None
    aggregate: bool = False
    first_line: int = 0


@dataclass
class TrainingLog:
    """A log grouped by step.

    Attributes:
        shape: ``"per-sample"``, ``"per-batch"`` or ``"per-step"``.
        columns: The columns used (after detection).
        batches: One per step, in step order.
        rows: Rows read.
        skipped: Rows left out, with why (``{"reason": count}``).
    """

    shape: str
    columns: LogColumns
    batches: list[StepBatch]
    rows: int
    skipped: dict[str, int] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        cols = {k: v for k, v in self.columns.__dict__.items() if v is not None}
        if self.columns.graders is not None:
            cols["graders"] = list(self.columns.graders)
        return {
            "shape": self.shape,
            "columns": cols,
            "rows": self.rows,
            "steps": len(self.batches),
            "skipped": dict(self.skipped),
        }


def _number(value: Any, what: str, line: int) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    raise DataError(f"{what} must be a finite number, got {value!r}", line=line)


def _numbers(value: Any, what: str, line: int) -> list[float]:
    if isinstance(value, list):
        return [_number(v, what, line) for v in value]
    return [_number(value, what, line)]


def _graders(row: Mapping[str, Any], line: int) -> dict[str, float]:
    out = {}
    for key, value in row.items():
        match = _GRADER_COLUMN.match(key)
        if match and isinstance(value, (int, float)) and not isinstance(value, bool):
            out[match["name"]] = _number(value, key, line)
    return out


def _flag_columns(row: Mapping[str, Any], line: int) -> dict[str, float]:
    return {m["name"]: _number(v, k, line) for k, v in row.items() if (m := _FLAG_COLUMN.match(k))}


def metrics_batch(
    step: float, metrics: Mapping[str, Any], columns: LogColumns | None = None
) -> StepBatch:
    """One per-step metrics dict (TRL's ``logs``, verl's ``metrics``) as a :class:`StepBatch`.

    Raises:
        DataError: no reward column among the metrics, or a value that is not a number.
    """
    cols = (columns or LogColumns()).detect(metrics)
    if cols.proxy is None or get_field(metrics, cols.proxy) is None:
        raise DataError(
            f"no reward among the metrics (known names: {', '.join(CANDIDATES['proxy'])})"
        )
    batch = StepBatch(step=float(step), aggregate=True)
    _add_samples(batch, metrics, cols, 0)
    return batch


def group_steps(
    rows: Iterable[tuple[int, Mapping[str, Any]]], columns: LogColumns | None = None
) -> TrainingLog:
    """Group ``(line, row)`` pairs into steps, detecting the log's shape and columns.

    Rows whose ``error`` field is set (truegrade results the grader could not grade) are skipped
    and counted: a grader error is not a reward of 0. So are rows without a reward (a trainer's
    evaluation and summary entries); a log in which no row has one is an error.

    Raises:
        DataError: a row has no step or no reward, or a value is not a number; names the line.
    """
    cols = columns or LogColumns()
    by_step: dict[float, StepBatch] = {}
    rows_per_step: dict[float, int] = {}
    skipped: dict[str, int] = {}
    listed = False
    count = 0
    first_without = 0
    for line, row in rows:
        count += 1
        cols = cols.detect(row)
        if row.get("error") is not None and "score" in row:
            skipped["grader error"] = skipped.get("grader error", 0) + 1
            continue
        if cols.proxy is None or get_field(row, cols.proxy) is None:
            # trainers log evaluation and summary entries between the training steps
            skipped["no reward (evaluation or summary entries)"] = (
                skipped.get("no reward (evaluation or summary entries)", 0) + 1
            )
            first_without = first_without or line
            continue
        if cols.step is None or get_field(row, cols.step) is None:
            raise DataError(
                f"no step column (looked for {cols.step or ', '.join(CANDIDATES['step'])}); "
                "name it with --step",
                line=line,
            )
        step = _number(get_field(row, cols.step), cols.step, line)
        batch = by_step.setdefault(step, StepBatch(step=step, first_line=line))
        rows_per_step[step] = rows_per_step.get(step, 0) + 1
        listed = listed or isinstance(get_field(row, cols.proxy), list)
        _add_samples(batch, row, cols, line)
    if not by_step:
        if first_without:
            raise DataError(
                f"no reward column (looked for {cols.proxy or ', '.join(CANDIDATES['proxy'])}); "
                "name it with --proxy",
                line=first_without,
            )
        raise DataError("the log has no rows")
    _named_columns_found(columns or LogColumns(), list(by_step.values()))
    per_sample = listed or any(n > 1 for n in rows_per_step.values())
    batches = [by_step[s] for s in sorted(by_step)]
    if not per_sample:
        for batch in batches:
            batch.aggregate = True
    shape = "per-batch" if listed else "per-sample" if per_sample else "per-step"
    return TrainingLog(shape, cols, batches, count, skipped)


def _named_columns_found(named: LogColumns, batches: list[StepBatch]) -> None:
    """A column the user named that no row holds is an error: an analysis that silently ran
    without it ("no alerts") would read as a clean bill of health."""
    found = {
        "gold": any(b.gold for b in batches),
        "length": any(b.lengths for b in batches),
        "flags": any(b.flags for b in batches),
        "subscores": any(b.subscores for b in batches),
        "reward_std": any(b.reward_std is not None for b in batches),
    }
    for what, present in found.items():
        column = getattr(named, what)
        if column is not None and not present:
            raise DataError(
                f"--{what.replace('_', '-')} {column!r}: no row with a reward holds that column"
            )


def _add_samples(batch: StepBatch, row: Mapping[str, Any], cols: LogColumns, line: int) -> None:
    """Append one row's samples (one, or a list of them) to its step's batch."""
    assert cols.proxy is not None
    rewards = _numbers(get_field(row, cols.proxy), cols.proxy, line)
    k = len(rewards)

    def aligned(column: str | None, what: str) -> list[Any] | None:
        if column is None:
            return None
        value = get_field(row, column)
        if value is None:
            return None
        values = value if isinstance(value, list) and k > 1 else [value]
        if len(values) != k:
            raise DataError(f"{column}: {len(values)} values for {k} rewards", line=line)
        return values

    gold = aligned(cols.gold, "gold")
    lengths = aligned(cols.length, "length")
    if lengths is None and cols.length is None:
        text = next((c for c in CANDIDATES["text"] if isinstance(row.get(c), str)), None)
        lengths = [len(row[text])] * k if text and k == 1 else None
    flags = aligned(cols.flags, "flags")
    subscores = aligned(cols.subscores, "subscores")
    batch.rewards += rewards
    if gold is not None:
        batch.gold += [_number(v, cols.gold or "gold", line) for v in gold]
    if lengths is not None:
        batch.lengths += [_number(v, cols.length or "length", line) for v in lengths]
    if flags is not None:
        for value in flags:
            if not isinstance(value, list) or not all(isinstance(f, str) for f in value):
                raise DataError(f"{cols.flags}: must be a list of flag names", line=line)
            batch.flags.append(list(value))
    if subscores is not None:
        for value in subscores:
            if not isinstance(value, Mapping):
                raise DataError(
                    f"{cols.subscores}: must be an object of grader -> score", line=line
                )
            for name, score in value.items():
                if cols.graders is None or name in cols.graders:
                    batch.subscores.setdefault(str(name), []).append(
                        _number(score, f"{cols.subscores}.{name}", line)
                    )
    for name in ("reward_std", "reward_min", "reward_max"):
        column = getattr(cols, name)
        value = get_field(row, column) if column else None
        if value is not None:
            setattr(batch, name, _number(value, column, line))
    if k == 1 and not isinstance(get_field(row, cols.proxy), list):
        graders = _graders(row, line)
        for key, value_ in graders.items():
            if cols.graders is None or key in cols.graders:
                batch.subscores.setdefault(key, []).append(value_)
        batch.flag_rates.update(_flag_columns(row, line))


def complete(batch: StepBatch) -> tuple[dict[str, Any], list[str]]:
    """Keyword arguments for ``Monitor.update`` from a batch, and what was left out and why."""
    n = len(batch.rewards)
    dropped: list[str] = []
    kwargs: dict[str, Any] = {}
    if batch.aggregate:
        kwargs["rewards"] = batch.rewards[-1]
        for name in ("reward_std", "reward_min", "reward_max"):
            kwargs[name] = getattr(batch, name)
        if batch.gold:
            kwargs["gold"] = batch.gold[-1]
        if batch.lengths:
            kwargs["lengths"] = batch.lengths[-1]
        if len(batch.subscores) >= 2:
            kwargs["subscores"] = {k: v[-1] for k, v in batch.subscores.items()}
        if batch.flag_rates:
            kwargs["flags"] = dict(batch.flag_rates)
        return kwargs, dropped
    kwargs["rewards"] = batch.rewards
    for name, values in (("gold", batch.gold), ("lengths", batch.lengths)):
        if len(values) == n:
            kwargs[name] = values
        elif values:
            dropped.append(f"{name} (logged for {len(values)} of {n} samples)")
    if batch.flags:
        if len(batch.flags) == n:
            kwargs["flags"] = batch.flags
        else:
            dropped.append(f"flags (logged for {len(batch.flags)} of {n} samples)")
    full = {k: v for k, v in batch.subscores.items() if len(v) == n}
    if len(full) >= 2:
        kwargs["subscores"] = full
    return kwargs, dropped
