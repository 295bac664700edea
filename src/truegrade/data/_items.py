"""Rows that are rollouts of one prompt: one item, however many responses.

A rollout dump (several responses per prompt, the shape of every GRPO group and of pass@k
files) has many rows per prompt. Counted as items, each row would be a separate question: a
card's intervals would count 40 items that are 10, and the audit would flag every prompt as a
near-duplicate of its own rollouts. Rows without a ``group`` of their own that share their
prompt and their reference are one item: their group is the id of the first of them.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence

from truegrade.core import Sample

__all__ = ["group_rollouts", "rollout_key"]


def rollout_key(sample: Sample) -> str:
    """The item a row belongs to: its own ``group``, else its prompt and reference together
    (``prompt:`` and a digest), else, with no prompt, its own id."""
    if sample.group is not None:
        return sample.group
    if sample.prompt is None:
        return sample.key
    told = json.dumps([sample.prompt, sample.reference], sort_keys=True, default=str)
    return "prompt:" + hashlib.sha256(told.encode()).hexdigest()[:12]


def group_rollouts(samples: Sequence[Sample]) -> tuple[list[Sample], int, int]:
    """``samples`` with each row that shares its prompt and reference with another (and has no
    group of its own) grouped with them; how many rows were grouped, into how many items. Rows
    that are the only ones of their prompt are left as they are."""
    keys = [rollout_key(s) for s in samples]
    counts = Counter(k for s, k in zip(samples, keys, strict=True) if s.group is None)
    out: list[Sample] = []
    made: dict[str, str] = {}  # an item is named by the id of its first row
    for sample, key in zip(samples, keys, strict=True):
        if sample.group is None and counts[key] > 1:
            name = made.setdefault(key, sample.key)
            out.append(sample.model_copy(update={"group": name}))
        else:
            out.append(sample)
    return out, sum(counts[k] for k in made), len(made)
