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
  The prompt pasted back (three in four of its words in order, and of its unquoted words) is
  an echo too: quoted text alone may be reused, the request with it may not.
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

import difflib
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from truegrade.graders.instructions._checks import CONSTRAINED_OPTIONS, Constraint
from truegrade.graders.instructions._text import capital_tokens

__all__ = [
    "Evidence",
    "bag_spans",
    "blank",
    "boilerplate_spans",
    "echo_spans",
    "empty_blocks",
    "find_evidence",
    "generic",
    "given_words",
    "hedged_options",
    "near_echo_spans",
    "off_topic",
    "only_prompt_words",
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


def _line_numbers(text: str, found: Sequence[re.Match[str]]) -> list[int]:
    numbers, line, at = [], 0, 0
    for m in found:
        line += text.count("\n", at, m.start())
        at = m.start()
        numbers.append(line)
    return numbers


def echo_spans(text: str, prompt: str, *, min_words: int, exempt: Sequence[str] = ()) -> list[Span]:
    """Spans of ``text`` that copy ``min_words`` or more consecutive words of ``prompt``, or a
    whole sentence of it of five words or more (case-insensitive; quoted passages of the prompt
    and ``exempt`` phrases excluded). A copy stays on one line of ``text``: an echo does not
    reach into the next bullet or section."""
    source_text = _echo_source(prompt, exempt)
    source = [w.lower() for w in _WORD.findall(source_text)]
    grams: dict[int, set[tuple[str, ...]]] = {
        min_words: {tuple(source[i : i + min_words]) for i in range(len(source) - min_words + 1)}
    }
    for sentence in re.split(r"[.!?\n]+", source_text):
        words = tuple(w.lower() for w in _WORD.findall(sentence))
        if 5 <= len(words) < min_words:
            grams.setdefault(len(words), set()).add(words)
    found = list(_WORD.finditer(text))
    tokens = [m.group().lower() for m in found]
    lines = _line_numbers(text, found)
    covered = [False] * len(found)
    for size, wanted in grams.items():
        for i in range(len(found) - size + 1):
            if lines[i] == lines[i + size - 1] and tuple(tokens[i : i + size]) in wanted:
                for j in range(i, i + size):
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


def pasted_prompt_spans(text: str, prompt: str, *, coverage: float = 0.75) -> list[Span]:
    """The stretch of ``text`` that is the prompt pasted back: the prompt's words in order,
    ``coverage`` of them or more, and as large a share of its own (unquoted) words, a few words
    dropped or changed (a forbidden word left out). Quoted material is fair to reuse (a text to
    rewrite or correct keeps most of its words), and the instruction around it may be too
    short for ``echo_spans``; the instruction and the quotation together, as the prompt has
    them, are the request itself and not an answer to it."""
    words = list(_WORD.finditer(prompt))
    if len(words) < 5:
        return []
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(prompt)]
    own = [not any(a <= w.start() < b for a, b in quoted) for w in words]
    wanted = [w.group().lower() for w in words]
    found = list(_WORD.finditer(text))
    spans: list[Span] = []
    start = 0  # each paste in turn: the prompt pasted twice is two echoes
    while len(found) - start >= coverage * len(words):
        tokens = [m.group().lower() for m in found[start:]]
        matcher = difflib.SequenceMatcher(None, wanted, tokens, autojunk=False)
        blocks = [b for b in matcher.get_matching_blocks() if b.size]
        matched = sum(b.size for b in blocks)
        matched_own = sum(sum(own[b.a : b.a + b.size]) for b in blocks)
        if matched < coverage * len(words) or matched_own < coverage * sum(own):
            break
        first, last = start + blocks[0].b, start + blocks[-1].b + blocks[-1].size - 1
        spans.append((found[first].start(), found[last].end()))
        start = last + 1
    return spans


