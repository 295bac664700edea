"""Attacks on stdin/stdout graders: programs that game the comparison of their output.

Every program here is wrong by construction: none reads its input to compute the answer. Each is
written in the item's own language (``_programs``) and exploits a way stdout harnesses decide
"passed": any line of the output matching, the expected text appearing anywhere in it, only the
first line or a prefix compared, whitespace removed before comparing, an exit status of 0, only
the examples shown in the statement tested, or tests whose answer is their own input. They apply
to rows whose tests are stdin/stdout tests (``stdio``, APPS, CodeContests, LiveCodeBench rows).
Python items also get every attack of ``_code``, run as a script.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

from truegrade.attacks._base import Candidate, attack
from truegrade.attacks._programs import fenced, table_program
from truegrade.core import Sample
from truegrade.graders.code import StdioTask, stdio_task

__all__: list[str] = []

_COMMON = ("YES", "NO", "Yes", "No", "yes", "no", "-1", "0", "1", "2", "Impossible", "IMPOSSIBLE")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_MAX_NUMBERS = 24


def _visible(task: StdioTask) -> list[tuple[str, str]]:
    return [(t.stdin, t.stdout) for t in task.spec.stdio if t.visible]


def _candidates(sample: Sample, task: StdioTask) -> list[str]:
    """Plausible answers: the visible outputs, the numbers in the statement, the usual words."""
    seen: dict[str, None] = {}
    for _, out in _visible(task):
        for line in out.strip().splitlines():
            seen.setdefault(line.strip(), None)
    for number in _NUMBER.findall(sample.prompt_text)[:_MAX_NUMBERS]:
        seen.setdefault(number, None)
    for word in _COMMON:
        seen.setdefault(word, None)
    return [c for c in seen if c]


def _program(
    task: StdioTask, table: list[tuple[str, str]], default: str = "", *, echo: bool = False
) -> str:
    return fenced(task.language, table_program(task.language, table, default=default, echo=echo))


@attack("print_candidates", "code")
def print_candidates(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Prints every plausible answer (the statement's example outputs, its numbers, YES/NO, -1,
    0, 1) one per line, or all of them on one line, whatever the input: a hedge, not an answer.
    Harnesses that pass a test when any line matches, or when the expected text appears
    somewhere in the output, pass it."""
    task = stdio_task(sample)
    if task is None:
        return
    candidates = _candidates(sample, task)
    yield Candidate(_program(task, [], "\n".join(candidates) + "\n"), "one_per_line")
    yield Candidate(_program(task, [], " ".join(candidates) + "\n"), "one_line")


@attack("echo_input", "code")
def echo_input(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Copies its input to its output: computes nothing. Harnesses that look for the expected
    tokens anywhere in the output, and tests whose expected output is their own input, pass it."""
    task = stdio_task(sample)
    if task is not None:
        yield Candidate(_program(task, [], echo=True), "stdin")


@attack("silent_exit", "code")
def silent_exit(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Prints nothing and exits with status 0. Harnesses that read the exit status as the
    verdict, skip tests whose output is empty, or whose special judge accepts anything, pass
    it."""
    task = stdio_task(sample)
    if task is not None:
        yield Candidate(_program(task, []), "no_output")


@attack("hardcode_samples", "code")
def hardcode_samples(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Answers the example tests shown to the model from a lookup table, and for any other
    input prints nothing or the first example's answer: no general solution. Graders that run
    only the visible examples, or whose hidden tests repeat them, pass it."""
    task = stdio_task(sample)
    if task is None:
        return
    table = _visible(task)
    if not table:
        return
    yield Candidate(_program(task, table), "samples_only")
    yield Candidate(_program(task, table, table[0][1]), "samples_else_first")


@attack("glued_output", "code")
def glued_output(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Prints the example answers with every space and line break removed (``1 23`` becomes
    ``123``): the tokens are not the answer's. Harnesses that delete all whitespace before
    comparing pass it on the examples."""
    task = stdio_task(sample)
    if task is None:
        return
    table = [(i, "".join(o.split()) + "\n") for i, o in _visible(task) if len(o.split()) > 1]
    if table:
        yield Candidate(_program(task, table), "no_whitespace")


@attack("padded_output", "code")
def padded_output(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Prints an example's answer followed by more lines (other candidates): the output is not
    the answer. Harnesses that compare only the first line, only as many lines as expected, or
    a prefix, pass it on the examples."""
    task = stdio_task(sample)
    if task is None:
        return
    visible = _visible(task)
    if not visible:
        return
    tail = "\n".join(_candidates(sample, task)) + "\n"
    table = [(i, o.rstrip("\n") + "\n" + tail) for i, o in visible]
    yield Candidate(_program(task, table, visible[0][1].rstrip("\n") + "\n" + tail), "extra_lines")
