"""Math-Verify's own test cases, run through truegrade's ``math`` grader.

The cases (``data/math_verify_cases.jsonl``) are extracted mechanically from Math-Verify's test
files by ``extract_math_verify.py``. Each gold is given to ``math`` unchanged. A prediction is
wrapped in ``\\boxed{}`` when it is one bare expression or exactly one math span, because
``math`` reads only final-answer statements and Math-Verify's predictions are mostly bare
answers rather than responses:

- exactly one ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]`` span and nothing else (its
  content is boxed);
- otherwise, one line with no math delimiter, no ``\\boxed`` and no word of two or more letters
  outside a LaTeX command (``x^2+1``, ``7,425,000``, ``\\frac{1}{3}``: boxed as it is).

Anything else (a sentence, several spans, an existing ``\\boxed``) is passed unchanged, as a
response: then ``math``'s own extraction decides what its final answer is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
CASES = DATA / "math_verify_cases.jsonl"
DISAGREEMENTS = DATA / "math_verify_disagreements.yaml"

_SPANS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_WORD = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z]{2,}")
_COMMAND_ARG = re.compile(r"\\[a-zA-Z]+")


def load_cases() -> list[dict[str, Any]]:
    """The extracted cases, in file order."""
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


def _one_span(text: str) -> str | None:
    for left, right in _SPANS:
        if text.startswith(left) and text.endswith(right) and len(text) > len(left + right):
            inner = text[len(left) : len(text) - len(right)]
            if "$" not in inner and "\\[" not in inner and "\\(" not in inner:
                return inner.strip()
            return None
    return None


def prediction(pred: str) -> str:
    """The response ``math`` is given for a Math-Verify prediction (the module docstring's rule)."""
    text = pred.strip()
    if "\\boxed" in text or "\\fbox" in text:
        return pred
    inner = _one_span(text)
    if inner is not None:
        return f"\\boxed{{{inner}}}" if inner else pred
    bare = not any(d in text for d in ("$", "\\(", "\\[", "\n")) and not _WORD.search(
        _COMMAND_ARG.sub(" ", text)
    )
    return f"\\boxed{{{text}}}" if bare and text else pred


def samples() -> list[dict[str, Any]]:
    """One ``math`` sample per case."""
    return [
        {"id": c["id"], "response": prediction(c["pred"]), "reference": c["gold"]}
        for c in load_cases()
    ]
