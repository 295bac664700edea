"""Spotting text aimed at the judge instead of the user: forged verdicts, instructions to the
grader, and attempts to break out of the judging prompt.

A response that carries the judge's own verdict syntax (``[[10]]``, ``{"winner": "A"}``,
``GRADE: C``), talks to the evaluator ("ignore the above", "give this full marks"), or imitates
a prompt's structure (chat role tokens, ``</response>``, ``## Model Outputs``) has no reason to
do so when it is answering a user: it is written for the grader. Such responses are flagged
``injection_suspected`` and, unless ``reject_injections`` is off, failed without a judge call;
with it off the judge sees them only inside fences it was told are data.

The patterns are anchored on structure (a verdict alone on its line, a tag, an address to the
evaluator) rather than on words, so ordinary answers that mention scores, ratings or judges are
not flagged: on the 3,216 honest answers of the AlpacaEval annotations the false-flag rate is
measured by the test suite (a flagged response is rejected unjudged by default, so a false flag
is a false reject). Plain regular expressions, linear in the text's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["InjectionFinding", "find_injections"]


@dataclass(frozen=True)
class InjectionFinding:
    """One suspicious span.

    Attributes:
        kind: ``verdict_syntax``, ``instruction_to_grader`` or ``template_break``.
        text: The matched text (shortened).
        start: Where it starts in the response.
    """

    kind: str
    text: str
    start: int

    def __str__(self) -> str:
        return f"{self.kind}: {self.text!r}"


_GRADER = r"(?:evaluator|grader|judge|assessor|rater|annotator|scorer|reviewer)s?"
# "dear judges" opens many a speech a user asks for; only grading roles count in a greeting
_GRADING_ROLE = r"(?:evaluator|grader|assessor|rater|annotator|scorer)s?"
_SCORE_NOUN = r"(?:score|marks?|points|rating|grade|verdict)"
_CORRESPONDENCE = (
    r"(?:e-?mail|message|letter|note|memo|post|text|voicemail|invoice|reply|draft|version)s?\b"
)

_Triggers = tuple[tuple[str, ...], ...]

_SCORES = ("score", "mark", "point", "rating", "grade", "verdict")
_ROLES = ("evaluator", "grader", "judge", "assessor", "rater", "annotator", "scorer", "reviewer")

# (kind, pattern, triggers): a pattern runs only when, for every group of its triggers, one of
# them occurs in the lower-cased text. Substring tests are a C loop, while most patterns begin
# with a word boundary and an alternation that the regex engine tries at every position: the
# triggers turn a scan of a long answer from hundreds of microseconds into a few.
_PATTERNS: list[tuple[str, re.Pattern[str], _Triggers]] = [
    # -- forged verdicts ---------------------------------------------------------------------
    (
        "verdict_syntax",
        re.compile(r"\[\[\s*(?:\d{1,3}(?:\.\d+)?|[ABC]|tie)\s*\]\]", re.I),
        (("[[",),),
    ),
    (
        "verdict_syntax",
        re.compile(
            r"^[ \t>*_#-]*(?:final\s+)?(?:rating|score|grade|verdict|result|judgement|judgment)"
            r"\s*[:=]\s*(?:\[\[?\s*)?(?:\d{1,3}(?:\.\d+)?(?:\s*/\s*\d{1,3})?|[A-F]|pass|fail|"
            r"yes|no|correct|incorrect)\s*(?:\]\]?)?[ \t*_.]*$",
            re.I | re.M,
        ),
        (("rating", "score", "grade", "verdict", "result", "judgement", "judgment"), (":", "=")),
    ),
    (
        "verdict_syntax",
        re.compile(
            r"[\"'](?:criteria_met|winner|verdict|passed|is_correct|preference|"
            r"better_response)[\"']\s*:\s*(?:true|false|[\"'][^\"'\n]{0,12}[\"']|\d)",
            re.I,
        ),
        (
            (
                "criteria_met",
                "winner",
                "verdict",
                "passed",
                "is_correct",
                "preference",
                "better_resp",
            ),
        ),
    ),
    (
        "verdict_syntax",
        re.compile(r"\bGRADE\s*:\s*[CIP]\b"),
        (("grade",),),
    ),
    (
        "verdict_syntax",
        re.compile(
            r"\bfinal verdict\s*(?:is)?\s*:?\s*(?:\[\[|response [AB]\b|output \(?[ab]\)?)", re.I
        ),
        (("final verdict",),),
    ),
    # -- instructions addressed to the grader ------------------------------------------------
    (
        "instruction_to_grader",
        re.compile(
            # advice says "never ignore the rubric"; "please ignore the previous email" is what an
            # honest drafted message says
            r"(?<!\bnever\s)(?<!\bnot\s)(?<!n't\s)"
            r"\b(?:ignore|disregard)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+)?"
            r"(?:(?:previous|prior|above|preceding|earlier|foregoing|former)\b"
            rf"(?!\s+{_CORRESPONDENCE})"
            r"|rubric\b|(?:grading|scoring|evaluation|judging|marking)\s+"
            r"(?:criteria|instructions|rules|guidelines|rubric|scheme)\b)",
            re.I,
        ),
        (("ignore", "disregard"),),
    ),
    (
        "instruction_to_grader",
        re.compile(
            rf"\b(?:note|message|instructions?|attention)\s+(?:to|for)\s+(?:the\s+|any\s+)?{_GRADER}"
            rf"|\b(?:dear|hey|hello)\s+{_GRADING_ROLE}\b"
            rf"|(?:^|[\[(<{{!\-]\s*){_GRADER}\s*:",
            re.I | re.M,
        ),
        (_ROLES,),
    ),
    (
        "instruction_to_grader",
        re.compile(
            r"\b(?:give|award|assign|grant|output|return|rate|score|mark)\b[^.\n]{0,50}?"
            rf"\b(?:full|maximum|max|highest(?: possible)?|perfect|top)\s+{_SCORE_NOUN}",
            re.I,
        ),
        (("full", "max", "highest", "perfect", "top"), _SCORES),
    ),
    (
        "instruction_to_grader",
        re.compile(
            rf"\b(?:this|the above|my)\s+(?:answer|response|output|solution)\s+"
            rf"(?:is|should be (?:rated|scored|judged)|deserves)\s+(?:as\s+)?"
            rf"(?:flawless|perfect|fully correct|correct and complete|a 10\b|full {_SCORE_NOUN}|"
            rf"the (?:best|winner))",
            re.I,
        ),
        (
            (
                "flawless",
                "perfect",
                "fully correct",
                "correct and complete",
                "a 10",
                "full",
                "the best",
                "the winner",
            ),
            ("answer", "response", "output", "solution"),
        ),
    ),
    (
        "instruction_to_grader",
        re.compile(
            r"\bsystem\s+override\b|\bnew\s+(?:grading|scoring|evaluation)\s+(?:rule|instruction)s?\b"
            r"|\b(?:grading|scoring|evaluation)\s+(?:criteria|instructions|rules)\s+(?:above\s+)?"
            r"(?:are|is)\s+(?:outdated|obsolete|void|cancelled|replaced)",
            re.I,
        ),
        (("override", "grading", "scoring", "evaluation"),),
    ),
    # -- breaking out of the prompt ----------------------------------------------------------
    (
        "template_break",
        re.compile(
            r"<\|(?:im_start|im_end|eot_id|start_header_id|end_header_id|endoftext|system|"
            r"user|assistant)\|>|\[/?INST\]|<</?SYS>>|<<<(?:BEGIN|END)\s",
            re.I,
        ),
        (("<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<<<begin", "<<<end"),),
    ),
    (
        "template_break",
        re.compile(
            r"</?(?:response|responses|answer|output|instruction|instructions|reference|"
            r"candidate|assistant_response|model_output)(?:_[ab12])?>",
            re.I,
        ),
        (("<",),),
    ),
    (
        "template_break",
        re.compile(
            r"^[ \t]*#{1,4}[ \t]*(?:model outputs?|instruction|evaluation|verdict|"
            r"response [ab12]|end of (?:the )?(?:responses?|outputs?|evaluation))\b"
            r"|\bmodel_identifier\b|\[the (?:start|end) of (?:assistant|reference)",
            re.I | re.M,
        ),
        (("#", "model_identifier", "[the start", "[the end"),),
    ),
]


_ALL_TRIGGERS = frozenset(t for _, _, groups in _PATTERNS for group in groups for t in group)


def find_injections(text: str, *, limit: int = 5) -> list[InjectionFinding]:
    """Suspicious spans in ``text``, at most ``limit`` of them, in order of appearance."""
    found: list[InjectionFinding] = []
    lowered = text.lower()
    present = {t for t in _ALL_TRIGGERS if t in lowered}
    for kind, pattern, triggers in _PATTERNS:
        if any(present.isdisjoint(group) for group in triggers):
            continue
        match = pattern.search(text)
        if match is not None:
            snippet = " ".join(match.group(0).split())[:60]
            found.append(InjectionFinding(kind, snippet, match.start()))
    found.sort(key=lambda f: f.start)
    return found[:limit]
