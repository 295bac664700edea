"""Scaling raw rewards: none, a sigmoid, or a z-score against a reference set.

A reward model's logits have no fixed scale: two models (or two checkpoints of one) put the
same preferences on different ranges. Raw is the honest default; a sigmoid maps to (0, 1) for
tools that expect a probability-like score; a z-score puts members of an ensemble on a common
scale, which their mean, minimum and variance need to mean anything.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["ScoreScale", "sigmoid"]


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large ``|x|``.

    Examples:
        >>> sigmoid(0.0), round(sigmoid(2.0), 4), sigmoid(-1000.0)
        (0.5, 0.8808, 0.0)
    """
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


@dataclass(frozen=True)
class ScoreScale:
    """How a raw reward becomes the grade's score.

    Attributes:
        kind: ``none``, ``sigmoid`` or ``zscore``.
        mean / std: The z-score's statistics.
        source: Where they came from, for explanations (``reference set of 200``).

    Examples:
        >>> ScoreScale("zscore", mean=1.0, std=2.0).apply(5.0)
        2.0
    """

    kind: Literal["none", "sigmoid", "zscore"] = "none"
    mean: float = 0.0
    std: float = 1.0
    source: str = ""

    @classmethod
    def from_reference(cls, raw: Sequence[float], source: str) -> ScoreScale:
        """A z-score scale from a reference set's raw scores (population standard deviation).

        Raises:
            ValueError: fewer than two scores, or all of them equal.
        """
        if len(raw) < 2:
            raise ValueError(f"{source}: {len(raw)} scored samples; a z-score needs at least 2")
        mean = sum(raw) / len(raw)
        std = math.sqrt(sum((x - mean) ** 2 for x in raw) / len(raw))
        if not std > 0:
            raise ValueError(f"{source}: every sample scored {mean:g}; no spread to scale by")
        return cls("zscore", mean, std, f"{source} ({len(raw)} samples)")

    def apply(self, raw: float) -> float:
        if self.kind == "sigmoid":
            return sigmoid(raw)
        if self.kind == "zscore":
            return (raw - self.mean) / self.std
        return raw

    def describe(self) -> str:
        if self.kind == "zscore":
            where = f", from {self.source}" if self.source else ""
            return f"z-score (mean {self.mean:.4g}, std {self.std:.4g}{where})"
        return self.kind
