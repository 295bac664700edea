"""Ways to follow a constraint without doing what was asked, and how to see them.

IFEval's checkers look at surface features, so a response can meet them without attempting the
request: "ok" has no commas and is under 300 words; the prompt pasted back contains its
keywords, its ``<<title>>`` example and its ``*highlighted section*``; "war war war" meets "use
the word war at least 3 times". Each defence here finds the text that does the work:

* **prompt echo**: runs of ``echo_min_words`` or more words copied from the prompt (quoted
  material in the prompt, which a response may legitimately reuse, and the phrases a constraint
  itself asks for are left out of the comparison). A constraint that is followed only because
  of the copied text is flagged ``prompt_echo``. With ``combination:repeat_prompt`` the required
  repetition at the start is not an echo, but nothing else may rest on it.
* **keyword stuffing**: occurrences of a required keyword (or letter, or capital word) outside
  sentences: in a fragment with fewer than two other words or fewer other words than keywords
  ("Keywords: war, peace"), next to another occurrence of itself ("war war"), or past the third
  in one sentence; runs of a required character. A constraint followed only thanks to those is
  flagged ``keyword_stuffing``.
* **degenerate**: what is left once echoes, stuffing, markup (placeholders, bullets, JSON
  punctuation) and dictated text (end phrase, postscript and section markers) are taken away
  has fewer than ``min_words`` words of two letters or more (one word is enough when a
  constraint asks for ten words or fewer), or is one word repeated.
* **off topic**: what is left shares no content word with the prompt (the vocabulary of the
  constraints themselves does not count). Only judged when the prompt has three or more content
  words, the response is in Latin script, no other language is asked for and the answer is not
  a fixed option. A lexical test cannot tell a poem that never names its subject from a reply
  about something else, so by default it fails the row only when the reply is also *generic*:
  four in five of its words would fit under any prompt ("it is important to consider this
  question carefully"); otherwise it is only flagged.
* **hedged**: ``detectable_format:constrained_response`` answered with more than one option.

Every defence is a documented rule that a sincere response meets: an answer that uses its
keywords in sentences, writes its own title, and says something about the request passes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from truegrade.graders.instructions._checks import CONSTRAINED_OPTIONS, Constraint
from truegrade.graders.instructions._text import capital_tokens

__all__ = [
    "Evidence",
    "blank",
    "boilerplate_spans",
    "echo_spans",
    "example_markup_spans",
    "find_evidence",
    "generic",
    "hedged_options",
    "off_topic",
    "stuffed_spans",
    "substance_words",
    "word_floor",
]

Span = tuple[int, int]

_WORD = re.compile(r"\w+")
_QUOTED = re.compile(r'"[^"\n]*"|\u201c[^\u201d\n]*\u201d|```.*?```', re.DOTALL)


def blank(text: str, spans: Iterable[Span]) -> str:
    """``text`` with every span replaced by spaces (newlines kept, so lines stay lines)."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _merge(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


# -- prompt echo ---------------------------------------------------------------------------------


def _echo_source(prompt: str, exempt: Sequence[str]) -> str:
    source = _QUOTED.sub(" ", prompt)
    for phrase in exempt:
        if phrase.strip():
            source = re.sub(re.escape(phrase.strip()), " ", source, flags=re.IGNORECASE)
    return source


_EXAMPLE_MARKUP = re.compile(r"<<[^\n]+?>>|\*[^\n*]+\*")


def example_markup_spans(text: str, prompt: str) -> list[Span]:
    """Spans of ``text`` that copy a title or highlight the prompt gives as an example
    (``<<poem of joy>>``, ``*highlighted section*``): the example, not a title of its own.
    Placeholders are not included: a template may well reuse the prompt's ``[name]``."""
    spans: list[Span] = []
    for example in {m.group() for m in _EXAMPLE_MARKUP.finditer(prompt)}:
        for m in re.finditer(re.escape(example), text, flags=re.IGNORECASE):
            spans.append((m.start(), m.end()))
    return spans


