"""Outside answer-checking suites, run through truegrade's ``math`` grader.

Each suite is a JSONL file of (gold, prediction, expected verdict) cases extracted mechanically
from another project's tests (``extract_*.py``), with a YAML file that lists every case where
``math`` disagrees under the design choice that explains it. Math-Verify's suite
(``data/math_verify_cases.jsonl``, ``extract_math_verify.py``) was the first; the helpers below
serve every suite the same way. Each gold is given to ``math`` unchanged. A prediction is
wrapped in ``\\boxed{}`` when it is one bare expression or exactly one math span, because
``math`` reads only final-answer statements and Math-Verify's predictions are mostly bare
answers rather than responses:

- exactly one ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]`` span and nothing else (its
  content is boxed);
- otherwise, one line with no math delimiter, no ``\\boxed`` and no word of two or more letters
  (of any script) outside a LaTeX command (``x^2+1``, ``7,425,000``, ``\\frac{1}{3}``: boxed as
  it is).

Anything else (a sentence, several spans, an existing ``\\boxed``) is passed unchanged, as a
response: then ``math``'s own extraction decides what its final answer is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data"
CASES = DATA / "math_verify_cases.jsonl"
DISAGREEMENTS = DATA / "math_verify_disagreements.yaml"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "math.md"
# a disagreement of a class that is being fixed in the grader, listed until the fix lands; its
# choice names the class, not a row of the docs' table
PENDING = "pending_fix_"
# a case whose expected verdict is wrong (each listed with the reason in a comment)
WRONG_LABEL = "suite_wrong"
#: Choices under which ``math`` accepts, by design, an answer a suite rejects: each is a row of
#: docs/math.md's "Design choices" table that argues why the answer is right (a suite that
#: compares text counts a list's order; a missing unit is not a wrong one).
ACCEPTING = frozenset({"unordered_list", "missing_unit"})

_SPANS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
# two letters or more, of any script (a Chinese or Arabic sentence is prose too)
_WORD = re.compile(r"(?<![\\])(?<![^\W\d_])[^\W\d_]{2,}")
_COMMAND_ARG = re.compile(r"\\[a-zA-Z]+")


def load_cases(path: Path = CASES) -> list[dict[str, Any]]:
    """The extracted cases of one suite, in file order."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


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


def boxed(pred: str) -> str:
    """The response for a prediction that is an answer, never prose (equivalence-function tests
    compare two answers): the content of its one math span, or the whole text, boxed."""
    text = pred.strip()
    inner = _one_span(text)
    return f"\\boxed{{{inner if inner else text}}}"


def samples(path: Path = CASES, *, answers: bool = False) -> list[dict[str, Any]]:
    """One ``math`` sample per case; ``answers``: every prediction is an answer (``boxed``)."""
    respond = boxed if answers else prediction
    return [
        {"id": c["id"], "response": respond(c["pred"]), "reference": c["gold"]}
        for c in load_cases(path)
    ]


def design_rows() -> dict[str, str]:
    """First cell -> the whole line, for each row of the docs' one "Design choices" table."""
    text = DOCS.read_text()
    section = text.split("## Design choices", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] not in ("rule", "---") and len(cells) >= 3:
            rows[cells[0]] = line
    return rows


def listed(path: Path) -> tuple[dict[str, str], dict[int, str]]:
    """A disagreements file: its choices (name -> docs row) and its cases (id -> choice)."""
    data = yaml.safe_load(path.read_text())
    return data["choices"], {int(k): v for k, v in (data["cases"] or {}).items()}


def grade(path: Path, *, answers: bool = False) -> list[tuple[dict[str, Any], Any]]:
    """Every case of one suite with ``math``'s grade of it."""
    from truegrade.core import load_grader

    grades = load_grader("math").grade_batch(samples(path, answers=answers))
    return list(zip(load_cases(path), grades, strict=True))


def false_accepts(outcomes, cases: dict[int, str]) -> list[tuple]:
    """Cases the suite rejects and ``math`` accepts, save those listed under a pending fix, as a
    wrong label (``WRONG_LABEL``: checked by hand, the suite's verdict is the mistake) or under a
    choice that accepts by design (``ACCEPTING``)."""
    return [
        (c["id"], c["gold"][:60], c["pred"][:60], g.flags)
        for c, g in outcomes
        if g.passed is True
        and not c["expected"]
        and not cases.get(c["id"], "").startswith(PENDING)
        and cases.get(c["id"]) != WRONG_LABEL
        and cases.get(c["id"]) not in ACCEPTING
    ]


def undocumented(choices: dict[str, str]) -> list[tuple[str, str]]:
    """Choices whose row is missing from the docs' "Design choices" table."""
    rows = design_rows()
    return [(n, r) for n, r in choices.items() if not n.startswith(PENDING) and r not in rows]


def unexplained(outcomes, cases: dict[int, str]) -> list[tuple]:
    """Disagreements that are not listed."""
    return [
        (
            c["id"],
            c["gold"][:50],
            c["pred"][:50],
            g.flags,
            g.explanation or g.error,
        )
        for c, g in outcomes
        if bool(g.passed) != c["expected"] and c["id"] not in cases
    ]


def agreeing(outcomes, cases: dict[int, str]) -> list[int]:
    """Listed cases that no longer disagree."""
    return [c["id"] for c, g in outcomes if c["id"] in cases and bool(g.passed) == c["expected"]]
