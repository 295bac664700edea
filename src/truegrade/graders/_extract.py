"""Finding the final answer in a free-form response, without being talked around.

Every pattern here runs in linear time on hostile text (no nested or adjacent overlapping
quantifiers), so the simple graders can run it inline. The extractor returns *all* final-answer
statements, never "the last one": a response that states two different answers is hedging, and
the caller fails it.

Statements, by strength:

1. explicit: ``\\boxed{...}`` / ``\\fbox{...}``, a line starting ``Answer:`` / ``Final answer:``,
   "the final answer is ...", a GSM8K ``#### ...`` line (or ``#### ...`` ending the last line,
   as verl's GSM8K scorer reads it), an ``<answer>...</answer>`` tag (the R1-style format GRPO
   recipes reward; the tag's name is the caller's);
2. phrased: "the (correct) answer is ...", used only when there is no explicit statement;
3. short (only when the caller asks, as ``math`` does): a short response with no statement of
   the kinds above whose one math span (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``) is
   its only mathematics and whose words conclude ("Therefore $x \\ge 5$ is the solution.", not
   a question or an instruction echoed from the prompt), or that is one number with an
   optional currency, unit or percent word ("28 percent"). A digit outside the span, or a second
   span, and there is no short statement: then the response has no final answer rather than a
   guessed one, so a hedge cannot hide in the prose.

With the same option, ``Final Answer:`` counts in the middle of a line too (a statement run on
after the solution), and an ``Answer:`` statement written as a sentence states what follows its
last "is" ("Final Answer: The largest $n$ is 34." states 34).

GSM8K's calculator marks (``<<48/2=24>>``, the working repeated for a calculator) are removed
before anything is read, from responses that copy GSM8K's style as from its answers; and a
GSM8K answer used as a key is read by ``truegrade.core.gsm8k_final_answer``: what its final
``####`` line states.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from truegrade.core import GSM8K_FINAL_LINE, without_calculator_marks

__all__ = [
    "FinalAnswers",
    "boxed_contents",
    "boxed_spans",
    "check_pattern",
    "clean_answer",
    "final_answers",
    "pattern_matches",
    "short_answer",
    "tag_contents",
]

_BOX_START = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
_BRACE = re.compile(r"[{}]")
_ANSWER_LINE = re.compile(
    r"(?im)^[ \t>*_#]*(?:the[ \t]+)?(?:(?:final|correct)[ \t]+)?answer(?:[ \t*_]*is)?[ \t*_]*"
    r"[:\uff1a]([^\n]*)$"
)
# a phrase's answer runs to the end of its sentence, so two phrases on one line are two answers
_TO_SENTENCE_END = r"([^\n]*?)(?=\.(?:\s|$)|\n|$)"
_PHRASE = re.compile(
    r"(?i)\bthe[ \t]+(?:(?:final|correct|right|best)[ \t]+)?answer[ \t]+is\b[ \t:*]*"
    + _TO_SENTENCE_END
)
_FINAL_PHRASE = re.compile(r"(?i)\bfinal[ \t]+answer[ \t]+is\b[ \t:*]*" + _TO_SENTENCE_END)
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
MAX_STATEMENTS = 64
MAX_SHORT_RESPONSE = 300
_SPAN_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_LONE_NUMBER = re.compile(
    r"[ \t]*(\\?\$)?[ \t]*([-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+))[ \t]*"
    r"(\\?%|\\?\$|[a-zA-Z]{1,12}(?:[ \t]+[a-zA-Z]{1,12})?)?[ \t]*\.?[ \t]*"
)
# a short response states an answer only in a concluding sentence, never in a question or an
# instruction copied from the prompt
_CONCLUSION = re.compile(
    r"(?i)\b(?:answer|solution|result|therefore|thus|hence|so|is|are|equals?|gives?"
    r"|(?:we|i)[ \t]+(?:get|find|have|obtain|found|got))\b|:|="
)
_PROMPT_START = re.compile(
    r"(?i)[ \t*_]*(?:compute|find|simplify|evaluate|express|determine|solve|calculate|let"
    r"|suppose|given|if|show|prove|what|which|how|write|factor|expand|convert|round|estimate"
    r"|rationalize|rewrite|list|enter|give|state|sketch)\b"
)
_ONLY_UNIT_AFTER = re.compile(r"[ \t]*(?:\\?%|percent|pct)?[ \t.]*", re.IGNORECASE)
# "... = 120. Final Answer: The volume is 120." (a statement run on after the solution)
_INLINE_FINAL = re.compile(r"(?i)(?<![a-z])final[ \t]+answer[ \t*_]*[:\uff1a]([^\n]*)")
_PERCENT_AFTER = re.compile(r"[ \t]*(?:\\?%|percent\b|pct\b)", re.IGNORECASE)
_COPULA = re.compile(r"(?i)(?<![a-z])is[ \t]+")
_PROSE_WORD = re.compile(r"[a-zA-Z]{3,}")


def boxed_contents(text: str, *, limit: int = MAX_STATEMENTS) -> list[str]:
    """Contents of each top-level ``\\boxed{...}`` / ``\\fbox{...}``, brace-balanced, in order.

    Boxes nested inside a box are part of the outer content. An unclosed box ends the scan.
    At most ``limit`` boxes are returned (more than that is itself a hedge).
    """
    return [content for _, _, content in boxed_spans(text, limit=limit)]


def boxed_spans(text: str, *, limit: int = MAX_STATEMENTS) -> list[tuple[int, int, str]]:
    """``(start, end, content)`` of each top-level box, as ``boxed_contents`` finds them."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    while len(out) < limit:
        match = _BOX_START.search(text, pos)
        if match is None:
            break
        depth = 1
        for brace in _BRACE.finditer(text, match.end()):
            depth += 1 if brace.group() == "{" else -1
            if depth == 0:
                out.append((match.start(), brace.end(), text[match.end() : brace.start()]))
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


