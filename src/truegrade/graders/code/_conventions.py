"""Judges' conventions: the Kattis default output validator and the names judges give verdicts.

The Kattis/ICPC problem package format checks a program's output, unless the package brings a
validator of its own, with a *default validator* whose flags the package sets
(``validator_flags`` in ``problem.yaml``). Its rules, as problemtools' ``default_validator``
applies them, are reproduced here so a package's rows are judged as the judge would judge them:

* the output and the answer are read as whitespace-separated tokens (whitespace being the C
  locale's: space, ``\\t``, ``\\n``, ``\\v``, ``\\f``, ``\\r``);
* ``case_sensitive``: tokens compared exactly; otherwise ASCII letters compared without case
  (``NaN`` is ``nan``, ``YES`` is ``yes``);
* ``space_change_sensitive``: the whitespace between, before and after tokens must be the
  answer's, byte for byte;
* ``float_absolute_tolerance A`` / ``float_relative_tolerance R`` / ``float_tolerance T`` (both
  set to ``T``): an answer token that reads as a finite number (all of it, as C's ``%lf`` reads
  it: decimal or hexadecimal, never ``inf`` or ``nan``) is a number, and the output's token must
  read as one too, within ``|a - o| <= A`` or ``|a - o| <= R * |a|`` (the answer's magnitude,
  not the larger of the two).

It runs here, in the grader, as pure text comparison: no program of the dataset's runs, so there
is nothing to sandbox. Its agreement with problemtools' own test cases of that validator is
tested (``tests/data/kattis_default_validator``).

``VERDICT_NAMES`` renames truegrade's per-test verdicts for users who compare with a judge:
``kattis`` (AC, WA, TLE, RTE, MLE, OLE, CE) or ``domjudge`` (correct, wrong-answer, timelimit,
run-error, memory-limit, output-limit, compiler-error). A judge without truegrade's finer names
gets its nearest one: ``idle_limit`` is a time limit to both, ``budget_exhausted`` too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = [
    "KATTIS_FLAGS",
    "VERDICT_NAMES",
    "KattisFlags",
    "kattis_compare",
    "parse_kattis_flags",
    "verdict_name",
]

KATTIS_FLAGS = (
    "case_sensitive",
    "space_change_sensitive",
    "float_absolute_tolerance",
    "float_relative_tolerance",
    "float_tolerance",
)
"""The flags of the Kattis default validator."""

VERDICT_NAMES: dict[str, dict[str, str]] = {
    "truegrade": {},
    "kattis": {
        "accepted": "AC",
        "wrong_answer": "WA",
        "time_limit": "TLE",
        "idle_limit": "TLE",
        "budget_exhausted": "TLE",
        "runtime_error": "RTE",
        "memory_limit": "MLE",
        "output_limit": "OLE",
        "compile_error": "CE",
    },
    "domjudge": {
        "accepted": "correct",
        "wrong_answer": "wrong-answer",
        "time_limit": "timelimit",
        "idle_limit": "timelimit",
        "budget_exhausted": "timelimit",
        "runtime_error": "run-error",
        "memory_limit": "memory-limit",
        "output_limit": "output-limit",
        "compile_error": "compiler-error",
    },
}
"""Per-test verdict names by judge (``truegrade``: its own names, unchanged)."""


def verdict_name(verdict: str, names: str) -> str:
    """``verdict`` as the judge ``names`` calls it."""
    return VERDICT_NAMES[names].get(verdict, verdict)


@dataclass(frozen=True)
class KattisFlags:
    """The default validator's settings (negative tolerance: not set)."""

    case_sensitive: bool = False
    space_change_sensitive: bool = False
    abs_tol: float = -1.0
    rel_tol: float = -1.0

    @property
    def floats(self) -> bool:
        return self.abs_tol >= 0 or self.rel_tol >= 0


# Each digit run is matched one way only (``\d+(?:\.\d*)?``, never ``\d+\.?\d*``, whose two
# runs can split a run of digits anywhere): a token of n digits that is no number ("111...1x")
# costs linear time, where the ambiguous form backtracked through every split, in time
# quadratic in n (30,000 digits took 13 s).
_DECIMAL = re.compile(rb"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_HEXADECIMAL = re.compile(
    rb"[+-]?0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
)


