"""The IFEval constraint checkers, one function per instruction id, with IFEval's semantics.

Each checker answers one question about a response ("does it contain a comma?", "at least 300
words?") exactly as IFEval's ``instructions.py`` answers it, so a verdict here is a verdict
there. The differences are deliberate and few:

* missing or malformed arguments are an error naming the constraint (IFEval draws random ones);
* keywords, forbidden words, section markers and postscript markers are matched as literal
  text (IFEval pastes them into a regular expression; no IFEval argument contains a character
  that would make the two differ, and a literal cannot be made to backtrack);
* sentences and capital words are counted without NLTK's downloaded data (see ``_text``);
* language detection is seeded, so it is repeatable.

``strict`` and ``loose`` evaluation follow IFEval's ``evaluation_lib``: an empty response follows
nothing; loose also tries the response without its first line, its last line, both, and each of
those with every ``*`` removed, and a constraint is followed if any variant follows it.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from truegrade.graders.instructions._text import (
    LanguageUnknown,
    capital_tokens,
    count_sentences,
    count_words,
    detect_language,
)

__all__ = [
    "CHECKERS",
    "CONSTRAINED_OPTIONS",
    "Checker",
    "Constraint",
    "check",
    "loose_variants",
    "parse_constraints",
]

Mode = Literal["strict", "loose"]

CONSTRAINED_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")
"""The three answers ``detectable_format:constrained_response`` accepts."""

_RELATIONS = ("less than", "at least")


@dataclass(frozen=True)
class Checker:
    """One instruction id.

    Attributes:
        id: The IFEval instruction id (``punctuation:no_comma``).
        params: Argument name -> kind (``int``, ``str``, ``strings``, ``relation``, ``letter``).
        test: ``(response, arguments) -> followed``.
        describe: The constraint in words, for explanations.
    """

    id: str
    params: Mapping[str, str]
    test: Callable[[str, Mapping[str, Any]], bool]
    describe: Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True)
class Constraint:
    """One constraint of a row: an instruction id and its validated arguments.

    Attributes:
        id: The instruction id.
        kwargs: Its arguments, checked and normalised.
        label: Its key in the grade's subscores (the id, ``#2``... for a repeated id).
    """

    id: str
    kwargs: Mapping[str, Any]
    label: str

    @property
    def checker(self) -> Checker:
        return CHECKERS[self.id]

    def describe(self) -> str:
        return self.checker.describe(self.kwargs)


def _compare(count: int, relation: str, threshold: int) -> bool:
    return count < threshold if relation == "less than" else count >= threshold


def _literal(text: str) -> str:
    return re.escape(text)


# -- the checkers, in IFEval's registry order ----------------------------------------------------


def _keywords_existence(value: str, kw: Mapping[str, Any]) -> bool:
    return all(re.search(_literal(k), value, flags=re.IGNORECASE) for k in kw["keywords"])


def _keyword_frequency(value: str, kw: Mapping[str, Any]) -> bool:
    found = len(re.findall(_literal(kw["keyword"]), value, flags=re.IGNORECASE))
    return _compare(found, kw["relation"], kw["frequency"])


def _forbidden_words(value: str, kw: Mapping[str, Any]) -> bool:
    return not any(
        re.search(r"\b" + _literal(w) + r"\b", value, flags=re.IGNORECASE)
        for w in kw["forbidden_words"]
    )


def _letter_frequency(value: str, kw: Mapping[str, Any]) -> bool:
    found = Counter(value.lower())[kw["letter"]]
    return _compare(found, kw["let_relation"], kw["let_frequency"])


def _response_language(value: str, kw: Mapping[str, Any]) -> bool:
    try:
        return bool(detect_language(value) == kw["language"])
    except LanguageUnknown:
        return True  # IFEval: a text with nothing to detect counts as followed


def _number_sentences(value: str, kw: Mapping[str, Any]) -> bool:
    return _compare(count_sentences(value), kw["relation"], kw["num_sentences"])


def _number_paragraphs(value: str, kw: Mapping[str, Any]) -> bool:
    paragraphs = re.split(r"\s?\*\*\*\s?", value)
    count = len(paragraphs)
    for index, paragraph in enumerate(paragraphs):
        if not paragraph.strip():
            if index in (0, len(paragraphs) - 1):
                count -= 1
            else:
                return False
    return bool(count == kw["num_paragraphs"])


def _number_words(value: str, kw: Mapping[str, Any]) -> bool:
    return _compare(count_words(value), kw["relation"], kw["num_words"])


def _nth_paragraph_first_word(value: str, kw: Mapping[str, Any]) -> bool:
    paragraphs = re.split(r"\n\n", value)
    count = sum(1 for p in paragraphs if p.strip())
    nth = kw["nth_paragraph"]
    # IFEval indexes the raw split (empty pieces included) with the count of non-empty ones
    if nth > count:
        return False
    paragraph = paragraphs[nth - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    first = ""
    for letter in word:
        if letter in {".", ",", "?", "!", "'", '"'}:
            break
        first += letter.lower()
    return bool(count == kw["num_paragraphs"] and first == kw["first_word"])


def _number_placeholders(value: str, kw: Mapping[str, Any]) -> bool:
    return _compare(len(re.findall(r"\[.*?\]", value)), "at least", kw["num_placeholders"])


def _postscript(value: str, kw: Mapping[str, Any]) -> bool:
    marker = kw["postscript_marker"]
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + _literal(marker.lower()) + r".*$"
    return bool(re.findall(pattern, value.lower(), flags=re.MULTILINE))


def _number_bullet_lists(value: str, kw: Mapping[str, Any]) -> bool:
    stars = re.findall(r"^\s*\*[^\*].*$", value, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", value, flags=re.MULTILINE)
    return bool(len(stars) + len(dashes) == kw["num_bullets"])


def _constrained_response(value: str, kw: Mapping[str, Any]) -> bool:
    value = value.strip()
    return any(option in value for option in CONSTRAINED_OPTIONS)


def _number_highlighted_sections(value: str, kw: Mapping[str, Any]) -> bool:
    found = sum(1 for h in re.findall(r"\*[^\n\*]*\*", value) if h.strip("*").strip())
    found += sum(
        1
        for h in re.findall(r"\*\*[^\n\*]*\*\*", value)
        if h.removeprefix("**").removesuffix("**").strip()
    )
    return _compare(found, "at least", kw["num_highlights"])


def _multiple_sections(value: str, kw: Mapping[str, Any]) -> bool:
    pattern = r"\s?" + _literal(kw["section_spliter"]) + r"\s?\d+\s?"
    return _compare(len(re.split(pattern, value)) - 1, "at least", kw["num_sections"])


def _json_format(value: str, kw: Mapping[str, Any]) -> bool:
    value = (
        value.strip()
        .removeprefix("```json")
        .removeprefix("```Json")
        .removeprefix("```JSON")
        .removeprefix("```")
        .removesuffix("```")
        .strip()
    )
    try:
        json.loads(value)
    except (ValueError, RecursionError):
        return False
    return True


def _title(value: str, kw: Mapping[str, Any]) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", value))


def _two_responses(value: str, kw: Mapping[str, Any]) -> bool:
    valid = []
    pieces = value.split("******")
    for index, piece in enumerate(pieces):
        if not piece.strip():
            if index not in (0, len(pieces) - 1):
                return False
        else:
            valid.append(piece)
    return len(valid) == 2 and valid[0].strip() != valid[1].strip()


def _repeat_prompt(value: str, kw: Mapping[str, Any]) -> bool:
    return value.strip().lower().startswith(kw["prompt_to_repeat"].strip().lower())


def _end_checker(value: str, kw: Mapping[str, Any]) -> bool:
    return value.strip().strip('"').lower().endswith(kw["end_phrase"].strip().lower())


def _capital_word_frequency(value: str, kw: Mapping[str, Any]) -> bool:
    return _compare(capital_tokens(value), kw["capital_relation"], kw["capital_frequency"])


def _english_capital(value: str, kw: Mapping[str, Any]) -> bool:
    try:
        return value.isupper() and detect_language(value) == "en"
    except LanguageUnknown:
        return True


def _english_lowercase(value: str, kw: Mapping[str, Any]) -> bool:
    try:
        return value.islower() and detect_language(value) == "en"
    except LanguageUnknown:
        return True


def _no_comma(value: str, kw: Mapping[str, Any]) -> bool:
    return "," not in value


def _quotation(value: str, kw: Mapping[str, Any]) -> bool:
    value = value.strip()
    return len(value) > 1 and value[0] == '"' and value[-1] == '"'


def _rel(kw: Mapping[str, Any], relation: str, count: str, what: str) -> str:
    return f"{what} {kw[relation]} {kw[count]} times"


_SPECS: list[
    tuple[str, dict[str, str], Callable[..., bool], Callable[[Mapping[str, Any]], str]]
] = [
    (
        "keywords:existence",
        {"keywords": "strings"},
        _keywords_existence,
        lambda k: f"include the keywords {', '.join(map(repr, k['keywords']))}",
    ),
    (
        "keywords:frequency",
        {"keyword": "str", "frequency": "int", "relation": "relation"},
        _keyword_frequency,
        lambda k: _rel(k, "relation", "frequency", f"use {k['keyword']!r}"),
    ),
    (
        "keywords:forbidden_words",
        {"forbidden_words": "strings"},
        _forbidden_words,
        lambda k: f"do not use {', '.join(map(repr, k['forbidden_words']))}",
    ),
    (
        "keywords:letter_frequency",
        {"letter": "letter", "let_frequency": "int", "let_relation": "relation"},
        _letter_frequency,
        lambda k: _rel(k, "let_relation", "let_frequency", f"use the letter {k['letter']!r}"),
    ),
    (
        "language:response_language",
        {"language": "str"},
        _response_language,
        lambda k: f"answer in the language {k['language']!r}",
    ),
    (
        "length_constraints:number_sentences",
        {"num_sentences": "int", "relation": "relation"},
        _number_sentences,
        lambda k: f"write {k['relation']} {k['num_sentences']} sentences",
    ),
    (
        "length_constraints:number_paragraphs",
        {"num_paragraphs": "int"},
        _number_paragraphs,
        lambda k: f"write exactly {k['num_paragraphs']} paragraphs separated by ***",
    ),
    (
        "length_constraints:number_words",
        {"num_words": "int", "relation": "relation"},
        _number_words,
        lambda k: f"write {k['relation']} {k['num_words']} words",
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": "int", "nth_paragraph": "int", "first_word": "str"},
        _nth_paragraph_first_word,
        lambda k: (
            f"write {k['num_paragraphs']} paragraphs, paragraph {k['nth_paragraph']} "
            f"starting with {k['first_word']!r}"
        ),
    ),
    (
        "detectable_content:number_placeholders",
        {"num_placeholders": "int"},
        _number_placeholders,
        lambda k: f"include at least {k['num_placeholders']} [placeholders]",
    ),
    (
        "detectable_content:postscript",
        {"postscript_marker": "str"},
        _postscript,
        lambda k: f"add a postscript starting with {k['postscript_marker']!r}",
    ),
    (
        "detectable_format:number_bullet_lists",
        {"num_bullets": "int"},
        _number_bullet_lists,
        lambda k: f"use exactly {k['num_bullets']} bullet points",
    ),
    (
        "detectable_format:constrained_response",
        {},
        _constrained_response,
        lambda k: "answer with one of: " + " / ".join(CONSTRAINED_OPTIONS),
    ),
    (
        "detectable_format:number_highlighted_sections",
        {"num_highlights": "int"},
        _number_highlighted_sections,
        lambda k: f"highlight at least {k['num_highlights']} *sections*",
    ),
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "str", "num_sections": "int"},
        _multiple_sections,
        lambda k: f"write {k['num_sections']} sections marked '{k['section_spliter']} N'",
    ),
    ("detectable_format:json_format", {}, _json_format, lambda k: "answer in JSON"),
    ("detectable_format:title", {}, _title, lambda k: "give a title in <<double brackets>>"),
    (
        "combination:two_responses",
        {},
        _two_responses,
        lambda k: "give two different responses separated by ******",
    ),
    (
        "combination:repeat_prompt",
        {"prompt_to_repeat": "str"},
        _repeat_prompt,
        lambda k: "repeat the request word for word first",
    ),
    (
        "startend:end_checker",
        {"end_phrase": "str"},
        _end_checker,
        lambda k: f"end with {k['end_phrase']!r}",
    ),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": "int", "capital_relation": "relation"},
        _capital_word_frequency,
        lambda k: _rel(k, "capital_relation", "capital_frequency", "use all-capital words"),
    ),
    (
        "change_case:english_capital",
        {},
        _english_capital,
        lambda k: "answer in English, all in capitals",
    ),
    (
        "change_case:english_lowercase",
        {},
        _english_lowercase,
        lambda k: "answer in English, all in lowercase",
    ),
    ("punctuation:no_comma", {}, _no_comma, lambda k: "use no commas"),
    (
        "startend:quotation",
        {},
        _quotation,
        lambda k: "wrap the whole response in double quotes",
    ),
]

CHECKERS: dict[str, Checker] = {
    name: Checker(name, params, test, describe) for name, params, test, describe in _SPECS
}
"""Every supported instruction id -> its checker (IFEval's 25)."""

# arguments IFEval strips (or lowercases) before it checks anything
_STRIPPED = {"keyword", "end_phrase", "postscript_marker", "section_spliter"}
_LOWERED = {"first_word"}


def _argument(cid: str, name: str, kind: str, value: Any) -> Any:
    where = f"{cid}: argument {name!r}"
    if kind in ("int", "relation", "str", "letter") and isinstance(value, bool):
        raise ValueError(f"{where} must not be a boolean")
    if kind == "int":
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)  # Parquet and pandas turn integer columns with gaps into floats
        if not isinstance(value, int):
            raise ValueError(f"{where} must be an integer, got {value!r}")
        if value < 0:
            raise ValueError(f"{where} must not be negative, got {value}")
        return value
    if kind == "relation":
        if value not in _RELATIONS:
            raise ValueError(f"{where} must be 'less than' or 'at least', got {value!r}")
        return value
    if kind == "strings":
        if isinstance(value, str):
            value = [value]
        if (
            not isinstance(value, (list, tuple))
            or not value
            or not all(isinstance(v, str) and v for v in value)
        ):
            raise ValueError(f"{where} must be a non-empty list of non-empty strings")
        return tuple(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where} must be a non-empty string, got {value!r}")
    if kind == "letter":
        value = value.strip().lower()
        if len(value) != 1:
            raise ValueError(f"{where} must be a single character, got {value!r}")
        return value
    if name in _STRIPPED:
        value = value.strip()
    if name in _LOWERED:
        value = value.lower()
    return value


