"""Fenced blocks of a text: what every grader that reads code or JSON out of a response starts
from. Its own module, importing nothing, so the code grader's workers load it without the JSON
grader's schema validator."""

from __future__ import annotations

__all__ = ["fenced_blocks", "fences"]


def fences(text: str, limit: int = 256) -> list[tuple[str, str]]:
    r"""``(label, body)`` of each closed ``` fenced block of a text, in order, at most ``limit``
    (linear time: each search starts where the last ended, however many fences a hostile text
    opens). The label is the opening fence's line, lower-cased (``python``, ``diff``, ``""``).

    Examples:
        >>> fences("a\n```Python\nx = 1\n```\n```\n2\n```")
        [('python', 'x = 1\n'), ('', '2\n')]
    """
    blocks: list[tuple[str, str]] = []
    pos = 0
    while len(blocks) < limit:
        start = text.find("```", pos)
        if start < 0:
            break
        line_end = text.find("\n", start)
        if line_end < 0:
            break
        end = text.find("```", line_end)
        if end < 0:
            break
        blocks.append((text[start + 3 : line_end].strip().lower(), text[line_end + 1 : end]))
        pos = end + 3
    return blocks


def fenced_blocks(text: str) -> list[str]:
    """Contents of the closed ``` fenced blocks of a text, in order (``fences``' bodies)."""
    return [body for _, body in fences(text, 64)]