def _number(token: bytes) -> float | None:
    """The token as C's ``sscanf("%lf")`` reads all of it, when finite; else None."""
    try:
        if _DECIMAL.fullmatch(token):
            value = float(token)
        elif _HEXADECIMAL.fullmatch(token):
            text = token.decode("ascii")
            if "p" not in text.lower():
                text += "p0"
            value = float.fromhex(text)
        else:
            return None
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def parse_kattis_flags(flags: str | list[str]) -> KattisFlags:
    """The default validator's flags, as ``problem.yaml``'s ``validator_flags`` gives them.

    Raises:
        ValueError: an unknown flag, or a tolerance without a number (the judge refuses them too).
    """
    words = flags.split() if isinstance(flags, str) else [str(f) for f in flags]
    case = space = False
    abs_tol = rel_tol = -1.0
    i = 0
    while i < len(words):
        word = words[i]
        if word == "case_sensitive":
            case = True
        elif word == "space_change_sensitive":
            space = True
        elif word in ("float_absolute_tolerance", "float_relative_tolerance", "float_tolerance"):
            value = _number(words[i + 1].encode()) if i + 1 < len(words) else None
            if value is None:
                raise ValueError(f"the validator flag {word!r} needs a number after it")
            if word != "float_relative_tolerance":
                abs_tol = value
            if word != "float_absolute_tolerance":
                rel_tol = value
            i += 1
        else:
            raise ValueError(
                f"unknown default validator flag {word!r}; known: {', '.join(KATTIS_FLAGS)}"
            )
        i += 1
    return KattisFlags(case, space, abs_tol, rel_tol)


_RUNS = re.compile(rb"([ \t\n\v\f\r]*)([^ \t\n\v\f\r]*)")


def _split(data: bytes) -> tuple[list[bytes], list[bytes]]:
    """(the whitespace runs, the tokens): ``spaces[i]`` precedes ``tokens[i]``, the last run
    is what follows the last token."""
    spaces, tokens = [], []
    for match in _RUNS.finditer(data):
        space, token = match.group(1), match.group(2)
        if not space and not token:
            continue
        spaces.append(space)
        if token:
            tokens.append(token)
    if len(spaces) == len(tokens):
        spaces.append(b"")
    return spaces, tokens


def _short(token: bytes) -> str:
    text = token[:160].decode("utf-8", "replace")  # a token of megabytes: only its start shows
    return text if len(text) <= 40 else text[:37] + "..."


def kattis_compare(output: str | bytes, answer: str | bytes, flags: KattisFlags) -> str:
    """The default validator's verdict on ``output``: "" when accepted, else why it is wrong."""
    out = output.encode("utf-8", "surrogateescape") if isinstance(output, str) else output
    ans = answer.encode("utf-8", "surrogateescape") if isinstance(answer, str) else answer
    out_spaces, out_tokens = _split(out)
    ans_spaces, ans_tokens = _split(ans)
    for i, expected in enumerate(ans_tokens):
        if flags.space_change_sensitive and out_spaces[i] != ans_spaces[i]:
            return f"the whitespace before token {i + 1} differs from the answer's"
        if i >= len(out_tokens):
            return f"the output ends where the answer has more (next: {_short(expected)!r})"
        got = out_tokens[i]
        value = _number(expected) if flags.floats else None
        if value is not None:
            number = _number(got)
            if number is None:
                return f"token {i + 1}: expected a number, got {_short(got)!r}"
            error = abs(value - number)
            if not (error <= flags.abs_tol) and not (error <= flags.rel_tol * abs(value)):
                return (
                    f"token {i + 1}: {_short(got)} is too far from {_short(expected)} "
                    f"(absolute error {error:.3g})"
                )
        elif flags.case_sensitive:
            if got != expected:
                return f"token {i + 1}: expected {_short(expected)!r}, got {_short(got)!r}"
        elif got.lower() != expected.lower():  # bytes: ASCII letters only, as strcasecmp
            return f"token {i + 1}: expected {_short(expected)!r}, got {_short(got)!r}"
    if len(out_tokens) > len(ans_tokens):
        return f"trailing output: {_short(out_tokens[len(ans_tokens)])!r}"
    if flags.space_change_sensitive and out_spaces[len(ans_tokens)] != ans_spaces[len(ans_tokens)]:
        return "the whitespace after the last token differs from the answer's"
    return ""