def _constraint(cid: Any, raw: Any, seen: Counter[str]) -> Constraint:
    if not isinstance(cid, str) or cid not in CHECKERS:
        close = difflib.get_close_matches(str(cid), list(CHECKERS), n=2)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        raise ValueError(f"unknown instruction id {cid!r}{hint}")
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"{cid}: kwargs must be an object, got {type(raw).__name__}")
    params = CHECKERS[cid].params
    given = {k: v for k, v in raw.items() if v is not None}  # HF's IFEval fills gaps with null
    unknown = sorted(set(given) - set(params))
    if unknown:
        raise ValueError(
            f"{cid}: unknown argument(s) {unknown}; it takes {sorted(params) or 'none'}"
        )
    missing = sorted(set(params) - set(given))
    if missing:
        raise ValueError(f"{cid}: missing argument(s) {missing}")
    kwargs = {name: _argument(cid, name, kind, given[name]) for name, kind in params.items()}
    if cid == "length_constraints:nth_paragraph_first_word" and not (
        1 <= kwargs["nth_paragraph"] <= kwargs["num_paragraphs"]
    ):
        raise ValueError(f"{cid}: nth_paragraph must be between 1 and num_paragraphs")
    seen[cid] += 1
    label = cid if seen[cid] == 1 else f"{cid}#{seen[cid]}"
    return Constraint(cid, kwargs, label)


