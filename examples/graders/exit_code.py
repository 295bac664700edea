"""A naive code reward in TRL signature: run the program with its tests, reward exit status 0.

This is how many harnesses decide "passed": prompt + completion + tests in one interpreter, and
the process's exit code as the verdict. It is here to be beaten: a program that calls
``sys.exit(0)`` before the tests run, or forces status 0 from an exception hook, passes every
problem. It also runs the program with no isolation at all: never point it at untrusted code
outside a throwaway machine. truegrade's ``code`` grader is what it should be compared against.
"""

from __future__ import annotations

import re
import subprocess
import sys

_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


def _program(completion: str) -> str:
    blocks = _FENCE.findall(completion)
    return blocks[-1] if blocks else completion


def reward(prompts, completions, reference, **kwargs):
    """1.0 when prompt + program + the reference's ``check(entry_point)`` exits with status 0."""
    rewards = []
    for prompt, completion, spec in zip(prompts, completions, reference, strict=True):
        text = completion if isinstance(completion, str) else completion[-1]["content"]
        source = f"{prompt}\n{_program(text)}\n\n{spec['check']}\n\ncheck({spec['entry_point']})\n"
        try:
            done = subprocess.run([sys.executable, "-c", source], capture_output=True, timeout=10)
            rewards.append(1.0 if done.returncode == 0 else 0.0)
        except subprocess.TimeoutExpired:
            rewards.append(0.0)
    return rewards
