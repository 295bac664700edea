"""A reward function for the server benchmark's head-of-line measurement: a completion
``"sleep:S"`` takes S seconds to grade, any other is graded at once (reward 1.0)."""

from __future__ import annotations

import time
from typing import Any


def sleepy(prompts: list[str], completions: list[str], **kwargs: Any) -> list[float]:
    for completion in completions:
        if completion.startswith("sleep:"):
            time.sleep(float(completion.removeprefix("sleep:")))
    return [1.0] * len(completions)
