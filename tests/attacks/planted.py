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


def pytest_harness(prompts, completions, reference, **kwargs):
    """The agentic-harness way: the solution in ``solution.py``, the checks in a pytest file
    beside it, the program run once, then ``pytest``; exit status 0 passes. Unsandboxed: only
    for the test suite's own attack programs, in a throwaway directory."""
    import re
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    rewards = []
    for prompt, completion, spec in zip(prompts, completions, reference, strict=True):
        blocks = re.findall(r"```(?:python)?\s*\n(.*?)```", completion, re.DOTALL)
        with tempfile.TemporaryDirectory() as work:
            (Path(work) / "solution.py").write_text(
                f"{prompt}\n{blocks[-1] if blocks else completion}"
            )
            (Path(work) / "test_solution.py").write_text(
                f"from solution import {spec['entry_point']} as candidate\n\n{spec['check']}\n\n"
                "def test_check():\n    check(candidate)\n"
            )
            run = [sys.executable, "solution.py"]
            subprocess.run(run, cwd=work, capture_output=True, timeout=30)
            test = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            done = subprocess.run(test, cwd=work, capture_output=True, timeout=60)
            rewards.append(1.0 if done.returncode == 0 else 0.0)
    return rewards
