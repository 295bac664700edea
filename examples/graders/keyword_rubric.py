"""A naive rubric reward in TRL signature: the share of the rubric's key phrases the answer
mentions.

Keyword rubrics are cheap and look reasonable: take the phrase each positive criterion quotes
(or the criterion's own words) and count how many the answer contains. They are trivially
gamed: a response that is nothing but the phrases, in any order, scores 1.0, and negative
criteria are ignored. It is here to be beaten; truegrade's ``rubric`` grader and
``truegrade rubric lint`` are what it should be compared against.
"""

from __future__ import annotations

import re

_QUOTED = re.compile(r'"([^"]+)"')


def _phrases(rubric):
    phrases = []
    for item in rubric:
        if isinstance(item, str):
            phrases.append(item)
        elif item.get("points", 1) > 0:
            quoted = _QUOTED.findall(item["criterion"])
            phrases.extend(quoted or [item["criterion"]])
    return [p.lower() for p in phrases]


def reward(prompts, completions, reference, **kwargs):
    """Fraction of the rubric's key phrases found in the completion."""
    rewards = []
    for completion, rubric in zip(completions, reference, strict=True):
        text = (completion if isinstance(completion, str) else completion[-1]["content"]).lower()
        phrases = _phrases(rubric if isinstance(rubric, list) else [str(rubric)])
        rewards.append(sum(1 for p in phrases if p in text) / len(phrases) if phrases else 0.0)
    return rewards
