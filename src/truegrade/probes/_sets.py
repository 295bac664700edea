"""Probe sets: read from JSONL, bundled with truegrade, or converted from Anthropic's
user-view sycophancy data.

A sycophancy row is ``{"id", "prompt", "response", "reference"?, "answer"?, "wrong_answer"?,
"variants"?}`` (see ``SycophancyItem.from_row``); a self-preference row is ``{"id", "prompt",
"answer"}`` or ``{"id", "prompt", "own", "other", "other_family"}``. Rows in the shape of
Anthropic's sycophancy data (``question`` with ``answer_matching_behavior`` /
``answer_not_matching_behavior``, or ``prompt`` with ``incorrects`` / ``corrects``: a user's
biography stating a view, then a multiple-choice question) are converted as they are read.

The bundled sets are small and written for truegrade: factual questions with a correct
response, a wrong answer for the user to assert, and plain answers to dress in each family's
style. They are enough to tell a strong bias from none; a serious audit brings its own items
from the judge's domain.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from truegrade.core import DataError
from truegrade.data import read_rows
from truegrade.probes._self_preference import SelfPreferenceItem
from truegrade.probes._sycophancy import SycophancyItem, SycophancyVariant

__all__ = [
    "bundled_probe_set",
    "read_probe_set",
    "sycophancy_items_from_user_view",
]

Probe = Literal["sycophancy", "self_preference"]

_CHOICE = re.compile(r"^\s*\((?P<letter>[A-Z])\)\s*(?P<text>.+?)\s*$", re.MULTILINE)
# a sentence boundary: end punctuation, space, a capital (so "the U.S. and" is not one)
_SENTENCE = re.compile(r"[.!?]\s+(?=[A-Z])")


def _split_view(prompt: str) -> tuple[str, str]:
    """(the question with its choices, the whole prompt): the question is the last sentence
    before the choices; what precedes it is the user's biography and view."""
    first_choice = _CHOICE.search(prompt)
    head = prompt[: first_choice.start()] if first_choice else prompt
    boundaries = list(_SENTENCE.finditer(head))
    start = boundaries[-1].end() if boundaries else 0
    return prompt[start:].strip(), prompt


def sycophancy_items_from_user_view(
    rows: Iterable[Mapping[str, Any]], *, source: str = "user-view"
) -> list[SycophancyItem]:
    """Anthropic-style user-view rows as sycophancy items, two per row.

    The plain prompt is the question without the biography; the variant is the published
    prompt (biography included). One item's response is the choice matching the user's view
    (stance +1), the other's the choice against it (stance -1), each written out as
    ``(A) text``. A sycophantic grader scores the first higher and the second lower when it
    reads the biography.
    """
    items: list[SycophancyItem] = []
    for index, row in enumerate(rows):
        text = row.get("question") or row.get("prompt")
        if "answer_matching_behavior" in row:
            matching, other = row["answer_matching_behavior"], row["answer_not_matching_behavior"]
        else:  # "incorrects": the answers that repeat the user's view back
            matching, other = row["incorrects"][0], row["corrects"][0]
        if not isinstance(text, str):
            raise ValueError(f"user-view row {index}: no question")
        choices = {m.group("letter"): m.group("text") for m in _CHOICE.finditer(text)}
        question, full = _split_view(text)
        question = re.sub(r"\s*Answer:\s*$", "", question)
        full = re.sub(r"\s*Answer:\s*$", "", full)
        for stance, token in ((1, matching), (-1, other)):
            letter = token.strip().strip("()")
            if letter not in choices:
                raise ValueError(f"user-view row {index}: no choice {token!r} in the question")
            items.append(
                SycophancyItem(
                    id=f"{source}-{index}-{'with' if stance > 0 else 'against'}",
                    prompt=question,
                    response=f"({letter}) {choices[letter]}",
                    variants=(SycophancyVariant("belief", full, stance),),
                )
            )
    return items


def _rows(lines: Iterable[str], where: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{where}:{number}: a row must be a JSON object")
        rows.append(row)
    return rows


def _items(
    rows: list[dict[str, Any]], probe: Probe, where: str
) -> list[SycophancyItem] | list[SelfPreferenceItem]:
    if probe == "self_preference":
        return [SelfPreferenceItem.from_row(r, i) for i, r in enumerate(rows)]
    if rows and ("answer_matching_behavior" in rows[0] or "incorrects" in rows[0]):
        return sycophancy_items_from_user_view(rows, source=Path(where).stem)
    return [SycophancyItem.from_row(r, i) for i, r in enumerate(rows)]


def read_probe_set(
    path: str | Path, probe: Probe
) -> list[SycophancyItem] | list[SelfPreferenceItem]:
    """A probe set from a JSONL, JSON or Parquet file, gzipped or not (shapes in the module
    docstring), read as every truegrade input is (``truegrade.data.read_rows``).

    Raises:
        DataError: naming the file (and the line): it is missing, unreadable, holds no rows, or a
            row is malformed or lacks what the probe needs.
    """
    what = f"{probe.replace('_', '-')} probe set"
    numbered = list(read_rows(path, what=what))
    if not numbered:
        raise DataError(f"the {what} holds no rows", path=str(path))
    rows = [row for _, row in numbered]
    try:
        return _items(rows, probe, str(path))
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        # name the row: the item builders number rows from 0 in the message they raise
        index = _row_index(str(exc))
        line = numbered[index][0] if index is not None and index < len(numbered) else None
        raise DataError(f"the {what}: {exc}", path=str(path), line=line) from None


def _row_index(message: str) -> int | None:
    found = re.search(r"\brow (\d+)", message)
    return int(found.group(1)) if found else None


def bundled_probe_set(probe: Probe) -> list[SycophancyItem] | list[SelfPreferenceItem]:
    """truegrade's own small probe set for ``probe``."""
    name = {"sycophancy": "sycophancy.jsonl", "self_preference": "self_preference.jsonl"}[probe]
    text = (resources.files("truegrade.probes") / "data" / name).read_text("utf-8")
    return _items(_rows(text.splitlines(), name), probe, name)
