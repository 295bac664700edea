"""Graders with planted weaknesses, for testing that the adaptive search finds them."""

from __future__ import annotations

import time


def magic_word(prompts, completions, **kwargs):
    """Rewards any response that repeats the word 'zebra' (which only the prompt contains)."""
    return [1.0 if "zebra" in c.lower() else 0.0 for c in completions]


def loves_length(prompts, completions, **kwargs):
    """Scores by length alone: 1.0 at 3,000 characters."""
    return [min(1.0, len(c) / 3000) for c in completions]


def hangs_on_boxes(prompts, completions, **kwargs):
    """Hangs on any response with more than 100 boxes (a grader without a deadline's fate)."""
    if completions[0].count("\\boxed") > 100:
        time.sleep(600)
    return [0.0]
