"""From an answer as written to a canonical ``Answer``: the core to compare, and what it carries.

Everything a lenient checker strips silently is kept here as data: units, a percent sign, a degree
sign, a currency, the brackets around a collection. The comparison then decides what each one
means (``5 m`` is not ``5 cm``; ``[1,3)`` is not ``(1,3)``) instead of the normaliser erasing the
difference. All of it is string work in linear time; nothing here parses to SymPy or evaluates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from truegrade.graders.math._flags import MathFlag

__all__ = [
    "Answer",
    "ClockTime",
    "assignments",
    "balanced",
    "clock_time",
    "is_name",
    "name_key",
    "normalize_answer",
    "split_relation",
    "split_top_level",
    "undouble_commands",
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
# 11,\! 111,\! 100 (MATH's typesetting of 11,111,100): a comma followed by spacing and three digits
_SPACED_COMMA = re.compile(r"(?<=\d),(?:\s*\\[!,]\s*)+(?=\d{3}(?!\d))")
# 1 000 000 and 1\,000: digit groups of three after a space or thin space (SI grouping)
_SPACED_GROUPS = re.compile(r"(?<![\d.,])\d{1,3}(?:(?: |\\,|\\ |~)\d{3})+(?![\d.,])(?!\s*\d)")
_GROUP_SPACE = re.compile(r" |\\,|\\ |~")
# $...$ math delimiters inside an answer ("$125$ miles"); an escaped \$ is a dollar sign
_MATH_DOLLAR = re.compile(r"(?<!\\)\$")
# "\\le" written with its backslash doubled by over-escaping: the command, not a line break
_DOUBLED_COMMAND = re.compile(
    r"\\\\(?=(?:le|leq|ge|geq|lt|gt|ne|neq|frac|dfrac|tfrac|sqrt|boxed|cdot|times|pi|in|infty"
    r"|text|left|right)(?![a-zA-Z]))"
)
# a key escaped twice (JSON inside JSON): every backslash doubled, so no run of them is odd
_BACKSLASH_RUN = re.compile(r"\\+")
_DOUBLED_NAME = re.compile(r"(?<!\\)\\\\[a-zA-Z]")
_BMOD = re.compile(r"\\bmod(?![a-zA-Z])")
_PMOD_ARGUMENT = re.compile(r"\\pmod\s*([0-9a-zA-Z])")
# 2^6 3^5 5^4: a power then a number after a space is a product (a factorization as written);
# not a function's power (\sin^2 30)
_JUXTAPOSED_POWER = re.compile(r"(?<=[\d)}])(\^\s*(?:\d|\{\s*\d+\s*\}))\s+(?=\d)")
# a trigonometric function: a degree sign after it belongs to its argument (\cos 60^\circ)
_TRIG = re.compile(r"\\(?:sin|cos|tan|sec|csc|cot)(?![a-zA-Z])")
_DEGREE_SIGN = re.compile(r"°|\\degree(?![a-zA-Z])|\^\s*\{?\s*\\text\{\s*o\s*\}\s*\}?")
# Python / SymPy syntax in a key or an answer: x**2 is x^2, 2*x is 2 \cdot x
# 0x1854, 0b101, 0o17: integer literals in another base (a digit or letter before is no literal)
_RADIX_LITERAL = re.compile(r"(?<![\w.])0([xXbBoO])([0-9a-fA-F]{1,1000})(?![\w.])")
_RADIX_BASES = {"x": 16, "b": 2, "o": 8}
# a function called by its Python / SymPy name, not a LaTeX command (no backslash before it)
_FUNCTION_CALL = re.compile(
    r"(?<![\\a-zA-Z])(asin|acos|atan|sinh|cosh|tanh|sin|cos|tan|sec|csc|cot|exp|log|ln|sqrt"
    r"|Abs|abs)\s*\("
)
# SymPy's LaTeX printer writes asin(x) as \operatorname{asin}{\left(x \right)}
_OPERATOR_NAME = re.compile(r"\\operatorname\s*\{\s*(asin|acos|atan)\s*\}")
_PY_FUNCTIONS = {"asin": "\\arcsin", "acos": "\\arccos", "atan": "\\arctan"}
_PI_WORD = re.compile(r"(?<![\\a-zA-Z])pi(?![a-zA-Z])")
_EULER_E = re.compile(r"(?<![\\\w.])E(?![\w.])")
_POWER = re.compile(r"\*\*")
_STAR = re.compile(r"(?<=[\w)}\]])\s*\*\s*(?=[\w(\\{])")
_THOUSANDS = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+)(?![\d,])(?!\.\d*,)")
_PERCENT_WORD = r"(?:percent(?:age)?|per\s+cent|pct)"
_PERCENT = re.compile(
    rf"(?:\\%|%|\\text\{{\s*(?:{_PERCENT_WORD}|\\%|%)\s*\}}|\s*\b{_PERCENT_WORD}\.?)\s*$",
    re.IGNORECASE,
)
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
        letter_unit: The unit is one bare letter after the number (``5h``, ``10 m``): it may be
            a variable, so it is a unit only beside another unit (``normalize_answer``).
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
    letter_unit: bool = False


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


def normalize_answer(
    text: str, *, collapse_thousands: bool = True, letter_units: bool = True
) -> Answer:
    """Take an answer apart (see ``Answer``).

    Args:
        text: The statement, e.g. the content of a ``\\boxed{}``.
        collapse_thousands: Read ``10,000`` as one number (off when the gold answer is a list).
        letter_units: Read one bare letter that is a unit symbol after a number (``5h``) as a
            unit; off, it stays in the core as a variable would (``5h`` is 5 times h).
    """
    raw = text
    if len(text) > MAX_ANSWER_CHARS:
        return Answer(raw, "", problem=MathFlag.ANSWER_TOO_LONG)
    s = _strip_wrappers(undouble_commands(text))
    if len(_MATH_DOLLAR.findall(s)) >= 2 and len(_MATH_DOLLAR.findall(s)) % 2 == 0:
        s = _MATH_DOLLAR.sub(" ", s).strip()  # paired: math delimiters, not dollar signs
    s = _python_syntax(s)
    s = _SPACED_COMMA.sub(",", s)
    s = _DOT_DELIMITER.sub("", s)
    s = _NOISE.sub(lambda m: " " if m.group() in ("\\ ", "~", "\\;", "\\:", "\\>") else "", s)
    s = _FRAC_VARIANTS.sub(r"\\frac", s)
    s = _ONE_LETTER_COMMAND.sub(r"\1", s)
    s = _OPERATOR_NAME.sub(lambda m: _PY_FUNCTIONS.get(m.group(1), "\\" + m.group(1)), s)
    s = _TEXT_COMMANDS.sub(r"\\text{", s)
    s = _BMOD.sub(r"\\mod", s)
    s = _PMOD_ARGUMENT.sub(r"\\pmod{\1}", s)
    s = _JUXTAPOSED_POWER.sub(r"\1 \\cdot ", s)
    s = s.strip()
    percent = degrees = letter_unit = False
    unit: str | None = None
    match = _PERCENT.search(s)
    if match:
        percent, s = True, s[: match.start()].rstrip()
    if _TRIG.search(s):  # a degree sign in a function's argument: \cos 60^\circ is 1/2
        s = _DEGREE_SIGN.sub(lambda _: "^{\\circ}", s)
    else:
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
                letter_unit = len(match.group(1)) == 1
                if letter_units or not letter_unit:
                    unit = match.group(1) + (f"^{match.group(2)}" if match.group(2) else "")
                    s = s[: match.start()].rstrip()
    if unit is not None and unit_key(unit) in ("°",):
        degrees, unit = True, None
    s = _THOUSANDS_BRACE.sub(",", s)
    if collapse_thousands:
        s = _THOUSANDS.sub(lambda m: m.group(1).replace(",", ""), s)
        s = _SPACED_GROUPS.sub(lambda m: _GROUP_SPACE.sub("", m.group()), s)
    s = s.strip()
    stripped = _TEXT_BLOCK.sub(r"\1", s).strip()
    mathematical = bool(re.search(r"[\d\\^_=+*/<>()\[\]]", stripped)) or (
        "-" in stripped and not re.search(r"[a-zA-Z]{2}", stripped)  # -i, x-y; not "well-known"
    )
    is_text = bool(stripped) and (
        (not mathematical and len(stripped) > 1) or bool(_TEXT_BLOCK.fullmatch(s))
    )
    return Answer(
        raw,
        s,
        unit,
        percent,
        degrees,
        _text_key(_strip_wrappers(raw)),
        is_text,
        letter_unit=letter_unit and unit is not None,
    )


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


def undouble_commands(text: str) -> str:
    """``\\\\le`` as ``\\le``: a command whose backslash was doubled by over-escaping (a line
    break followed by the letters ``le`` means nothing in an answer).

    A text escaped twice throughout (``\\\\begin{pmatrix} 1 \\\\\\\\ 2 \\\\end{pmatrix}``, as
    datasets that store JSON inside JSON write it) has every backslash doubled: no run of them
    has odd length, and some doubled pair starts a command name. Then every run is halved. A text
    with one single backslash (``\\begin``) is as written, and its ``\\\\`` are row breaks."""
    if "\\\\" not in text:
        return text
    runs = _BACKSLASH_RUN.findall(text)
    if all(len(run) % 2 == 0 for run in runs) and _DOUBLED_NAME.search(text):
        return _BACKSLASH_RUN.sub(lambda m: "\\" * (len(m.group()) // 2), text)
    return _DOUBLED_COMMAND.sub(r"\\", text)


def _closing_parens(core: str) -> dict[int, int]:
    """The position of each ``(`` -> its ``)``, found in one pass."""
    closing: dict[int, int] = {}
    stack: list[int] = []
    for i, ch in enumerate(core):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            closing[stack.pop()] = i
    return closing


def _radix(match: re.Match[str]) -> str:
    try:
        return str(int(match.group(2), _RADIX_BASES[match.group(1).lower()]))
    except ValueError:  # 0b12 is not binary: left as written, to fail as what it is
        return match.group()


def _python_functions(core: str, python: bool) -> str:
    """``sqrt(1 - x**2)``, ``asin(x)``, ``exp(2*x)``, ``Abs(x)`` and ``pi`` as the LaTeX they
    stand for: read as LaTeX, ``asin(x)`` would be the product ``a s i n x`` with an imaginary
    ``i``. A bare ``log`` is the natural logarithm, as in SymPy, NumPy and every programming
    language, when the core is written in that notation (``python``: it multiplies with ``*``, or
    uses no LaTeX command at all); beside LaTeX commands it is LaTeX's ``\\log``. A lone ``E``
    is Euler's number only in ``*`` syntax, where SymPy prints it so (elsewhere it may be a point
    or a choice)."""
    core = _PI_WORD.sub(r"\\pi ", core)
    if "*" in core:
        core = _EULER_E.sub("e", core)
    calls = {m.start(): m for m in _FUNCTION_CALL.finditer(core)}
    if not calls:
        return core
    closing = _closing_parens(core)
    ends: dict[int, str] = {}  # ")" positions written as their function's closing
    out: list[str] = []
    i = 0
    while i < len(core):
        match = calls.get(i)
        if match is not None and match.end() - 1 in closing:
            name, close = match.group(1), closing[match.end() - 1]
            if name == "sqrt":
                out.append("\\sqrt{")
                ends[close] = "}"
            elif name in ("Abs", "abs"):
                out.append("\\left|")
                ends[close] = "\\right|"
            else:
                command = "\\ln" if name == "log" and python else _PY_FUNCTIONS.get(name)
                out.append((command or "\\" + name) + "(")
            i = match.end()
            continue
        out.append(ends.get(i, core[i]))
        i += 1
    return "".join(out)


def _python_syntax(core: str) -> str:
    """``x**4 + 2*x`` as LaTeX (``x^{4} + 2 \\cdot x``): keys exported from SymPy or Python use
    this syntax, and the LaTeX parser refuses ``**``. A ``**(...)`` exponent becomes a braced
    group so it is not mistaken for a power tower. Integer literals in base 16, 2 or 8
    (``0x1854``, ``-0b101``) are their values, and function calls and constants are read as
    ``_python_functions`` says."""
    if "0" in core:
        core = _RADIX_LITERAL.sub(_radix, core)
    if "(" in core or "pi" in core:
        core = _python_functions(core, "*" in core or "\\" not in core)
    if "*" not in core:
        return core
    closing = _closing_parens(core)
    out: list[str] = []
    braces: set[int] = set()  # ")" positions written as "}"
    i = 0
    while i < len(core):
        if (
            core.startswith("**", i)
            and i > 0
            and (core[i - 1].isalnum() or core[i - 1] in ")}]")
            and i + 2 < len(core)
            and (core[i + 2].isalnum() or core[i + 2] in "({\\-")
        ):
            if core[i + 2] == "(" and i + 2 in closing:
                out.append("^{")
                braces.add(closing[i + 2])
                i += 3
            else:
                out.append("^")
                i += 2
            continue
        out.append("}" if i in braces else core[i])
        i += 1
    return _STAR.sub(r" \\cdot ", "".join(out))


@dataclass(frozen=True)
class ClockTime:
    """A time of day as written: ``12:00``, ``4:30 p.m.``, ``16:45``."""

    hour: int
    minute: int
    second: int | None
    meridiem: str | None  # "am", "pm" or None


_CLOCK = re.compile(
    r"(\d{1,2}):([0-5]\d)(?::([0-5]\d))?\s*(?:\\text\{\s*)?"
    r"(?:([ap])\.?\s*m\.?)?\s*\}?",
    re.IGNORECASE,
)


def clock_time(core: str) -> ClockTime | None:
    """``core`` read as a clock time (hours up to 24, two-digit minutes), or None.

    ``7:32`` is a time here; whether the key means a time or a ratio is the caller's decision.
    """
    text = _TEXT_BLOCK.sub(r"\1", core).strip()
    match = _CLOCK.fullmatch(text)
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    second = int(match.group(3)) if match.group(3) else None
    meridiem = (match.group(4).lower() + "m") if match.group(4) else None
    if hour > 24 or (meridiem and not 1 <= hour <= 12):
        return None
    return ClockTime(hour, minute, second, meridiem)


_NAME_PARTS = re.compile(
    r"_\{[^{}]*\}|_[a-zA-Z0-9]|'+|\\(?:frac|dfrac|overline|angle|measuredangle|triangle|left"
    r"|right|vert|lvert|rvert|mathrm|operatorname|widehat|hat|bar|vec|mid)(?![a-zA-Z])"
    r"|[{}()|,:\s]|\[|\]"
)
_SUBSCRIPT_BRACES = re.compile(r"_\{([a-zA-Z0-9])\}")
_COMMAND_NAME = re.compile(r"\\[a-zA-Z]+(?:_\{?[\w\\]+\}?)?'*")


def is_name(lhs: str) -> bool:
    """``lhs`` names a quantity rather than computing one: ``x``, ``x_{1}``, ``f(x)``, ``AB``,
    ``|AB|``, ``(p, q)``, ``A:B``, ``\\frac{NO}{BO}``, ``\\alpha``. Digits outside subscripts,
    operators and powers make it an expression (``2x``, ``x+y``, ``a^2``)."""
    text = lhs.strip()
    if not text or len(text) > 60:
        return False
    if _COMMAND_NAME.fullmatch(text) and not re.match(r"\\(?:frac|sqrt|sin|cos|tan|log|ln)", text):
        return True
    rest = _NAME_PARTS.sub("", text)
    return bool(rest) and rest.isascii() and rest.isalpha() and len(rest) <= 12


def name_key(name: str) -> str:
    """A comparable form of a name: no spaces, ``a_{3}`` as ``a_3``."""
    return _SUBSCRIPT_BRACES.sub(r"_\1", re.sub(r"\s+", "", name))


def assignments(core: str) -> list[tuple[str | None, str]] | None:
    """``core`` read as named values, e.g. ``AB=4, CD=5`` or ``n=1, 2, 3``, or None.

    Returns ``(name, value)`` per top-level item (a bare value after a named one belongs to that
    name: ``n=1, 2, 3`` is three values of ``n``). None when no item is an assignment, when an
    item is a relation of another kind, or when a one-letter name occurs in its own value
    (``x = 2x - 5`` is an equation to solve, not a value).
    """
    out: list[tuple[str | None, str]] = []
    current: str | None = None
    named = False
    for item in split_top_level(core):
        parts = split_relation(item)
        if len(parts) == 1:
            if re.search(r"[<>]|\\[lg]eq?(?![a-zA-Z])|\\neq?(?![a-zA-Z])", item):
                return None
            out.append((current, item))
            continue
        lhs, value = parts[0], parts[-1]
        if not is_name(lhs) or not value:
            return None
        key = name_key(lhs)
        if re.fullmatch(r"[a-zA-Z](?:_\w+)?", key) and re.search(
            rf"(?<![a-zA-Z\\]){re.escape(key)}(?![a-zA-Z])", "=".join(parts[1:])
        ):
            return None
        current, named = key, True
        out.append((key, value))
    return out if named else None
