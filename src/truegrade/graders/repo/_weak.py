"""Wrong fixes made from the right one: mutants of a task's gold patch, to measure how tightly the
task's tests pin the fix.

A task's tests are a specification, and a loose one rewards wrong fixes: studies that add tests
to SWE-bench, or compare each "resolved" patch's behaviour with the gold patch's, find a large
share of accepted patches that behave differently from the reference. ``gold_mutants`` makes
such patches on purpose: the gold patch with one of the lines it adds changed the way a slightly
wrong fix would differ (a condition negated, a comparison or a boolean operator turned, a
constant moved by one, a statement dropped). Each still applies exactly where the gold patch
does (a line is replaced, never added or removed, so the hunks keep their counts). A mutant the
task's tests still resolve is a wrong fix they reward: the audit reports it
(``task_weak_tests``) with the line it changed.

Some mutants are equivalent to the gold patch (a dropped ``pass``, a bound that does not matter
for any input): a survivor is a question for a reviewer, not proof of a wrong fix; the finding
lists each so it can be read.
"""

from __future__ import annotations

import ast
import io
import random
import re
import textwrap
import tokenize
from dataclasses import dataclass

__all__ = ["GoldMutant", "gold_mutants"]


@dataclass(frozen=True)
class GoldMutant:
    """The gold patch with one added line changed."""

    patch: str
    path: str
    """The file the changed line is in."""
    old: str
    new: str
    how: str
    """``negated``, ``operator``, ``boolean``, ``constant``, ``dropped`` (a line), or
    ``partial`` (one hunk of a patch of several left out: a fix half made)."""

    def describe(self) -> str:
        return f"{self.path}: {self.old.strip()!r} -> {self.new.strip()!r} ({self.how})"


_SWAP_OPS = {
    "==": "!=",
    "!=": "==",
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
    "is": "is not",
    "in": "not in",
}
_BLOCK = re.compile(r"^(\s*)(if|elif|while)\s+(.+?):\s*(#.*)?$")
_OPENERS = ("def ", "class ", "async ", "@", "else", "try", "except", "finally", "with ", "for ")


def _parses(line: str) -> bool:
    """Whether one changed line is still a statement Python reads (a block's header with a
    body supplied)."""
    code = textwrap.dedent(line)
    if code.rstrip().endswith(":"):
        code += "\n    pass"
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _tokens(line: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []


def _changes(line: str) -> list[tuple[str, str]]:
    """``(new line, how)`` for each way to mutate one added line (code only, never a string's
    inside or a comment)."""
    out: list[tuple[str, str]] = []
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return out
    indent = line[: len(line) - len(line.lstrip())]
    block = _BLOCK.match(line)
    if block:
        out.append((f"{block.group(1)}{block.group(2)} not ({block.group(3)}):", "negated"))
    body = stripped
    for tok in _tokens(line):
        start, end = tok.start[1], tok.end[1]
        if tok.type == tokenize.OP and tok.string in _SWAP_OPS:
            new = body[:start] + _SWAP_OPS[tok.string] + body[end:]
            out.append((indent + new, "operator"))
        elif tok.type == tokenize.NAME and tok.string in ("and", "or"):
            new = body[:start] + ("or" if tok.string == "and" else "and") + body[end:]
            out.append((indent + new, "boolean"))
        elif tok.type == tokenize.NAME and tok.string in ("True", "False"):
            new = body[:start] + ("False" if tok.string == "True" else "True") + body[end:]
            out.append((indent + new, "constant"))
        elif tok.type == tokenize.NUMBER and re.fullmatch(r"\d+", tok.string):
            new = body[:start] + str(int(tok.string) + 1) + body[end:]
            out.append((indent + new, "constant"))
    complete = not stripped.endswith((":", ",", "(", "[", "{", "\\")) and _parses(line)
    if complete and not stripped.startswith(_OPENERS) and stripped not in ("pass", "..."):
        out.append((indent + "pass", "dropped"))
    # a line that is a whole statement must stay one; a continuation line cannot be checked
    # alone (a mutant that breaks the file fails to collect: killed, never a false survivor)
    whole = _parses(line)
    return [
        (new, how) for new, how in out if new.strip() != stripped and (_parses(new) or not whole)
    ]


def _partials(gold_patch: str) -> list[GoldMutant]:
    """The patch without each one of its hunks, when it has several (git applies the others
    at their shifted lines)."""
    lines = gold_patch.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("@@")]
    if len(starts) < 2:
        return []
    out = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        for j in range(start + 1, end):  # a file's header is not part of its last hunk
            if lines[j].startswith("diff --git"):
                end = j
                break
        rest = lines[:start] + lines[end:]
        text = "".join(_without_empty_files(rest))
        added = [line[1:].strip() for line in lines[start + 1 : end] if line.startswith("+")]
        shown = added[0] if added else lines[start].strip()
        out.append(GoldMutant(text, _path_of(lines, start), shown, "", "partial"))
    return out


def _without_empty_files(lines: list[str]) -> list[str]:
    """``lines`` without the headers of files left with no hunk."""
    out: list[str] = []
    block: list[str] = []
    for line in [*lines, "diff --git END"]:
        if line.startswith("diff --git"):
            if any(b.startswith("@@") for b in block):
                out += block
            block = [line]
        else:
            block.append(line)
    return out


def gold_mutants(gold_patch: str, *, limit: int = 8, seed: str = "") -> list[GoldMutant]:
    """Up to ``limit`` mutants of ``gold_patch``: each hunk left out (when there are several),
    then one change of each line it adds to Python sources, then more, chosen the same way for
    the same ``seed``."""
    lines = gold_patch.splitlines(keepends=True)
    path = ""
    candidates: dict[int, list[tuple[str, str]]] = {}
    for number, raw in enumerate(lines):
        if raw.startswith("+++ "):
            target = raw[4:].strip()
            path = target[2:] if target.startswith("b/") else target
        elif raw.startswith("+") and path.endswith(".py"):
            text = raw[1:].rstrip("\r\n")
            found = _changes(text)
            if found:
                candidates[number] = found
    rng = random.Random(f"gold-mutants:{seed}")
    order: list[tuple[int, str, str]] = []
    pools = {n: rng.sample(found, len(found)) for n, found in candidates.items()}
    while pools and len(order) < limit:
        for number in rng.sample(sorted(pools), len(pools)):
            new, how = pools[number].pop()
            order.append((number, new, how))
            if not pools[number]:
                del pools[number]
            if len(order) >= limit:
                break
    out = _partials(gold_patch)[:limit]
    order = order[: limit - len(out)]
    for number, new, how in order:
        changed = list(lines)
        ending = "\n" if lines[number].endswith("\n") else ""
        changed[number] = "+" + new + ending
        out.append(
            GoldMutant("".join(changed), _path_of(lines, number), lines[number][1:], new, how)
        )
    return out


def _path_of(lines: list[str], number: int) -> str:
    for raw in reversed(lines[:number]):
        if raw.startswith("+++ "):
            target = raw[4:].strip()
            return target[2:] if target.startswith("b/") else target
    return ""
