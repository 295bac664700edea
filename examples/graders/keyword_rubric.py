"""A naive rubric reward in TRL signature: the share of the rubric's keywords the answer mentions.

Keyword rubrics are cheap and look reasonable, and they are trivially gamed: a response that is
nothing but the keywords, in any order, scores 1.0. It is here to be beaten; truegrade's rubric
grader and its linter are what it should be compared against.
"""

from __future__ import annotations


def reward(prompts, completions, reference, **kwargs):
    """Fraction of the reference's keywords (a list of strings) found in the completion."""
    rewards = []
    for completion, keywords in zip(completions, reference, strict=True):
        text = (completion if isinstance(completion, str) else completion[-1]["content"]).lower()
        words = [k.lower() for k in keywords] if isinstance(keywords, list) else [str(keywords)]
        rewards.append(sum(1 for k in words if k in text) / len(words) if words else 0.0)
    return rewards
