"""From an answer as written to a canonical ``Answer``: the core to compare, and what it carries.

Everything a lenient checker strips silently is kept here as data: units, a percent sign, a degree
sign, a currency, the brackets around a collection. The comparison then decides what each one
means (``5 m`` is not ``5 cm``; ``[1,3)`` is not ``(1,3)``) instead of the normaliser erasing the
difference. All of it is string work in linear time; nothing here parses to SymPy or evaluates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "Answer",
    "balanced",
    "normalize_answer",
    "split_relation",
    "split_top_level",
    "unit_key",
]

MAX_ANSWER_CHARS = 2000

_WRAPPERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_NOISE = re.compile(
    r"\\displaystyle|\\left(?=[\\(\[{.|])|\\right(?=[\\)\]}.|])|(?<!\\)\\[!,;:> ]|~|\\limits"
    r"|\\nolimits"
)
_DOT_DELIMITER = re.compile(r"\\left\.|\\right\.")
_FRAC_VARIANTS = re.compile(r"\\[dtc]frac")
_TEXT_COMMANDS = re.compile(
    r"\\(?:mbox|textrm|textbf|textit|textnormal|mathrm|mathbf|mathit|operatorname|rm)\s*\{"
    r"(?=[^{}]{2})"  # one letter (\mathrm{e}, \mathrm{i}, \mathrm{d}) is a symbol, not a word
)
_ONE_LETTER_COMMAND = re.compile(r"\\(?:mathrm|mathbf|mathit|textrm|rm)\s*\{\s*([a-zA-Z])\s*\}")
_TEXT_BLOCK = re.compile(r"\\text\s*\{([^{}]*)\}")
_THOUSANDS_BRACE = re.compile(r"\{,\}")
_THOUSANDS = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+)(?![\d,])(?!\.\d*,)")
_PERCENT = re.compile(r"(?:\\%|%|\\text\{\s*(?:percent|\\%|%)\s*\}|\s+percent)\s*$", re.IGNORECASE)
_DEGREES = re.compile(
    r"(?:\^\s*\{?\s*\\circ\s*\}?|°|\\degree|\^\s*\{?\s*\\text\{\s*o\s*\}\s*\}?"
    r"|\\text\{\s*degrees?\s*\}|\s+degrees?)\s*$",
    re.IGNORECASE,
)
_CURRENCY_PREFIX = re.compile(r"^(?:\\\$|\$|\\text\{\s*\\?\$\s*\})\s*")
_TRAILING_TEXT_UNIT = re.compile(
    r"(?<=[\d}\)a-zA-Z])\s*\\text\{\s*([^{}]*?)\s*\}(?:\s*\^\s*\{?(\d)\}?)?\s*$"
)
_PLAIN_UNIT = re.compile(r"(?<=\d)\s*([a-zA-Z]+(?:\s+[a-zA-Z]+)?)(?:\s*\^\s*\{?(\d)\}?)?\s*$")

_UNIT_SYNONYMS = {
    "centimeter": "cm",
    "centimetre": "cm",
    "millimeter": "mm",
    "millimetre": "mm",
    "kilometer": "km",
    "kilometre": "km",
    "meter": "m",
    "metre": "m",
    "inch": "in",
    "foot": "ft",
    "feet": "ft",
    "yard": "yd",
    "mile": "mi",
    "gram": "g",
    "kilogram": "kg",
    "milligram": "mg",
    "pound": "lb",
    "lbs": "lb",
    "ounce": "oz",
    "second": "s",
    "sec": "s",
    "minute": "min",
    "hour": "h",
    "hr": "h",
    "dollar": "$",
    "usd": "$",
    "cent": "cents",
    "degree": "°",
    "deg": "°",
    "liter": "l",
    "litre": "l",
    "milliliter": "ml",
    "squareunit": "unit^2",
    "squnit": "unit^2",
    "unitsquared": "unit^2",
    "squarecm": "cm^2",
    "squarecentimeter": "cm^2",
    "squaremeter": "m^2",
    "squarem": "m^2",
    "squarefeet": "ft^2",
    "squarefoot": "ft^2",
    "squareft": "ft^2",
    "squareinch": "in^2",
    "cubicunit": "unit^3",
    "cubiccm": "cm^3",
    "cubiccentimeter": "cm^3",
    "cubicmeter": "m^3",
    "cubicfeet": "ft^3",
    "cubicinch": "in^3",
    "mph": "mi/h",
    "milesperhour": "mi/h",
}
_KNOWN_PLAIN_UNITS = {
    "m",
    "cm",
    "mm",
    "km",
    "in",
    "inch",
    "inches",
    "ft",
    "foot",
    "feet",
    "yd",
    "yard",
    "yards",
    "mile",
    "miles",
    "g",
    "kg",
    "mg",
    "lb",
    "lbs",
    "pound",
    "pounds",
    "oz",
    "s",
    "sec",
    "second",
    "seconds",
    "min",
    "minute",
    "minutes",
    "h",
    "hr",
    "hrs",
    "hour",
    "hours",
    "day",
    "days",
    "week",
    "weeks",
    "year",
    "years",
    "unit",
    "units",
    "dollar",
    "dollars",
    "cent",
    "cents",
    "meter",
    "meters",
    "metre",
    "metres",
    "centimeter",
    "centimeters",
    "mph",
    "square",
    "degrees",
    "degree",
    "liter",
    "liters",
    "ml",
    "l",
}


def unit_key(unit: str) -> str:
    """A comparable form of a unit: lower case, no spaces or periods, singular, synonyms merged."""
    text = unit.lower().replace("\\", "").replace(" ", "").replace(".", "").replace("~", "")
    text = text.replace("{", "").replace("}", "")
    power = ""
    if "^" in text:
        text, _, power = text.partition("^")
        power = "^" + power
    if text.endswith("es") and text[:-2] in ("inch",):
        text = text[:-2]
    elif text.endswith("s") and len(text) > 2 and text not in ("mps", "lbs"):
        text = text[:-1]
    if text.startswith("square") and text != "square":
        text = "square" + text[6:].rstrip("s")
    text = _UNIT_SYNONYMS.get(text, text)
    return text + power


@dataclass(frozen=True)
class Answer:
    """An answer taken apart.

    Attributes:
        raw: The statement as extracted.
        core: The mathematical part, in LaTeX, with wrappers and the markers below removed.
        unit: The unit stated after the value, as written (None when there is none).
        percent: It ended with a percent sign.
        degrees: It ended with a degree sign.
        text: A flat comparable form of the whole answer (lower case, no spaces, markup or
            periods), used when the reference is words (``\\text{4:30 p.m.}``, a name).
        is_text: The answer is words rather than mathematics.
        problem: Why the answer cannot be used (``answer_too_long``), or None.
    """

    raw: str
    core: str
    unit: str | None = None
    percent: bool = False
    degrees: bool = False
    text: str = ""
    is_text: bool = False
    problem: str | None = None
    notes: tuple[str, ...] = field(default=())


def _strip_wrappers(text: str) -> str:
    s = text.strip()
    for _ in range(3):
        before = s
        for left, right in _WRAPPERS:
            if len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right):
                s = s[len(left) : len(s) - len(right)].strip()
        s = s.rstrip(" .").strip()
        if s.startswith("\\boxed{") and s.endswith("}"):
            s = s[7:-1].strip()
        if s == before:
            break
    return s


def _text_key(text: str) -> str:
    t = _TEXT_BLOCK.sub(r"\1", text)
    t = t.replace("\\", "").replace("{", "").replace("}", "")
    return re.sub(r"[\s.$]", "", t).lower().strip("()")


def normalize_answer(text: str, *, collapse_thousands: bool = True) -> Answer:
    """Take an answer apart (see ``Answer``).

    Args:
        text: The statement, e.g. the content of a ``\\boxed{}``.
        collapse_thousands: Read ``10,000`` as one number (off when the gold answer is a list).
    """
    raw = text
    if len(text) > MAX_ANSWER_CHARS:
        return Answer(raw, "", problem="answer_too_long")
    s = _strip_wrappers(text)
    s = _DOT_DELIMITER.sub("", s)
    s = _NOISE.sub(lambda m: " " if m.group() in ("\\ ", "~", "\\;", "\\:", "\\>") else "", s)
    s = _FRAC_VARIANTS.sub(r"\\frac", s)
    s = _ONE_LETTER_COMMAND.sub(r"\1", s)
    s = _TEXT_COMMANDS.sub(r"\\text{", s)
    s = s.strip()
    percent = degrees = False
    unit: str | None = None
    match = _PERCENT.search(s)
    if match:
        percent, s = True, s[: match.start()].rstrip()
    match = _DEGREES.search(s)
    if match:
        degrees, s = True, s[: match.start()].rstrip()
    match = _CURRENCY_PREFIX.match(s)
    if match:
        unit, s = "$", s[match.end() :].lstrip()
    if unit is None:
        match = _TRAILING_TEXT_UNIT.search(s)
        if match and match.start() > 0:
            unit = match.group(1) + (f"^{match.group(2)}" if match.group(2) else "")
            s = s[: match.start()].rstrip()
        else:
            match = _PLAIN_UNIT.search(s)
            if match and match.group(1).lower().split()[0] in _KNOWN_PLAIN_UNITS:
                unit = match.group(1) + (f"^{match.group(2)}" if match.group(2) else "")
                s = s[: match.start()].rstrip()
    if unit is not None and unit_key(unit) in ("°",):
        degrees, unit = True, None
    s = _THOUSANDS_BRACE.sub(",", s)
    if collapse_thousands:
        s = _THOUSANDS.sub(lambda m: m.group(1).replace(",", ""), s)
    s = s.strip()
    stripped = _TEXT_BLOCK.sub(r"\1", s).strip()
    is_text = bool(stripped) and (
        (not re.search(r"[\d\\^_=+*/<>()\[\]]", stripped) and len(stripped) > 1)
        or bool(_TEXT_BLOCK.fullmatch(s))
    )
    return Answer(raw, s, unit, percent, degrees, _text_key(_strip_wrappers(raw)), is_text)


_OPEN = "([{"
_CLOSE = ")]}"
_SEPARATOR_WORDS = re.compile(
    r"\s*(?:\\text\{\s*(?:or|and)\s*\}|\bor\b|\band\b|\\quad|\\qquad|;)\s*"
)


def _mask_depth(text: str) -> list[int]:
    """Bracket depth at each character (``\\{ \\}`` count like their brackets)."""
    n = len(text)
    depths = [0] * n
    depth = 0
    i = 0
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] in "{}":
            if text[i + 1] == "{":
                depth += 1
                depths[i] = depths[i + 1] = depth
            else:
                depths[i] = depths[i + 1] = depth
                depth -= 1
            i += 2
            continue
        if ch in _OPEN:
            depth += 1
            depths[i] = depth
        elif ch in _CLOSE:
            depths[i] = depth
            depth -= 1
        else:
            depths[i] = depth
        i += 1
    return depths


def split_top_level(core: str) -> list[str]:
    """Split a core at top-level commas and at "or", "and", ``\\quad`` and ``;`` separators.

    Commas inside brackets (``(1,2)``, ``\\{1,2\\}``, ``f(x,y)``) do not split.
    """
    text = _SEPARATOR_WORDS.sub(",", core)
    depths = _mask_depth(text)
    pieces: list[str] = []
    start = 0
    for i, ch in enumerate(text):
        if ch == "," and depths[i] == 0:
            pieces.append(text[start:i].strip())
            start = i + 1
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]


_RELATION = re.compile(r"(?<![<>!\\])=")


def split_relation(core: str) -> list[str]:
    """The parts of ``a = b = c`` at top-level equals signs (``\\le``, ``\\ne`` do not split)."""
    depths = _mask_depth(core)
    parts: list[str] = []
    start = 0
    for match in _RELATION.finditer(core):
        if depths[match.start()] == 0:
            parts.append(core[start : match.start()].strip())
            start = match.end()
    parts.append(core[start:].strip())
    return parts


def balanced(core: str) -> bool:
    """Brackets balance (``\\left(``-style and ``\\{`` included); intervals may mix ``(`` and
    ``]``, so only the count of openers and closers is checked, never going negative."""
    depth = 0
    i = 0
    while i < len(core):
        ch = core[i]
        if ch == "\\" and i + 1 < len(core) and core[i + 1] in "{}":
            depth += 1 if core[i + 1] == "{" else -1
            i += 2
        else:
            if ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth -= 1
            i += 1
        if depth < 0:
            return False
    return depth == 0
