"""``exact``: the response (or its extracted final answer) equals the reference.

Normalisation is explicit: only the steps named in ``normalize`` are applied, in a fixed order,
so "exact" never silently means "close enough". With ``extract``, every extracted answer counts:
two different ones fail as ``hedged``. A reference that is not text (or a number), or that is
empty once normalised, is an error: an empty key would pass an empty response.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import field_validator

from truegrade.core import Flag
from truegrade.graders._extract import check_pattern, final_answers, pattern_matches
from truegrade.graders._kernel import (
    GraderOptions,
    Kernel,
    KernelGrader,
    error_verdict,
    verdict,
)

__all__ = ["NORMALIZERS", "ExactGrader", "ExactOptions", "normalize_text"]

Normalizer = Literal[
    "nfkc",
    "casefold",
    "lower",
    "strip_punctuation",
    "remove_articles",
    "collapse_whitespace",
    "strip",
]
NORMALIZERS: tuple[str, ...] = get_args(Normalizer)
"""The normalisation steps, in the order they are applied."""

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(?:a|an|the)\b", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def normalize_text(text: str, steps: tuple[str, ...]) -> str:
    """Apply the named normalisation steps in their canonical order."""
    if "nfkc" in steps:
        text = unicodedata.normalize("NFKC", text)
    if "casefold" in steps:
        text = text.casefold()
    if "lower" in steps:
        text = text.lower()
    if "strip_punctuation" in steps:
        text = text.translate(_PUNCT)
    if "remove_articles" in steps:
        text = _ARTICLES.sub(" ", text)
    if "collapse_whitespace" in steps:
        text = _SPACES.sub(" ", text)
    if "strip" in steps:
        text = text.strip()
    return text


class ExactOptions(GraderOptions):
    """Options of ``exact``.

    Attributes:
        normalize: Steps applied to both sides (default: ``strip`` only).
        extract: ``None`` (compare the whole response), ``"final_answer"`` (boxed answers and
            "Answer:" lines), or a regular expression (its first group, else the whole match).
    """

    normalize: list[Normalizer] = ["strip"]  # noqa: RUF012 - pydantic copies defaults
    extract: str | None = None

    @field_validator("extract")
    @classmethod
    def _valid_pattern(cls, value: str | None) -> str | None:
        if value is not None and value != "final_answer":
            check_pattern(value)
        return value


@dataclass(frozen=True)
class _ExactKernel:
    deadline_clock = "cpu"  # it only computes, so it is timed in CPU time (exec.Task)

    steps: tuple[str, ...]
    extract: str | None

    def __call__(self, payload: tuple[str, Any]) -> dict[str, Any]:
        response, reference = payload
        references = reference if isinstance(reference, list) else [reference]
        wrong = [r for r in references if not isinstance(r, (str, int, float))]
        if wrong or not references:
            what = type(wrong[0]).__name__ if wrong else "an empty list"
            return error_verdict(
                f"the reference must be text or a list of accepted texts, got {what}",
                "bad_reference",
            )
        targets = {normalize_text(str(r), self.steps) for r in references}
        if "" in targets:
            return error_verdict(
                "the reference is empty (after normalisation): it would pass an empty response",
                "bad_reference",
            )
        if self.extract is None:
            candidates = [response]
        elif self.extract == "final_answer":
            candidates = list(final_answers(response).statements)
        else:
            candidates = pattern_matches(self.extract, response)
        answers = list(dict.fromkeys(normalize_text(c, self.steps) for c in candidates))
        if not answers:
            return verdict(False, "no answer found in the response", Flag.NO_ANSWER)
        if len(answers) > 1:
            shown = ", ".join(repr(a[:40]) for a in answers[:4])
            return verdict(False, f"{len(answers)} different answers given: {shown}", Flag.HEDGED)
        if answers[0] in targets:
            return verdict(True, "equals the reference", Flag.EXACT_MATCH)
        return verdict(False, f"{answers[0][:80]!r} differs from the reference")


class ExactGrader(KernelGrader):
    """Exact match after explicit normalisation.

    Examples:
        >>> g = ExactGrader.from_options({"normalize": ["strip", "casefold"]})
        >>> g.grade({"id": 1, "response": "PARIS\\n", "reference": "paris"}).passed
        True
    """

    kind = "exact"
    family = "math"
    Options = ExactOptions
    default_execution = "inline"
    default_timeout_s = 5.0
    options: ExactOptions

    def _safe_execution(self) -> Literal["process", "inline"]:
        # a user's pattern may backtrack for ever on hostile text: run it where it can be killed
        extract = self.options.extract
        return "process" if extract not in (None, "final_answer") else "inline"

    def kernel(self) -> Kernel:
        steps = tuple(s for s in NORMALIZERS if s in self.options.normalize)
        return _ExactKernel(steps, self.options.extract)