def echo_spans(text: str, prompt: str, *, min_words: int, exempt: Sequence[str] = ()) -> list[Span]:
    """Spans of ``text`` that copy ``min_words`` or more consecutive words of ``prompt``
    (case-insensitive; quoted passages of the prompt and ``exempt`` phrases excluded)."""
    source = [w.lower() for w in _WORD.findall(_echo_source(prompt, exempt))]
    if len(source) < min_words:
        return []
    grams = {tuple(source[i : i + min_words]) for i in range(len(source) - min_words + 1)}
    found = list(_WORD.finditer(text))
    tokens = [m.group().lower() for m in found]
    covered = [False] * len(found)
    for i in range(len(found) - min_words + 1):
        if tuple(tokens[i : i + min_words]) in grams:
            for j in range(i, i + min_words):
                covered[j] = True
    spans: list[Span] = []
    i = 0
    while i < len(found):
        if covered[i]:
            j = i
            while j + 1 < len(found) and covered[j + 1]:
                j += 1
            spans.append((found[i].start(), found[j].end()))
            i = j + 1
        else:
            i += 1
    return spans


# -- keyword stuffing ----------------------------------------------------------------------------

_FRAGMENT = re.compile(r"[^\n.!?;:]+")
_HEADING = re.compile(r"^\s*(#{1,6}\s|<<.*>>\s*$|\*\*?[^*\n]+\*\*?\s*$)")


def _fragments(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_heading) of each clause: text between newlines and . ! ? ; :"""
    out = []
    line_start = 0
    for line in text.split("\n"):
        heading = bool(_HEADING.match(line))
        for m in _FRAGMENT.finditer(line):
            out.append((line_start + m.start(), line_start + m.end(), heading))
        line_start += len(line) + 1
    return out


def _stuffed_occurrences(text: str, occurrences: Sequence[tuple[Span, str]]) -> list[Span]:
    """Which occurrences (span, what) do no work in a sentence; see the module docstring."""
    if not occurrences:
        return []
    stuffed: set[Span] = set()
    word_spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    for start, end, heading in _fragments(text):
        inside = [(s, w) for s, w in occurrences if start <= s[0] and s[1] <= end]
        if not inside:
            continue
        fragment_words = [ws for ws in word_spans if start <= ws[0] and ws[1] <= end]
        covered = {
            i
            for i, ws in enumerate(fragment_words)
            for s, _ in inside
            if ws[0] < s[1] and s[0] < ws[1]
        }
        others = len(fragment_words) - len(covered)
        if heading and len(inside) == 1:
            continue  # a title or heading may name its subject once
        if others < max(2, len(inside)):
            stuffed.update(s for s, _ in inside)
            continue
        per_item: dict[str, list[Span]] = {}
        for s, what in inside:
            per_item.setdefault(what, []).append(s)
        for spans in per_item.values():
            stuffed.update(spans[3:])
        # an occurrence right next to another of the same item ("war war", "war, war")
        ordered = sorted(inside)
        for (a, wa), (b, wb) in itertools.pairwise(ordered):
            gap = text[a[1] : b[0]]
            if wa == wb and not _WORD.search(gap) and len(gap) <= 3:
                stuffed.update((a, b))
    return sorted(stuffed)


def _occurrences(text: str, needle: str) -> list[tuple[Span, str]]:
    return [
        ((m.start(), m.end()), needle.lower())
        for m in re.finditer(re.escape(needle), text, flags=re.IGNORECASE)
    ]


def _letter_runs(text: str, letter: str) -> list[Span]:
    """Tokens made of the required character alone (not the words "a" or "i"), and runs of four
    or more of it: characters added to be counted, not written."""
    spans = []
    for m in re.finditer(r"\S+", text):
        token = m.group()
        if set(token.lower()) == {letter} and token.lower() not in ("a", "i"):
            spans.append((m.start(), m.end()))
            continue
        for run in re.finditer(re.escape(letter) + "{4,}", token, flags=re.IGNORECASE):
            spans.append((m.start() + run.start(), m.start() + run.end()))
    return spans


def _capital_occurrences(text: str) -> list[tuple[Span, str]]:
    return [
        ((m.start(), m.end()), m.group())
        for m in re.finditer(r"\S+", text)
        if capital_tokens(m.group()) > 0
    ]


def stuffed_spans(text: str, constraint: Constraint) -> list[Span]:
    """Spans of ``text`` that count towards ``constraint`` without being written into prose
    (only for constraints that ask for *more* of something)."""
    kw = constraint.kwargs
    cid = constraint.id
    if cid == "keywords:existence":
        occurrences = [o for k in kw["keywords"] for o in _occurrences(text, k)]
        return _stuffed_occurrences(text, occurrences)
    if cid == "keywords:frequency" and kw["relation"] == "at least":
        return _stuffed_occurrences(text, _occurrences(text, kw["keyword"]))
    if cid == "keywords:letter_frequency" and kw["let_relation"] == "at least":
        return _letter_runs(text, kw["letter"])
    if cid == "change_case:capital_word_frequency" and kw["capital_relation"] == "at least":
        return _stuffed_occurrences(text, _capital_occurrences(text))
    return []


def boilerplate_spans(text: str, constraints: Sequence[Constraint]) -> list[Span]:
    """Text a constraint itself dictates (its end phrase, postscript marker, section markers):
    required, so it is no evidence of an attempt at the request."""
    patterns = []
    for c in constraints:
        kw = c.kwargs
        if c.id == "startend:end_checker":
            patterns.append(re.escape(kw["end_phrase"]))
        elif c.id == "detectable_content:postscript":
            patterns.append(
                r"p\.\s?p\.\s?s\.?|p\.\s?s\."
                if kw["postscript_marker"] in ("P.S.", "P.P.S")
                else re.escape(kw["postscript_marker"])
            )
        elif c.id == "detectable_format:multiple_sections":
            patterns.append(re.escape(kw["section_spliter"]) + r"\s?\d+")
    return [
        (m.start(), m.end())
        for pattern in patterns
        for m in re.finditer(pattern, text, flags=re.IGNORECASE)
    ]


# -- what is left --------------------------------------------------------------------------------

# a placeholder is short bracketed text without quotes ("[name]"), unlike a JSON array
_MARKUP = re.compile(r'\[[^\]\n"]{0,40}\]|<<|>>|\*+|^\s*[-#>]+', re.MULTILINE)


def substance_words(text: str) -> list[str]:
    """Words that carry content: ``\\w+`` tokens with two or more letters, outside placeholders
    and markup (one-letter tokens, "a", "I", "x", are not evidence of an answer)."""
    return [w for w in _WORD.findall(_MARKUP.sub(" ", text)) if sum(c.isalpha() for c in w) >= 2]


# fmt: off
_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers him his how i if in into is it its itself just me more most my
no nor not now of off on once only or other our out over own same she should so some such than
that the their them then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself please
make sure write give tell using use used without like least less times time must also each
"""
# the words IFEval's constraints are phrased in: sharing them is not sharing the topic
_CONSTRAINT_WORD_TEXT = """
response respond answer answers entire whole output text words word sentences sentence
paragraphs paragraph section sections marked mark letters letter lowercase uppercase capital
capitals case english language highlight highlighted markdown bullet bullets points point title
titles wrapped wrap double angular brackets square placeholders placeholder json format block
postscript starting start end ending finish phrase exact exactly quotation quotes marks comma
commas refrain separated separate divider asterisk asterisks symbols include including keywords
keyword appear appears least fewer more than should contain contains containing follow
following request repeat word-for-word change different responses options option allowed
"""
# fmt: on
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_CONSTRAINT_WORDS = frozenset(_CONSTRAINT_WORD_TEXT.split())