def parse_constraints(ids: Any, kwargs: Any) -> list[Constraint]:
    """A row's constraints from IFEval's ``instruction_id_list`` and ``kwargs``.

    Raises:
        ValueError: an unknown id, a missing or malformed argument, or lists of different
            lengths; the message names the constraint.

    Examples:
        >>> [c.label for c in parse_constraints(["punctuation:no_comma"], [{}])]
        ['punctuation:no_comma']
    """
    if isinstance(ids, str):
        ids = [ids]
    if not isinstance(ids, (list, tuple)) or not ids:
        raise ValueError("instruction_id_list must be a non-empty list of instruction ids")
    if kwargs is None:
        kwargs = [{}] * len(ids)
    if not isinstance(kwargs, (list, tuple)) or len(kwargs) != len(ids):
        raise ValueError(
            f"kwargs must be a list with one object per instruction id ({len(ids)}), "
            f"got {len(kwargs) if isinstance(kwargs, (list, tuple)) else type(kwargs).__name__}"
        )
    seen: Counter[str] = Counter()
    return [_constraint(cid, raw, seen) for cid, raw in zip(ids, kwargs, strict=True)]


def loose_variants(response: str) -> list[str]:
    """IFEval's loose variants: the response, without ``*``, without its first line, its last
    line, both, and each of those without ``*``."""
    lines = response.split("\n")
    first = "\n".join(lines[1:]).strip()
    last = "\n".join(lines[:-1]).strip()
    both = "\n".join(lines[1:-1]).strip()
    return [
        response,
        response.replace("*", ""),
        first,
        last,
        both,
        first.replace("*", ""),
        last.replace("*", ""),
        both.replace("*", ""),
    ]


def check(constraint: Constraint, response: str, mode: Mode = "strict") -> bool:
    """Whether ``response`` follows ``constraint`` under IFEval's strict or loose rules."""
    test = constraint.checker.test
    candidates = [response] if mode == "strict" else loose_variants(response)
    return any(r.strip() and test(r, constraint.kwargs) for r in candidates)