def tag_contents(text: str, tag: str, *, limit: int = MAX_STATEMENTS) -> list[str]:
    """What each ``<tag>...</tag>`` of ``text`` holds, in order (a tag never closed holds
    nothing). Found with ``str.find``, so linear on hostile text."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    out: list[str] = []
    at = 0
    while len(out) < limit:
        start = text.find(opening, at)
        if start < 0:
            break
        end = text.find(closing, start + len(opening))
        if end < 0:
            break
        out.append(text[start + len(opening) : end])
        at = end + len(closing)
    return out


def _last_line_hashes(text: str) -> str | None:
    """What follows the last ``####`` of the last non-empty line, when it is not at the line's
    start (verl's GSM8K scorer reads ``Let me think... #### 72``); None otherwise."""
    stripped = text.rstrip()
    line = stripped[stripped.rfind("\n") + 1 :]
    at = line.rfind("####")
    if at <= 0 or not line[:at].strip():
        return None
    return line[at + 4 :].strip()


def final_answers(
    text: str,
    *,
    boxes: bool = True,
    lines: bool = True,
    limit: int = MAX_STATEMENTS,
    short: bool = False,
    tags: tuple[str, ...] = ("answer",),
) -> FinalAnswers:
    """All final-answer statements of the strongest kind present (see the module docstring).

    Args:
        text: The response.
        boxes: Count ``\\boxed{}`` / ``\\fbox{}`` contents.
        lines: Count ``Answer:`` / ``Final answer:`` lines, "the final answer is ..." and
            ``####`` lines.
        limit: At most this many statements (more is itself a hedge; callers that must see
            every box pass a large limit).
        short: Also read short responses and sentence-like ``Answer:`` lines (see the module
            docstring); only with ``lines``.
        tags: Tags whose contents state an answer (``<answer>18</answer>``); only with
            ``lines``. A tag holding a box states the box; one holding a solution states what
            the solution states.
    """
    text = without_calculator_marks(text)
    explicit: list[str] = (
        [clean_answer(b) for b in boxed_contents(text, limit=limit)] if boxes else []
    )
    for tag in tags if lines and "<" in text else ():
        for held in tag_contents(text, tag, limit=limit):
            if boxed_contents(held, limit=1):
                if not boxes:
                    explicit.extend(clean_answer(b) for b in boxed_contents(held, limit=limit))
                continue  # the box is counted with the others
            if "\n" in held.strip() or len(held) > MAX_SHORT_RESPONSE:
                explicit.extend(final_answers(held, boxes=boxes, limit=limit, tags=()).statements)
            else:
                explicit.append(_after_copula(clean_answer(held)))
    # every line pattern but the hashes needs the word "answer": one cheap scan for it spares the
    # case-insensitive scans on most responses (casefolded as the patterns' matching is)
    worded = lines and "answer" in text.casefold()
    if lines:
        patterns = ((_ANSWER_LINE, _FINAL_PHRASE) if worded else ()) + (
            (GSM8K_FINAL_LINE,) if "####" in text else ()
        )
        patterns += (_INLINE_FINAL,) if short and worded else ()
        for pattern in patterns:
            for match in pattern.finditer(text):
                if len(explicit) >= limit:
                    break
                if pattern is _INLINE_FINAL and not _mid_line(text, match.start()):
                    continue  # at the start of its line: an answer line, counted above
                body = match.group(1)
                inner = boxed_contents(body, limit=limit)
                if inner:
                    if not boxes:  # "Answer: \boxed{5}" is one statement: the box
                        explicit.extend(clean_answer(b) for b in inner)
                    continue
                if pattern is not _FINAL_PHRASE and _FINAL_PHRASE.search(body):
                    continue  # "Final Answer: The final answer is 5": counted by the phrase
                statement = clean_answer(_first_sentence(body))
                if short and pattern in (_ANSWER_LINE, _INLINE_FINAL):
                    statement = _after_copula(statement)
                explicit.append(statement)
    if lines and "####" in text and not GSM8K_FINAL_LINE.search(text):
        trailing = _last_line_hashes(text)
        if trailing:
            explicit.append(clean_answer(trailing))
    explicit = [e for e in explicit if e]
    if explicit:
        return FinalAnswers(tuple(explicit), "explicit")
    if not lines:
        return FinalAnswers((), "none")
    phrased = [
        clean_answer(_first_sentence(m.group(1)))
        for _, m in zip(range(limit), _PHRASE.finditer(text) if worded else (), strict=False)
    ]
    phrased = [p for p in phrased if p]
    if phrased:
        return FinalAnswers(tuple(phrased), "phrased")
    found = short_answer(text) if short else None
    if found:
        return FinalAnswers((found,), "short")
    return FinalAnswers((), "none")


def _mid_line(text: str, position: int) -> bool:
    """Text other than markdown stands before ``position`` on its line."""
    start = text.rfind("\n", max(0, position - MAX_SHORT_RESPONSE), position) + 1
    return bool(text[start:position].strip(" \t>*_#")) or position - start >= MAX_SHORT_RESPONSE


def _after_copula(statement: str) -> str:
    """``The largest $n$ is 34`` states 34; a statement that is not a sentence is unchanged."""
    copulas = list(_COPULA.finditer(statement))
    if not copulas:
        return statement
    last = copulas[-1]  # "The value that is asked for is 5": the last "is"
    subject, value = statement[: last.start()], statement[last.end() :]
    if "=" in subject or not _PROSE_WORD.search(subject) or not value.strip():
        return statement
    return clean_answer(value)


def _math_spans(text: str) -> list[tuple[int, int, str]] | None:
    """``(start, end, content)`` of each math span, or None when a delimiter is left open.
    An inline span (``$...$``, ``\\(...\\)``) may not cross a line; an escaped ``\\$`` is a
    dollar sign."""
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(text):
        for left, right in _SPAN_DELIMITERS:
            if text.startswith(left, i) and not (left == "$" and i > 0 and text[i - 1] == "\\"):
                end = i + len(left)
                while True:
                    end = text.find(right, end)
                    if end < 0 or right != "$" or text[end - 1] != "\\":
                        break
                    end += 1  # \$ inside a span is a dollar sign
                if end < 0:
                    return None
                content = text[i + len(left) : end]
                if left in ("$", "\\(") and "\n" in content:
                    return None
                spans.append((i, end + len(right), content.strip()))
                i = end + len(right)
                break
        else:
            i += 1
    return spans


def short_answer(text: str) -> str | None:
    """The one answer a short response states without a statement (the module docstring's
    third level), or None."""
    body = text.strip()
    if not body or len(body) > MAX_SHORT_RESPONSE:
        return None
    lone = "\n" not in body and len(re.findall(r"(?<!\\)\$", body)) < 2  # "$9$" is a span
    match = _LONE_NUMBER.fullmatch(body) if lone else None
    if match is None:
        spans = _math_spans(body)
        if spans is None or len(spans) != 1:
            return None
        start, end, content = spans[0]
        outside = body[:start] + " " + body[end:]
        if re.search(r"\d", outside) or not content or "?" in body:
            return None
        if _PROMPT_START.match(body) or not (
            _CONCLUSION.search(outside) or _ONLY_UNIT_AFTER.fullmatch(outside)
        ):
            return None  # "Compute $\frac12+\frac13$." echoes a question; it answers nothing
        percent = _PERCENT_AFTER.match(body[end:])
        return clean_answer(content) + (" \\%" if percent else "")
    currency, number, suffix = match.groups()
    if suffix and suffix.lstrip("\\") == "$":
        currency, suffix = "$", None
    return ("\\$" if currency else "") + number + (f" {suffix}" if suffix else "")


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
