"""The raw outcome of scoring one sample, before scaling: what both backends return."""

from __future__ import annotations

import math
from dataclasses import dataclass

from truegrade.core import Flag

__all__ = ["RawScore", "RewardModelFlag"]


class RewardModelFlag:
    """Flags the ``reward_model`` grader raises (besides ``invalid_score``)."""

    TRUNCATED = "truncated"
    """The input was longer than ``max_length``; the model read only part of it."""
    REQUEST_FAILED = "reward_model_error"
    """The served model could not give a score; the kind of failure is a flag too."""
    REFERENCE_SET = "reference_set_error"
    """The z-score's reference set could not be read or scored."""
    MODEL_ERROR = "model_error"
    """The local model could not score the sample (it failed to load, had no chat template,
    ran out of memory...)."""


@dataclass(frozen=True)
class RawScore:
    """A raw reward, or why there is none.

    Attributes:
        value: The model's output (a logit, unless the server applied an activation).
        error: Why there is no value.
        flags: Machine-readable reasons (``truncated``, ``reward_model_error``...).
    """

    value: float | None = None
    error: str | None = None
    flags: tuple[str, ...] = ()

    @classmethod
    def of(cls, value: float, *flags: str) -> RawScore:
        """A value, or an ``invalid_score`` error when it is not a finite number."""
        if not math.isfinite(value):
            why = f"the model gave a non-finite score ({value})"
            return cls(error=why, flags=(*flags, Flag.INVALID_SCORE))
        return cls(value=value, flags=flags)

    @classmethod
    def failed(cls, error: str, *flags: str) -> RawScore:
        return cls(error=error, flags=flags)
