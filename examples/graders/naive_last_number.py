"""A naive math reward in TRL signature: the kind many RL recipes start with.

It takes the last number in the completion and accepts it within a relative tolerance. It is here
to be beaten: hedging ("3 or 5"), a stray number after the answer and near misses all fool it.
truegrade's ``numeric`` and ``math`` graders are what it should be compared against.
"""

from __future__ import annotations

import re

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def reward(prompts, completions, reference, **kwargs):
    """1.0 when the last number in the completion is within 1e-4 (relative) of the reference."""
    rewards = []
    for completion, gold in zip(completions, reference, strict=True):
        text = completion if isinstance(completion, str) else completion[-1]["content"]
        numbers = _NUMBER.findall(text.replace(",", ""))
        if not numbers:
            rewards.append(0.0)
            continue
        guess, target = float(numbers[-1]), float(gold)
        rewards.append(1.0 if abs(guess - target) <= 1e-4 * max(1.0, abs(target)) else 0.0)
    return rewards
