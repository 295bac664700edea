"""``choice``: multiple-choice answers, where naming two options is a fail, not a lucky guess.

The extractor looks for the answer at decreasing levels of explicitness and stops at the first
level that has any: (1) explicit statements (``\\boxed{B}``, a line ``Answer: B``); (2) phrased
ones ("the correct answer is (B)"); (3) a response that is only an option ("B", "(B)."); (4) option
tokens written as ``(B)`` or ``**B**``. Two different letters at the level used fail with flag
``hedged`` ("Answer: B or C" included); no letter is ``no_answer``; a letter outside ``choices``
is ``invalid_choice``. A capital "A" inside prose is never read as an option: it is an article.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import field_validator

from truegrade.core import Flag
from truegrade.graders._extract import final_answers
from truegrade.graders._kernel import (
    GraderOptions,
    Kernel,
    KernelGrader,
    error_verdict,
    verdict,
)

__all__ = ["ChoiceGrader", "ChoiceOptions", "extract_choices"]

_CUT = re.compile(r"\s(?:because|since|as|which|for|not|rather|instead)\b", re.IGNORECASE)
_LETTER = re.compile(r"(?<![A-Za-z0-9'])[(\[]?([A-Z])[)\]]?(?![A-Za-z0-9'])")
_ALONE = re.compile(r"[ \t\n*_]*(?:\\text(?:bf)?\{)?[(\[]?([A-Za-z])[)\]]?\}?[.:]?[ \t\n*_]*")
_TOKEN = re.compile(r"\(([A-Z])\)|\*\*([A-Z])\*\*")


def _letters_in(statement: str) -> list[str]:
    alone = _ALONE.fullmatch(statement)
    if alone:
        return [alone.group(1).upper()]
    cut = _CUT.search(statement)
    span = statement[: cut.start()] if cut else statement
    return _LETTER.findall(span)


def extract_choices(text: str) -> tuple[list[str], str]:
    """The distinct option letters at the most explicit level present, and that level's name."""
    found = final_answers(text)
    letters = [letter for s in found.statements for letter in _letters_in(s)]
    if letters:
        return list(dict.fromkeys(letters)), found.level
    alone = _ALONE.fullmatch(text)
    if alone:
        return [alone.group(1).upper()], "alone"
    tokens = [a or b for a, b in _TOKEN.findall(text)]
    if tokens:
        return list(dict.fromkeys(tokens)), "token"
    return [], "none"


class ChoiceOptions(GraderOptions):
    """Options of ``choice``.

    Attributes:
        choices: The valid option letters (default ``ABCD``; e.g. ``ABCDEFGHIJ`` for MMLU-Pro).
    """

    choices: str = "ABCD"

    @field_validator("choices")
    @classmethod
    def _letters(cls, value: str) -> str:
        letters = value.replace(",", "").replace(" ", "").upper()
        if not letters or not letters.isalpha() or len(set(letters)) != len(letters):
            raise ValueError("choices must be distinct letters, e.g. 'ABCD'")
        return letters


@dataclass(frozen=True)
class _ChoiceKernel:
    deadline_clock = "cpu"  # it only computes, so it is timed in CPU time (exec.Task)

    choices: str

    def __call__(self, payload: tuple[str, Any]) -> dict[str, Any]:
        response, reference = payload
        key = str(reference).strip().strip("()[]. ").upper()
        if len(key) != 1 or key not in self.choices:
            return error_verdict(
                f"the reference {str(reference)[:20]!r} is not one of {self.choices}",
                "bad_reference",
            )
        letters, level = extract_choices(response)
        if not letters:
            return verdict(False, "no option letter found", Flag.NO_ANSWER)
        if len(letters) > 1:
            return verdict(False, f"several options given ({', '.join(letters)})", Flag.HEDGED)
        letter = letters[0]
        if letter not in self.choices:
            return verdict(False, f"{letter} is not one of {self.choices}", "invalid_choice")
        if letter == key:
            return verdict(True, f"answered {letter} ({level})", Flag.EXACT_MATCH)
        return verdict(False, f"answered {letter}, the key is {key}")


class ChoiceGrader(KernelGrader):
    """Exactly one option letter, equal to the key.

    Examples:
        >>> g = ChoiceGrader.from_options({})
        >>> g.grade({"id": 1, "response": "The answer is (C).", "reference": "C"}).passed
        True
        >>> g.grade({"id": 2, "response": "Answer: B or C", "reference": "C"}).flags
        ['hedged']
    """

    kind = "choice"
    family = "math"
    Options = ChoiceOptions
    default_execution = "inline"
    default_timeout_s = 5.0
    options: ChoiceOptions

    def kernel(self) -> Kernel:
        return _ChoiceKernel(self.options.choices)