def near_echo_spans(
    text: str, prompt: str, *, min_words: int = 6, exempt: Sequence[str] = ()
) -> list[Span]:
    """Sentences of ``text`` (``min_words`` words or more) that are a sentence of the prompt
    with a word dropped here and there: all their words occur in order within one prompt
    sentence, covering three quarters of it or more ("Write a pitch for a time service. The
    words and cannot be in the response."). Quoted passages and ``exempt`` phrases of the prompt
    are left out; a title that borrows half of the request's words is not an echo."""
    positions: dict[str, list[tuple[int, int]]] = {}
    sizes: list[int] = []
    for n, sentence in enumerate(re.split(r"[.!?\n]+", _echo_source(prompt, exempt))):
        words = [w.lower() for w in _WORD.findall(sentence)]
        sizes.append(len(words))
        for i, w in enumerate(words):
            positions.setdefault(w, []).append((n, i))
    spans: list[Span] = []
    for sentence in re.finditer(r"[^.!?\n]+", text):
        words = list(_WORD.finditer(sentence.group()))
        if len(words) >= min_words and _in_order(
            [w.group().lower() for w in words], positions, sizes
        ):
            base = sentence.start()
            spans.append((base + words[0].start(), base + words[-1].end()))
    return spans


def _in_order(
    words: Sequence[str], positions: dict[str, list[tuple[int, int]]], sizes: Sequence[int]
) -> bool:
    """Whether ``words`` occur in increasing order within one prompt sentence that they cover
    three quarters of or more."""
    for n, start in positions.get(words[0], [])[:50]:
        if len(words) < 0.75 * sizes[n]:
            continue
        at, ok = start, True
        for w in words[1:]:
            nxt = next((i for m, i in positions.get(w, []) if m == n and i > at), None)
            if nxt is None:
                ok = False
                break
            at = nxt
        if ok:
            return True
    return False


def bag_spans(text: str, prompt: str, *, min_run: int = 5) -> list[Span]:
    """Runs of words on one line all taken from the prompt, with ``min_run`` or more distinct
    content words making up three in five of the run or more ("write short description
    lighthouse keeper night"): the prompt's words listed, not sentences (prose that reuses the
    prompt's words puts function words and words of its own between them)."""
    from_prompt = {w.lower() for w in _WORD.findall(prompt)}
    spans: list[Span] = []
    run: list[re.Match[str]] = []
    for m in [*_WORD.finditer(text), None]:
        same_line = m is None or not run or "\n" not in text[run[-1].end() : m.start()]
        if m is not None and same_line and m.group().lower() in from_prompt:
            run.append(m)
            continue
        content = [r.group().lower() for r in run if r.group().lower() not in _STOPWORDS]
        if len(set(content)) >= min_run and len(content) >= 0.6 * len(run):
            spans.append((run[0].start(), run[-1].end()))
        run = [m] if m is not None and m.group().lower() in from_prompt else []
    return spans


# -- keyword stuffing ----------------------------------------------------------------------------

_FRAGMENT = re.compile(r"[^\n.!?;:]+")
_HEADING = re.compile(r"^\s*(#{1,6}\s|<<.*>>\s*$|\*\*?[^*\n]+\*\*?\s*$)")


