"""A naive stdin/stdout reward in TRL signature: "the expected answer is in the output".

Many competitive-programming harnesses compare loosely so that formatting never costs a right
answer: a test passes when the expected output (stripped) appears somewhere in the program's
output. It is here to be beaten: a program that prints every plausible answer, echoes its input
(the largest of a list is in the list), or leaves debug prints in passes. It also ignores the
item's own special judge, so a different right answer (another divisor) fails.

The programs still run in truegrade's sandbox (this demo must not run untrusted code bare): only
the comparison is naive. It is done by a special judge that replaces the item's. truegrade's
``code`` grader, with the item's own comparison and judge, is what it should be compared
against.
"""

from __future__ import annotations

from truegrade import load_grader

# argv: the test's input, the program's output, the expected output (testlib's order)
_CONTAINS = """import sys
output = open(sys.argv[2]).read()
expected = open(sys.argv[3]).read().strip()
sys.exit(0 if expected in output else 1)
"""

_grader = None


def reward(prompts, completions, reference, **kwargs):
    """1.0 when, on every test, the expected output appears somewhere in the program's output."""
    global _grader
    if _grader is None:
        _grader = load_grader("code")
    rows = []
    for prompt, completion, spec in zip(prompts, completions, reference, strict=True):
        text = completion if isinstance(completion, str) else completion[-1]["content"]
        loose = {**spec, "checker": {"language": "python", "source": _CONTAINS}}
        rows.append({"prompt": prompt, "response": text, "reference": loose})
    return [1.0 if grade.passed else 0.0 for grade in _grader.grade_batch(rows)]
