"""Which text of a response is the program, and what runs in front of it.

The program is the last fenced block labelled ``python`` / ``py`` / ``python3`` (for a
stdin/stdout task in another language, one of that language's names: ``cpp``, ``c++``...), else the
last unlabelled fenced block, else the whole response. For HumanEval-style completions, where the
model continues the prompt's function, the prompt is put in front (``prompt_prefix``): ``always``,
``never``, or ``auto``, which prefixes it only when the response does not itself define the entry
point at module level.

Only string scanning and ``ast.parse`` happen here: nothing of the response is evaluated. Both
cost time linear in the response's size, which the grader caps (``response_bytes``) before this
reads it, save for one construct: Python 3.11's parser reads each field of an f-string in time
proportional to the length of its literal, so one literal of n fields costs time quadratic in
n (180 KB of ``f"{x}{x}..."`` took the grader seconds to parse, and the sandbox as long again to
compile). ``costly_fstrings`` measures that in linear time, before ``ast.parse`` runs, and a
program past ``FSTRING_WORK`` is refused unparsed.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from truegrade.graders.match import fences

__all__ = [
    "FSTRING_WORK",
    "ProgramSource",
    "build_program",
    "costly_fstrings",
    "extract_code",
    "parse",
]

FSTRING_WORK = 100_000_000
"""The most f-string work (fields times the length of their literal, summed over the literals)
a program may ask of Python's parser: about 20 ms of parsing here. An honest program is far
below (a 10 KB template of 500 fields is 5,000,000); 180 KB of fields in one literal is
about 10,000,000,000."""

_PYTHON_LABELS = frozenset({"python", "py", "python3"})
_MAX_BLOCKS = 256


def extract_code(response: str, labels: frozenset[str] = _PYTHON_LABELS) -> str:
    """The program text of a response (see the module docstring); ``labels`` are the fence
    labels of the program's language (a stdin/stdout task's language, Python by default)."""
    blocks = fences(response, _MAX_BLOCKS)
    labelled = [body for label, body in blocks if label.split(" ")[0] in labels]
    if labelled:
        return labelled[-1]
    unlabelled = [body for label, body in blocks if not label]
    if unlabelled:
        return unlabelled[-1]
    return response


def costly_fstrings(code: str, limit: int = FSTRING_WORK) -> str:
    """Why ``code``'s f-strings would cost Python's parser more than ``limit`` (see the module
    docstring), or "" when they would not. Linear: the braces of the whole text times its
    length bound the work, and only past ``limit`` is the text tokenized to measure each
    literal (the tokenizer reads an f-string as one token, in linear time)."""
    if code.count("{") * len(code) <= limit:
        return ""
    work = fields = longest = 0
    for literal in _fstring_literals(code):
        count = literal.count("{")
        work += count * len(literal)
        fields += count
        longest = max(longest, len(literal))
    if work <= limit:
        return ""
    return (
        f"its f-strings hold {fields:,} fields in literals of up to {longest:,} characters: "
        "Python's parser reads each field in time proportional to its literal's length, "
        f"{work:,} steps, past the {limit:,} the grader parses"
    )


def _fstring_literals(code: str) -> list[str]:
    """The text of each f-string literal of ``code``, as far as it tokenizes (what comes before
    a token error is what the parser would read before failing)."""
    literals: list[str] = []
    starts: list[tuple[int, int]] = []  # Python 3.12 on: an f-string is several tokens
    lines = code.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.STRING:
                prefix = token.string[: len(token.string) - len(token.string.lstrip("rRbBuUfF"))]
                if "f" in prefix.lower():
                    literals.append(token.string)
            elif token.type == _FSTRING_START:
                starts.append(token.start)
            elif token.type == _FSTRING_END and starts:
                (row, col), (end_row, end_col) = starts.pop(), token.end
                literals.append(code[offsets[row - 1] + col : offsets[end_row - 1] + end_col])
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return literals


_FSTRING_START: int = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END: int = getattr(tokenize, "FSTRING_END", -1)


def parse(source: str) -> ast.Module | None:
    """The syntax tree of ``source``, or None when it is not valid Python (parsing only)."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _defines(tree: ast.Module | None, name: str) -> bool:
    if tree is None:
        return False
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign))
        and (
            getattr(node, "name", None) == name
            or any(isinstance(t, ast.Name) and t.id == name for t in getattr(node, "targets", []))
        )
        for node in tree.body
    )


@dataclass(frozen=True)
class ProgramSource:
    """What runs in the sandbox, and which part of it came from the response.

    Attributes:
        source: The whole program (prompt prefix included, if any).
        response_code: The part taken from the response (what the static tells read).
        prefixed: Whether the prompt was put in front.
        tree: The syntax tree of ``response_code`` (None when it does not parse, or was not
            parsed).
        too_costly: Why the program was not parsed: its f-strings would cost the parser more
            than ``FSTRING_WORK`` ("" when it was parsed). It must not be compiled either.
    """

    source: str
    response_code: str
    prefixed: bool
    tree: ast.Module | None
    too_costly: str = ""


def build_program(
    response: str, prompt: str | None, entry_point: str | None, mode: str
) -> ProgramSource:
    """Assemble the program for a response.

    Args:
        response: The response text.
        prompt: The prompt text, when it is code a completion continues.
        entry_point: The function the tests call (None for stdin/stdout tests).
        mode: ``auto``, ``always`` or ``never`` (see the module docstring).
    """
    code = extract_code(response)
    too_costly = costly_fstrings(code)
    if too_costly:
        return ProgramSource(code, code, False, None, too_costly)
    tree = parse(code)
    use_prompt = bool(prompt) and (
        mode == "always"
        or (mode == "auto" and entry_point is not None and not _defines(tree, entry_point))
    )
    if use_prompt:
        assert prompt is not None
        return ProgramSource(prompt + code, code, True, tree)
    return ProgramSource(code, code, False, tree)
