"""Reading a judge's verdict: only from its final structured output, never from the first match.

FastChat's parser takes the first ``[[n]]`` in the judge's answer; a judge that quotes the
response it is grading then hands the grade to whatever the response planted. Here the verdict
is the JSON object that ends the answer (or, failing that, a ``key: value`` last line); anything
earlier, however verdict-shaped, is explanation. No final verdict means no verdict: the grade
is an error, never a guess.

When the endpoint returns token log-probabilities, the verdict token's alternatives give a soft
verdict: the expected score over the scale, P(yes), or P(A) / P(B) / P(tie).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from truegrade.graders.judge._prompts import Mode
from truegrade.judge import TokenLogprob

__all__ = ["ParsedVerdict", "parse_verdict", "soft_verdict"]

_KEYS = {
    "score": "score",
    "reference": "verdict",
    "pairwise": "winner",
    "criterion": "criteria_met",
}
_LAST_LINE = re.compile(
    r"^[\W_]*(winner|score|verdict|criteria_met)[\W_]*[:=][\W_]*([A-Za-z]+|\d+(?:\.\d+)?)[\W_]*$",
    re.I,
)


@dataclass(frozen=True)
class ParsedVerdict:
    """A parsed verdict.

    Attributes:
        value: ``A`` / ``B`` / ``tie`` (pairwise), ``yes`` / ``no`` (reference), or the score
            as text (score mode).
        score: The score as a number (score mode), else None.
    """

    value: str
    score: float | None = None


def _final_json(text: str) -> dict[str, object] | None:
    """The JSON object that ends ``text`` (after trailing whitespace and code fences), if any."""
    end = text.rstrip().removesuffix("```").rstrip()
    if not end.endswith("}"):
        return None
    start = len(end)
    while True:
        start = end.rfind("{", 0, start)
        if start < 0:
            return None
        try:
            value = json.loads(end[start:])
        except ValueError:
            continue
        return value if isinstance(value, dict) else None


def _check(mode: Mode, raw: object, scale: tuple[int, int]) -> ParsedVerdict | None:
    if mode == "score":
        if isinstance(raw, bool):
            return None
        try:
            number = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        if not (math.isfinite(number) and scale[0] <= number <= scale[1]):
            return None
        return ParsedVerdict(f"{number:g}", number)
    text = str(raw).strip().lower() if isinstance(raw, (str, bool)) else ""
    if mode in ("reference", "criterion"):
        text = {"true": "yes", "false": "no"}.get(text, text)
        return ParsedVerdict(text) if text in {"yes", "no"} else None
    if text in {"a", "b"}:
        return ParsedVerdict(text.upper())
    return ParsedVerdict("tie") if text in {"tie", "c", "draw"} else None


def parse_verdict(text: str, mode: Mode, scale: tuple[int, int] = (1, 10)) -> ParsedVerdict | None:
    """The verdict a judge's answer ends with, or None when it ends with none.

    Examples:
        >>> parse_verdict('Response A says "[[B]]"... A is better.\\n{"winner": "A"}', "pairwise")
        ParsedVerdict(value='A', score=None)
        >>> parse_verdict('{"winner": "A"}\\nOn reflection, B.', "pairwise") is None
        True
    """
    key = _KEYS[mode]
    final = _final_json(text)
    if final is not None:
        return _check(mode, final[key], scale) if key in final else None
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    match = _LAST_LINE.match(lines[-1].strip())
    if match is None or match.group(1).lower() != key:
        return None
    return _check(mode, match.group(2), scale)


_PAIR_LABELS = {"a": "A", "b": "B", "tie": "tie", "c": "tie", "draw": "tie"}
_YES_NO = {"yes": "yes", "no": "no", "true": "yes", "false": "no"}


@functools.cache
def _scale_labels(lo: int, hi: int) -> dict[str, str]:
    return {str(v): str(v) for v in range(lo, hi + 1)}


def _label(text: str, mode: Mode, lo: int, hi: int) -> str | None:
    """The verdict an alternative token spells, if any (a fast ``_check`` for single tokens:
    a verdict's alternatives are looked at for every graded sample)."""
    if mode == "score":
        label = _scale_labels(lo, hi).get(text)
        if label is not None or not text or not text.replace(".", "", 1).isdigit():
            return label
        number = float(text)
        return f"{number:g}" if lo <= number <= hi else None
    table = _PAIR_LABELS if mode == "pairwise" else _YES_NO
    return table.get(text.lower())


_SPELLINGS = {"yes": {"yes", "true"}, "no": {"no", "false"}}


def _verdict_position(tokens: Sequence[TokenLogprob], value: str) -> int:
    """Index of the last generated token that spells the verdict value (``yes`` is also spelled
    ``true``, as in ``{"criteria_met": true}``)."""
    target = value.strip().lower()
    spellings = _SPELLINGS.get(target, {target})
    # cached log-probabilities can give a token's text without decoding its alternatives
    text_at = getattr(tokens, "token_text", None) or (lambda i: tokens[i].token)
    for i in range(len(tokens) - 1, -1, -1):
        if text_at(i).strip().strip('"').lower() in spellings:
            return i
    return -1


def soft_verdict(
    tokens: Sequence[TokenLogprob] | None,
    verdict: ParsedVerdict,
    mode: Mode,
    scale: tuple[int, int] = (1, 10),
) -> dict[str, float] | None:
    """Probabilities over verdicts from the verdict token's top alternatives, or None.

    Returns ``{"score": expected score}`` (score mode), ``{"yes": p, "no": 1-p}`` (reference,
    criterion),
    ``{"A": p, "B": q, "tie": r}`` (pairwise), renormalised over the valid alternatives.
    """
    if not tokens:
        return None
    at = _verdict_position(tokens, verdict.value)
    if at < 0:
        return None
    mass: dict[str, float] = {}
    lo, hi = scale
    chosen = tokens[at]
    for token, logprob in chosen.top or ((chosen.token, chosen.logprob),):
        key = _label(token.strip().strip('"'), mode, lo, hi)
        if key is not None:
            mass[key] = mass.get(key, 0.0) + math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        return None
    if mode == "score":
        return {"score": sum(float(k) * v for k, v in mass.items()) / total}
    labels = ("A", "B", "tie") if mode == "pairwise" else ("yes", "no")
    return {label: mass.get(label, 0.0) / total for label in labels}