def _fragments(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_heading) of each clause: text between newlines and . ! ? ; :"""
    out = []
    line_start = 0
    text = re.sub(r'"(\s*):', lambda m: '"' + m.group(1) + " ", text)  # JSON keys: no break
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
        if others == 0:
            stuffed.update(s for s, _ in inside)
            continue
        per_item: dict[str, list[Span]] = {}
        for s, what in inside:
            per_item.setdefault(what, []).append(s)
        for spans in per_item.values():
            stuffed.update(spans[3:])
        # three or more of the same item in a row ("war war war"; "knock, knock" is a joke)
        ordered = sorted(inside)
        run = [ordered[0]]
        for (a, wa), (b, wb) in itertools.pairwise(ordered):
            gap = text[a[1] : b[0]]
            if wa == wb and not _WORD.search(gap) and len(gap) <= 3:
                run.append((b, wb))
                continue
            if len(run) >= 3:
                stuffed.update(s for s, _ in run)
            run = [(b, wb)]
        if len(run) >= 3:
            stuffed.update(s for s, _ in run)
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
        bare = token.lower().strip("\"'.,;:!?()[]{}") if letter.isalnum() else token.lower()
        if bare and set(bare) == {letter} and bare not in ("a", "i"):
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
    if cid == "detectable_format:number_highlighted_sections":
        return _repeated_highlights(text)
    return []


def _repeated_highlights(text: str) -> list[Span]:
    """Second and later copies of one highlight on lines with nothing but highlights
    ("*note* *note*"): one phrase marked up twice is one highlight, not two. A highlight that
    is itself a sentence, or a phrase highlighted again in prose, is left alone."""
    seen: set[str] = set()
    spans: list[Span] = []
    at = 0
    for line in text.split("\n"):
        marks = list(re.finditer(r"\*\*?[^\n*]+\*?\*", line))
        bare = not _WORD.search(re.sub(r"\*\*?[^\n*]+\*?\*", " ", line))
        for m in marks:
            key = m.group().strip("* ").lower()
            if key in seen and bare:
                spans.append((at + m.start(), at + m.end()))
            seen.add(key)
        at += len(line) + 1
    return spans


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
        elif c.id == "length_constraints:nth_paragraph_first_word":
            patterns.append(r"(?:^|(?<=\n\n))\W*" + re.escape(kw["first_word"]) + r"\b")
    return [
        (m.start(), m.end())
        for pattern in patterns
        for m in re.finditer(pattern, text, flags=re.IGNORECASE)
    ]


# -- what is left --------------------------------------------------------------------------------

# a placeholder is short bracketed text without quotes ("[name]"), unlike a JSON array
_MARKUP = re.compile(r'\[[^\]\n"]{0,40}\]|<<|>>|\*+|^\s*[-#>]+', re.MULTILINE)


def substance_words(text: str) -> list[str]:
    """Words that carry content: ``\\w+`` tokens with two or more letters or a digit, outside
    placeholders and markup (one-letter tokens, "a", "I", "x", are not evidence of an answer;
    "26" is)."""
    return [
        w
        for w in _WORD.findall(_MARKUP.sub(" ", text))
        if sum(c.isalpha() for c in w) >= 2 or any(c.isdigit() for c in w)
    ]


# fmt: off
_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers him his how i if in into is it its itself just me more most my
no nor not now of off on once only or other our out over own same she should so some such than
that the their them then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself please
make sure write give tell using use used without like least less times time must also each
its let get got may say one two new way put set yes via per etc did see saw own any few
explain describe create provide list generate compose draft summarize summarise name
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
ok okay note notes item items stuff content done again more solution solutions solve step
steps process thought let lets
"""
# fmt: on
_GENERIC = frozenset(_GENERIC_TEXT.split()) | _STOPWORDS | _CONSTRAINT_WORDS


def generic(text: str, free: str = "") -> bool:
    """True when nearly every word of ``text`` (four in five or more) is a function word, a
    word that fits any request ("important", "consider", "hope", "things") or one of the
    ``free`` words the constraints supply: a reply that could be pasted under any prompt."""
    found = [w.lower() for w in substance_words(text) if not w.isdigit()]
    if not found:
        return True
    allowed = _GENERIC | {w.lower() for w in _WORD.findall(free)}
    return sum(w in allowed for w in found) >= 0.8 * len(found)


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
        if len(w) >= 3
        and any(c.isalpha() for c in w)
        and w.lower() not in _STOPWORDS
        and w.lower() not in _CONSTRAINT_WORDS
    }


