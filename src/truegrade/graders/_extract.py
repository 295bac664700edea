"""Finding the final answer in a free-form response, without being talked around.

Every pattern here runs in linear time on hostile text (no nested or adjacent overlapping
quantifiers), so the simple graders can run it inline. The extractor returns *all* final-answer
statements, never "the last one": a response that states two different answers is hedging, and
the caller fails it.

Statements, by strength:

1. explicit: ``\\boxed{...}`` / ``\\fbox{...}``, a line starting ``Answer:`` / ``Final answer:``,
   "the final answer is ...", a GSM8K ``#### ...`` line;
2. phrased: "the (correct) answer is ...", used only when there is no explicit statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "FinalAnswers",
    "boxed_contents",
    "check_pattern",
    "clean_answer",
    "final_answers",
    "pattern_matches",
]

_BOX_START = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
_BRACE = re.compile(r"[{}]")
_ANSWER_LINE = re.compile(
    r"(?im)^[ \t>*_#]*(?:the[ \t]+)?(?:(?:final|correct)[ \t]+)?answer(?:[ \t*_]*is)?[ \t*_]*"
    r"[:\uff1a]([^\n]*)$"
)
_HASHES = re.compile(r"(?m)^[ \t]*####[ \t]*([^\n]*)$")
# a phrase's answer runs to the end of its sentence, so two phrases on one line are two answers
_TO_SENTENCE_END = r"([^\n]*?)(?=\.(?:\s|$)|\n|$)"
_PHRASE = re.compile(
    r"(?i)\bthe[ \t]+(?:(?:final|correct|right|best)[ \t]+)?answer[ \t]+is\b[ \t:*]*"
    + _TO_SENTENCE_END
)
_FINAL_PHRASE = re.compile(r"(?i)\bfinal[ \t]+answer[ \t]+is\b[ \t:*]*" + _TO_SENTENCE_END)
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
MAX_STATEMENTS = 64


def boxed_contents(text: str, *, limit: int = MAX_STATEMENTS) -> list[str]:
    """Contents of each top-level ``\\boxed{...}`` / ``\\fbox{...}``, brace-balanced, in order.

    Boxes nested inside a box are part of the outer content. An unclosed box ends the scan.
    At most ``limit`` boxes are returned (more than that is itself a hedge).
    """
    out: list[str] = []
    pos = 0
    while len(out) < limit:
        match = _BOX_START.search(text, pos)
        if match is None:
            break
        depth = 1
        for brace in _BRACE.finditer(text, match.end()):
            depth += 1 if brace.group() == "{" else -1
            if depth == 0:
                out.append(text[match.end() : brace.start()])
                pos = brace.end()
                break
        else:
            break
    return out


_PLACEHOLDER = re.compile(r"\\[hv]?phantom\{[^{}]*\}|\\q?quad\b|(?<!\\)\\[ ,;:!]|~")


def clean_answer(text: str) -> str:
    """Strip the wrapping people put around an answer: markdown, ``$...$``, a final period.

    A box holding only spacing (``\\boxed{\\phantom{2}}``, the blank in a fill-in question that
    a response copies) cleans to the empty string, so it is not read as an answer.
    """
    answer = text.strip()
    if not _PLACEHOLDER.sub("", answer).strip():
        return ""
    for _ in range(3):
        before = answer
        answer = answer.strip().strip("*_").strip()
        if len(answer) >= 2 and answer[0] == "$" and answer[-1] == "$":
            answer = answer.strip("$").strip()
        if answer.startswith("\\(") and answer.endswith("\\)"):
            answer = answer[2:-2].strip()
        if answer.startswith("\\[") and answer.endswith("\\]"):
            answer = answer[2:-2].strip()
        if answer.endswith(".") and not answer.endswith(".."):
            answer = answer[:-1].rstrip()
        if answer == before:
            break
    return answer


@dataclass(frozen=True)
class FinalAnswers:
    """What a response states as its final answer.

    Attributes:
        statements: Every final-answer statement at the strongest level present, cleaned.
        level: ``explicit``, ``phrased`` or ``none``.
    """

    statements: tuple[str, ...]
    level: str


def final_answers(
    text: str, *, boxes: bool = True, lines: bool = True, limit: int = MAX_STATEMENTS
) -> FinalAnswers:
    """All final-answer statements of the strongest kind present (see the module docstring).

    Args:
        text: The response.
        boxes: Count ``\\boxed{}`` / ``\\fbox{}`` contents.
        lines: Count ``Answer:`` / ``Final answer:`` lines, "the final answer is ..." and
            ``####`` lines.
        limit: At most this many statements (more is itself a hedge; callers that must see
            every box pass a large limit).
    """
    explicit: list[str] = (
        [clean_answer(b) for b in boxed_contents(text, limit=limit)] if boxes else []
    )
    if lines:
        for pattern in (_ANSWER_LINE, _FINAL_PHRASE, _HASHES):
            for match in pattern.finditer(text):
                if len(explicit) >= limit:
                    break
                body = match.group(1)
                inner = boxed_contents(body, limit=limit)
                if inner:
                    if not boxes:  # "Answer: \boxed{5}" is one statement: the box
                        explicit.extend(clean_answer(b) for b in inner)
                    continue
                if pattern is not _FINAL_PHRASE and _FINAL_PHRASE.search(body):
                    continue  # "Final Answer: The final answer is 5": counted by the phrase
                explicit.append(clean_answer(_first_sentence(body)))
    explicit = [e for e in explicit if e]
    if explicit:
        return FinalAnswers(tuple(explicit), "explicit")
    if not lines:
        return FinalAnswers((), "none")
    phrased = [
        clean_answer(_first_sentence(m.group(1)))
        for _, m in zip(range(limit), _PHRASE.finditer(text), strict=False)
    ]
    phrased = [p for p in phrased if p]
    if phrased:
        return FinalAnswers(tuple(phrased), "phrased")
    return FinalAnswers((), "none")


def _first_sentence(text: str) -> str:
    match = _SENTENCE_END.search(text)
    return text[: match.start()] if match else text


def check_pattern(value: str) -> str:
    """Validate a user's regular expression at spec-load time (a clear error, not a late one)."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    return value


def pattern_matches(pattern: str, text: str) -> list[str]:
    """Every match of a user's extraction pattern: its first group if it has one, else the match.

    User patterns can backtrack without end, so callers run this in killable workers.
    """
    compiled = re.compile(pattern)
    return [m.group(1) if compiled.groups else m.group(0) for m in compiled.finditer(text)]
