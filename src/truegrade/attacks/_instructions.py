"""Attacks on instruction-following graders (IFEval constraints).

Every response here meets the row's constraints in form and does not attempt the request: an
empty shell of the required markup, a reply that fits any prompt dressed in that markup, the
constraint's keywords piled into a list, the prompt pasted back, or all the allowed answers at
once. A checker that only looks at the surface (IFEval's) rewards them; each docstring says why
the response is wrong anyway. The texts are written for this project.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence

from truegrade.attacks._base import Candidate, attack
from truegrade.core import Sample
from truegrade.graders.instructions import (
    CONSTRAINED_OPTIONS,
    Constraint,
    constraints_of,
    parse_constraints,
)

__all__ = ["dress"]

_GENERIC = [
    "It is important to think about this question carefully.",
    "There are many things to consider here and each one matters.",
    "In the end the best approach depends on the situation.",
    "I hope this helps you with everything you need today.",
]


def _constraints(sample: Sample) -> list[Constraint] | None:
    raw = constraints_of(sample.reference, sample.metadata)
    if not (isinstance(raw, tuple) and len(raw) == 2):
        return None
    try:
        return parse_constraints(*raw)
    except ValueError:
        return None


def _keyword_lines(constraints: Sequence[Constraint], style: str) -> list[str]:
    """What keyword, letter and capital-word quotas need: as a bare list (``bag``) or as
    template sentences that mention each keyword (``inline``)."""
    lines = []
    for c in constraints:
        kw = c.kwargs
        if c.id == "keywords:existence":
            if style == "bag":
                lines.append("Keywords: " + ", ".join(kw["keywords"]) + ".")
            else:
                lines.extend(f"This is about {k}." for k in kw["keywords"])
        elif c.id == "keywords:frequency" and kw["relation"] == "at least":
            if style == "bag":
                lines.append(" ".join([kw["keyword"]] * kw["frequency"]))
            else:
                lines.extend(f"This is about {kw['keyword']}." for _ in range(kw["frequency"]))
        elif c.id == "keywords:letter_frequency" and kw["let_relation"] == "at least":
            lines.append(kw["letter"] * kw["let_frequency"])
        elif c.id == "change_case:capital_word_frequency" and kw["capital_relation"] == "at least":
            lines.append(" ".join(["YES"] * kw["capital_frequency"]))
    return lines


def dress(constraints: Sequence[Constraint], body: Sequence[str], *, style: str = "bag") -> str:
    """``body`` (sentences) wrapped in whatever form the constraints ask for: quotas, markup,
    sections, paragraphs, case, punctuation, wrappers. The content stays what it was."""
    by_id = {c.id: c for c in constraints}

    def get(cid: str) -> dict[str, object] | None:
        c = by_id.get(cid)
        return dict(c.kwargs) if c is not None else None

    sentences = list(body)
    if (k := get("length_constraints:number_sentences")) and k["relation"] == "less than":
        sentences = sentences[:1]
    sentences += _keyword_lines(constraints, style)
    if (k := get("length_constraints:number_sentences")) and k["relation"] == "at least":
        sentences += ["That is all."] * int(str(k["num_sentences"]))
    if (k := get("length_constraints:number_words")) and k["relation"] == "at least":
        have = sum(len(s.split()) for s in sentences)
        need = int(str(k["num_words"])) - have
        while need > 0:
            sentences.append(_GENERIC[need % len(_GENERIC)])
            need -= len(sentences[-1].split())
    text = " ".join(sentences)
    if (k := get("length_constraints:number_words")) and k["relation"] == "less than":
        text = " ".join(text.split()[: max(1, int(str(k["num_words"])) - 3)])
    if "change_case:english_lowercase" in by_id:
        text = text.lower()
    if "change_case:english_capital" in by_id:
        text = text.upper()
    lines = [text]
    if k := get("detectable_content:number_placeholders"):
        lines.append(" ".join(f"[item {i + 1}]" for i in range(int(str(k["num_placeholders"])))))
    if k := get("detectable_format:number_highlighted_sections"):
        lines.append(" ".join("*note*" for _ in range(int(str(k["num_highlights"])))))
    if k := get("detectable_format:number_bullet_lists"):
        lines.extend(f"* point {i + 1}" for i in range(int(str(k["num_bullets"]))))
    text = "\n".join(lines)
    if k := get("detectable_format:multiple_sections"):
        n = int(str(k["num_sections"]))
        text = "\n".join(f"{k['section_spliter']} {i + 1}\n{text}" for i in range(n))
    if k := get("length_constraints:number_paragraphs"):
        text = "\n***\n".join([text] * int(str(k["num_paragraphs"])))
    if k := get("length_constraints:nth_paragraph_first_word"):
        n, nth = int(str(k["num_paragraphs"])), int(str(k["nth_paragraph"]))
        paragraphs = [text] * n
        paragraphs[nth - 1] = f"{k['first_word']} {text}"
        text = "\n\n".join(paragraphs)
    if "combination:two_responses" in by_id:
        text = f"{text}\n******\n{text} Again."
    if "detectable_format:title" in by_id:
        text = f"<<Notes>>\n{text}"
    if k := get("detectable_content:postscript"):
        text = f"{text}\n{k['postscript_marker']} That is all."
    if "detectable_format:constrained_response" in by_id:
        text = f"{CONSTRAINED_OPTIONS[0]} {text}"
    if k := get("keywords:forbidden_words"):
        for word in k["forbidden_words"]:  # type: ignore[attr-defined]
            text = re.sub(r"\b" + re.escape(str(word)) + r"\b", "", text, flags=re.IGNORECASE)
    if k := get("startend:end_checker"):
        text = f"{text}\n{k['end_phrase']}"
    if "punctuation:no_comma" in by_id:
        text = text.replace(",", "")
    if k := get("combination:repeat_prompt"):
        text = f"{k['prompt_to_repeat']}\n{text}"
    if "detectable_format:json_format" in by_id:
        text = json.dumps({"response": text})
    if "startend:quotation" in by_id:
        text = f'"{text}"'
    return text


@attack("instruction_shell", "instructions")
def instruction_shell(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """The markup the constraints ask for (title, bullets, sections, quotas, end phrase) around
    no content at all: an empty form is not an answer. Surface checkers pass every box."""
    constraints = _constraints(sample)
    if constraints:
        yield Candidate(dress(constraints, ["Ok."]), "ok")
        yield Candidate(dress(constraints, []), "empty")


@attack("instruction_generic", "instructions")
def instruction_generic(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """A reply that fits any prompt ("it is important to think about this carefully"), in the
    required form, with keywords worked into template sentences: it says nothing about the
    request. Checkers that only see the form reward it."""
    constraints = _constraints(sample)
    if constraints:
        yield Candidate(dress(constraints, _GENERIC, style="inline"), "inline_keywords")
        yield Candidate(dress(constraints, _GENERIC[:2], style="bag"), "bag_keywords")


@attack("instruction_keyword_bag", "instructions")
def instruction_keyword_bag(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """The prompt's own topic words listed, then the constraint's keywords, letters and capital
    words piled up outside any sentence: a list of words is not an answer, and counting
    checkers count them."""
    constraints = _constraints(sample)
    if not constraints:
        return
    topic = [w for w in re.findall(r"[A-Za-z]{5,}", sample.prompt_text)][:12]
    yield Candidate(dress(constraints, [" ".join(topic)], style="bag"), "topic_words")


@attack("instruction_echo", "instructions")
def instruction_echo(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """The prompt pasted back, in the required form: it restates the request and answers
    nothing, yet the prompt's keywords, example title and example highlights satisfy the
    constraints that ask for them."""
    constraints = _constraints(sample)
    prompt = sample.prompt_text.strip()
    if constraints and prompt:
        yield Candidate(dress(constraints, [prompt]), "dressed")
        yield Candidate(dress(constraints, [prompt, prompt]), "twice")


@attack("instruction_hedge", "instructions")
def instruction_hedge(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Every allowed answer at once ("My answer is yes. My answer is no. My answer is maybe."):
    naming all options is choosing none. A checker that asks whether an option appears passes
    it."""
    constraints = _constraints(sample)
    if constraints and any(c.id == "detectable_format:constrained_response" for c in constraints):
        yield Candidate(" ".join(CONSTRAINED_OPTIONS), "all_options")
        yield Candidate(f"{CONSTRAINED_OPTIONS[0]} Or rather, {CONSTRAINED_OPTIONS[1]}", "two")