_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "ly", "s")


def _stem(word: str) -> str:
    """A light stem, enough to match "harbours" with "harbour" and "running" with "run"."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]  # runn -> run
    return word[:5]


def _content_stems(text: str) -> set[str]:
    return {
        _stem(w)
        for w in _WORD.findall(text)
        if len(w) >= 4
        and any(c.isalpha() for c in w)
        and w.lower() not in _STOPWORDS
        and w.lower() not in _CONSTRAINT_WORDS
    }


def _latin_script(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    return sum(1 for c in letters if c.isascii()) * 2 >= len(letters)


def off_topic(text: str, prompt: str, constraints: Sequence[Constraint]) -> bool:
    """True when ``text`` shares no content word with ``prompt`` (where that can be judged)."""
    for c in constraints:
        if c.id == "language:response_language" and c.kwargs["language"] != "en":
            return False
        if c.id == "detectable_format:constrained_response":
            return False  # "My answer is no." is the whole answer the request allows
    wanted = _content_stems(prompt)
    if len(wanted) < 3 or not _latin_script(text):
        return False
    return not (wanted & {_stem(w) for w in _WORD.findall(text)})


# fmt: off
_GENERIC_TEXT = """
thing things good great nice fine really important consider question questions answer answers
today people way ways lot lots many much well better best important approach factors factor
outcome outcomes several angles angle attention careful carefully thoughtful relevant
considerations consideration summary general generally overall hope helps help helpful sure
certainly absolutely indeed definitely happy glad love enjoy day days life world everything
something anything nothing everyone someone thank thanks know think believe feel want need
going come comes look looks see seems seem right wrong true false correct complete done topic
point matter matters issue issues idea ideas detail details information interesting simple
first second third last next another new old big small long short high low different various
important things here there again always never often sometimes usually able time times year
years keep kept find found take taken make made get got give given said says say work works
part parts place case cases fact facts reason reasons result results example examples number
"""
# fmt: on
_GENERIC = frozenset(_GENERIC_TEXT.split()) | _STOPWORDS | _CONSTRAINT_WORDS


def generic(text: str) -> bool:
    """True when nearly every word of ``text`` (four in five or more) is a function word or a
    word that fits any request ("important", "consider", "hope", "things"): a reply that could
    be pasted under any prompt."""
    found = [w.lower() for w in substance_words(text)]
    if not found:
        return True
    return sum(w in _GENERIC for w in found) >= 0.8 * len(found)


def hedged_options(text: str) -> int:
    """How many of the constrained-response options a text gives."""
    return sum(1 for option in CONSTRAINED_OPTIONS if option in text)


def word_floor(constraints: Sequence[Constraint], min_words: int) -> int:
    """The fewest words a sincere response may have: ``min_words``, or one when a constraint
    asks for ten words or fewer."""
    floor = min_words
    for c in constraints:
        if c.id == "length_constraints:number_words" and c.kwargs["relation"] == "less than":
            # a request capped at ten words or fewer may be answered in one ("Paris")
            cap = c.kwargs["num_words"]
            floor = min(floor, 1 if cap <= 10 else cap - 1)
    return floor


@dataclass
class Evidence:
    """The response with the work-avoiding parts taken out, and what was found.

    Attributes:
        answer: The response without the required repetition of the prompt.
        unechoed: ``answer`` with text copied from the prompt blanked.
        echoed: Spans of ``answer`` blanked in ``unechoed``.
        stuffed: Per constraint label, spans of ``unechoed`` that are stuffing.
    """

    answer: str
    unechoed: str
    echoed: list[Span] = field(default_factory=list)
    stuffed: dict[str, list[Span]] = field(default_factory=dict)

    def without_stuffing(self, label: str | None = None) -> str:
        """``unechoed`` with one constraint's stuffing blanked (every constraint's: None)."""
        if label is not None:
            return blank(self.unechoed, self.stuffed.get(label, []))
        return blank(self.unechoed, _merge(s for spans in self.stuffed.values() for s in spans))


def _cut_repetition(response: str, constraints: Sequence[Constraint]) -> str:
    for c in constraints:
        if c.id != "combination:repeat_prompt":
            continue
        wanted = c.kwargs["prompt_to_repeat"].strip()
        lead = len(response) - len(response.lstrip())
        if response[lead : lead + len(wanted)].lower() == wanted.lower():
            return blank(response, [(0, lead + len(wanted))])
    return response


def find_evidence(
    response: str, prompt: str, constraints: Sequence[Constraint], *, echo_min_words: int
) -> Evidence:
    """Take the required repetition, the echoes and the stuffing out of a response."""
    answer = _cut_repetition(response, constraints)
    exempt: list[str] = []
    for c in constraints:
        for name in ("end_phrase", "postscript_marker", "keyword", "first_word"):
            if name in c.kwargs:
                exempt.append(c.kwargs[name])
        exempt.extend(c.kwargs.get("keywords", ()))
        if c.id == "detectable_format:constrained_response":
            exempt.extend(CONSTRAINED_OPTIONS)
    echoed = _merge(
        [
            *echo_spans(answer, prompt, min_words=echo_min_words, exempt=exempt),
            *example_markup_spans(answer, prompt),
        ]
    )
    unechoed = blank(answer, echoed)
    stuffed = {c.label: stuffed_spans(unechoed, c) for c in constraints}
    return Evidence(answer, unechoed, echoed, {k: v for k, v in stuffed.items() if v})