def _latin_script(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    return sum(1 for c in letters if c.isascii()) * 2 >= len(letters)


def given_words(constraints: Sequence[Constraint]) -> str:
    """The words the constraints themselves supply (keywords, end phrase, first word...): they
    come free with the constraint, so using them says nothing about the request."""
    return " ".join(
        " ".join(v) if isinstance(v, tuple) else v
        for c in constraints
        for name, v in c.kwargs.items()
        if isinstance(v, (str, tuple)) and name != "prompt_to_repeat"
    )


def off_topic(text: str, prompt: str, constraints: Sequence[Constraint]) -> bool:
    """True when ``text`` shares no content word with ``prompt`` (where that can be judged)."""
    for c in constraints:
        if c.id == "language:response_language" and c.kwargs["language"] != "en":
            return False
        if c.id == "detectable_format:constrained_response":
            # "My answer is no." may be the whole answer; judge only what comes with it
            for option in CONSTRAINED_OPTIONS:
                text = text.replace(option, " ")
            if len(substance_words(text)) < 3:
                return False
    topical = " ".join(w for w in _WORD.findall(prompt) if w.lower() not in _GENERIC)
    wanted = _content_stems(topical) - _content_stems(given_words(constraints))
    if not wanted or not _latin_script(text):
        return False
    return not (wanted & {_stem(w) for w in _WORD.findall(text)})


def only_prompt_words(text: str, prompt: str) -> bool:
    """True when every word of substance ``text`` has (two or more distinct) is a word of the
    prompt: "Write cover letter company" restates the request and adds nothing. The allowed
    answers of a constrained response are not counted (they are in the prompt by design)."""
    for option in CONSTRAINED_OPTIONS:
        text = text.replace(option, " ")
    distinct = {w.lower() for w in substance_words(text)}
    if len(distinct) < 2 or not distinct <= {w.lower() for w in _WORD.findall(prompt)}:
        return False
    # quoted material is there to be reused ("rewrite this blog as bullet points"): the reply
    # restates the request only if half its content words come from the request's own text
    request = {w.lower() for w in _WORD.findall(_echo_source(prompt, ()))}
    content = {w for w in distinct if w not in _STOPWORDS} or distinct
    return len(content & request) * 2 >= len(content)


def hedged_options(text: str) -> int:
    """How many of the constrained-response options a text gives."""
    return sum(1 for option in CONSTRAINED_OPTIONS if option in text)


def empty_blocks(text: str, said: str, constraints: Sequence[Constraint]) -> bool:
    """True when the parts the constraints ask for (paragraphs, sections, the two responses)
    are there in ``text`` but one says nothing, or all say the same ("Sleep. *** Sleep.");
    what each part says is read from ``said`` (``text`` with dictated words blanked, so the
    same length)."""
    separators = []
    for c in constraints:
        if c.id == "length_constraints:number_paragraphs":
            separators.append((r"\*\*\*", False))
        elif c.id == "length_constraints:nth_paragraph_first_word":
            separators.append((r"\n\s*\n", False))
        elif c.id == "combination:two_responses":
            separators.append((r"\*{6}", False))
        elif c.id == "detectable_format:multiple_sections":
            separators.append((re.escape(c.kwargs["section_spliter"]) + r"\s?\d+", True))
    for separator, marked in separators:
        cuts = [(m.start(), m.end()) for m in re.finditer(separator, text)]
        if not cuts:
            continue
        bounds = [0, *(x for cut in cuts for x in cut), len(text)]
        pieces = [said[bounds[i] : bounds[i + 1]] for i in range(0, len(bounds), 2)]
        # what follows each section marker must say something; elsewhere, leading and trailing
        # empty pieces are the separators' own business (IFEval counts them)
        blocks = pieces[1:] if marked else [p for p in pieces if p.strip()]
        if len(blocks) < 2:
            continue
        words = [" ".join(w.lower() for w in substance_words(b)) for b in blocks]
        if not all(words) or len(set(words)) == 1:
            return True
    return False


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
    exempt: list[str] = []  # phrases a constraint asks the response to copy
    for c in constraints:
        if c.id == "startend:end_checker":
            exempt.append(c.kwargs["end_phrase"])
        if c.id == "detectable_format:constrained_response":
            exempt.extend(CONSTRAINED_OPTIONS)
    echoed = _merge(
        [
            *echo_spans(answer, prompt, min_words=echo_min_words, exempt=exempt),
            *pasted_prompt_spans(answer, prompt),
            *bag_spans(answer, prompt),
            *near_echo_spans(answer, prompt, exempt=exempt),
        ]
    )
    unechoed = blank(answer, echoed)
    stuffed = {c.label: stuffed_spans(unechoed, c) for c in constraints}
    return Evidence(answer, unechoed, echoed, {k: v for k, v in stuffed.items() if v})
