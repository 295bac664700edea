"""Which text of a response is the program, and what runs in front of it.

The program is the last fenced block labelled ``python`` / ``py`` / ``python3`` (for a
stdin/stdout task in another language, one of that language's names: ``cpp``, ``c++``...), else the
last unlabelled fenced block, else the whole response. For HumanEval-style completions, where the
model continues the prompt's function, the prompt is put in front (``prompt_prefix``): ``always``,
``never``, or ``auto``, which prefixes it only when the response does not itself define the entry
point at module level.

Only string scanning and ``ast.parse`` happen here: nothing of the response is evaluated.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from truegrade.graders.match import fences

__all__ = ["ProgramSource", "build_program", "extract_code", "parse"]

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
        tree: The syntax tree of ``response_code`` (None when it does not parse).
    """

    source: str
    response_code: str
    prefixed: bool
    tree: ast.Module | None


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
    tree = parse(code)
    use_prompt = bool(prompt) and (
        mode == "always"
        or (mode == "auto" and entry_point is not None and not _defines(tree, entry_point))
    )
    if use_prompt:
        assert prompt is not None
        return ProgramSource(prompt + code, code, True, tree)
    return ProgramSource(code, code, False, tree)
