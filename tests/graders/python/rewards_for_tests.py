"""Reward functions the bring-your-own tests import (workers must be able to import them too)."""

from __future__ import annotations


def contains_reference(prompts, completions, reference, **kwargs):
    return [float(str(r) in c) for c, r in zip(completions, reference, strict=True)]


class LengthReward:
    """A callable instance, TRL style (picklable because its class is importable)."""

    __name__ = "length_reward"

    def __call__(self, completions, **kwargs):
        return [min(1.0, len(c) / 100) for c in completions]


def not_applicable(completions, **kwargs):
    """TRL's "not applicable" for every completion."""
    return [None for _ in completions]
