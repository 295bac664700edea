"""A reward function that takes its time, for overload, deadline and shutdown tests: the
completion is the number of seconds to sleep ("0" answers at once)."""

from __future__ import annotations

import time


def slow(prompts, completions, **kwargs):
    time.sleep(float(completions[0]) if completions[0].replace(".", "").isdigit() else 0.0)
    return [1.0]
