"""Reading recorded pairwise verdicts and labels in the shapes they are published in.

A judge's verdicts are often recorded once, at great cost, and checked many times; so they are
read as they are, never converted by hand. Each reader is a column mapping onto
:class:`~truegrade.validate.RecordedPair`:

* ``judgebench``: JudgeBench's ``outputs/*.jsonl`` (``pair_id``, ``source``, ``label`` as
  ``A>B`` / ``B>A``, ``judgments`` = one ``{"decision": ...}`` per order, the second order with
  the responses swapped; reward models add ``judgment.scores``). The category is the paper's
  (Knowledge = ``mmlu-pro*``, Reasoning, Math, Coding).
* ``mt-bench``: FastChat's judgment jsonl (``gpt-4_pair.jsonl``: ``question_id``, ``model_1``,
  ``model_2``, ``g1_winner``, ``g2_winner``, ``judge``, ``turn``; both games already in the
  model_1/model_2 frame) and MT-Bench's human judgments (``model_a``, ``model_b``, ``winner``);
  a pair is a question, a turn and the two models in either order.
* ``alpaca-eval``: AlpacaEval annotations (``instruction``, ``generator_1``, ``generator_2``,
  ``preference``: 1 = the first output, 2 = the second, 1.5 or 0 a draw, between: a
  probability).
* ``grades``: truegrade's own results (``id``, ``score``) for the two sides of preference rows,
  graded as ``ID::chosen`` and ``ID::rejected`` (what ``validate --pairwise`` grades).

Rows that cannot be read raise a :class:`~truegrade.core.DataError` naming the file and line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from truegrade.core import DataError, parse_json, read_text
from truegrade.validate._agreement import RecordedPair

__all__ = [
    "VERDICT_FORMATS",
    "VerdictFormat",
    "detect_format",
    "read_alpaca_eval",
    "read_grades_pairs",
    "read_judgebench",
    "read_mt_bench",
    "read_recorded",
]

VerdictFormat = Literal["judgebench", "mt-bench", "alpaca-eval", "grades"]
#: The recorded-verdict formats ``detect_format`` tells apart (``--verdicts-format`` takes these).
VERDICT_FORMATS: tuple[str, ...] = ("judgebench", "mt-bench", "alpaca-eval", "grades")


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """JSON objects with their line numbers (JSONL, or a JSON array; ``.gz`` allowed)."""
    text = read_text(path, "verdicts file", gz=True)
    if text.lstrip().startswith("["):
        data = parse_json(text, "verdicts file", path=path)
        if not isinstance(data, list):
            raise DataError("a JSON verdicts file must hold a list of records", path=str(path))
        items: list[tuple[int, Any]] = list(enumerate(data, start=1))
    else:
        items = []
        for line, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                items.append((line, json.loads(raw)))
            except json.JSONDecodeError as exc:
                raise DataError(f"not JSON: {exc.msg}", path=str(path), line=line) from None
    for line, row in items:
        if not isinstance(row, Mapping):
            raise DataError("a row must be a JSON object", path=str(path), line=line)
        yield line, dict(row)


def _need(row: Mapping[str, Any], key: str, path: Path, line: int, shape: str) -> Any:
    if key not in row:
        keys = ", ".join(sorted(map(str, row))[:10])
        raise DataError(f"not a {shape} row: no {key!r} (it has {keys})", path=str(path), line=line)
    return row[key]


_JUDGEBENCH_LABELS: dict[str, Literal["A", "B", "tie"]] = {"A>B": "A", "B>A": "B", "A=B": "tie"}
_JUDGEBENCH_DECISIONS = {"A>B": 1.0, "A>>B": 1.0, "B>A": 0.0, "B>>A": 0.0, "A=B": 0.5}
_JUDGEBENCH_CATEGORIES = (
    ("mmlu-pro", "knowledge"),
    ("livebench-reasoning", "reasoning"),
    ("livebench-math", "math"),
    ("livecodebench", "coding"),
)


def _judgebench_category(source: str) -> str:
    for prefix, category in _JUDGEBENCH_CATEGORIES:
        if source.startswith(prefix):
            return category
    return source


def read_judgebench(path: str | Path) -> list[RecordedPair]:
    """JudgeBench's per-judge outputs (see the module docstring).

    The second judgment is of the swapped pair, so its decision is turned back. A decision that
    is missing, null or not one of JudgeBench's (``A>B``, ``B>A``, ``A=B``) is unreadable. When
    every judgment of a row carries reward ``scores``, the first judgment's scores are the
    pair's (a reward model scores each response alone; JudgeBench runs it in one order).
    """
    p = Path(path)
    out = []
    for line, row in _rows(p):
        pair_id = str(_need(row, "pair_id", p, line, "JudgeBench"))
        label_text = str(_need(row, "label", p, line, "JudgeBench"))
        if label_text not in _JUDGEBENCH_LABELS:
            raise DataError(
                f"label must be A>B, B>A or A=B, got {label_text!r}", path=str(p), line=line
            )
        judgments = _need(row, "judgments", p, line, "JudgeBench")
        if not isinstance(judgments, list):
            raise DataError("'judgments' must be a list", path=str(p), line=line)
        verdicts: list[float | None] = []
        scores: tuple[float, float] | None = None
        for order, judgment in enumerate(judgments):
            decision = judgment.get("decision") if isinstance(judgment, Mapping) else None
            value = _JUDGEBENCH_DECISIONS.get(str(decision).strip()) if decision else None
            if value is not None and order % 2 == 1:
                value = 1.0 - value  # the swapped game: its A is the pair's B
            verdicts.append(value)
        first = judgments[0] if judgments else None
        inner = first.get("judgment") if isinstance(first, Mapping) else None
        if isinstance(inner, Mapping) and isinstance(inner.get("scores"), list):
            raw = inner["scores"]
            if len(raw) != 2 or not all(_is_number(x) for x in raw):
                raise DataError(
                    f"judgment scores must be two numbers, got {raw!r}", path=str(p), line=line
                )
            scores = (float(raw[0]), float(raw[1]))
        source = str(row.get("source", ""))
        out.append(
            RecordedPair(
                id=pair_id,
                label=_JUDGEBENCH_LABELS[label_text],
                verdicts=verdicts,
                scores=scores,
                fields={"source": source, "category": _judgebench_category(source)},
            )
        )
    return out


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


_MT_WINNERS = {"model_1": 1.0, "model_2": 0.0, "tie": 0.5, "model_a": 1.0, "model_b": 0.0}


def _mt_key(row: Mapping[str, Any], first: str, second: str) -> tuple[str, bool]:
    """The pair's key (models in sorted order) and whether this row's first model is its A."""
    a, b = str(row[first]), str(row[second])
    lo, hi = sorted((a, b))
    return f"{row['question_id']}:{row.get('turn', 1)}:{lo}|{hi}", a == lo


def read_mt_bench(path: str | Path) -> dict[str, list[tuple[float | None, ...]]]:
    """MT-Bench votes per pair key: FastChat judgments (two games each) or human judgments.

    Returns ``{key: [votes]}``, each vote a tuple of preferences for the pair's A (the model
    first in sorted order): two for a judge's games (``g1_winner``, ``g2_winner``; ``error`` or
    anything else is unreadable, None), one for a human's ``winner``. A key may hold several
    votes (several judges or annotators).
    """
    p = Path(path)
    votes: dict[str, list[tuple[float | None, ...]]] = {}
    for line, row in _rows(p):
        if "model_1" in row:
            for k in ("question_id", "model_2", "g1_winner", "g2_winner"):
                _need(row, k, p, line, "FastChat judgment")
            key, forward = _mt_key(row, "model_1", "model_2")
            games: tuple[float | None, ...] = (
                _MT_WINNERS.get(str(row["g1_winner"])),
                _MT_WINNERS.get(str(row["g2_winner"])),
            )
        elif "model_a" in row:
            for k in ("question_id", "model_b", "winner"):
                _need(row, k, p, line, "MT-Bench human judgment")
            key, forward = _mt_key(row, "model_a", "model_b")
            winner = str(row["winner"])
            if winner not in ("model_a", "model_b", "tie"):
                raise DataError(
                    f"winner must be model_a, model_b or tie, got {winner!r}",
                    path=str(p),
                    line=line,
                )
            games = (_MT_WINNERS[winner],)
        else:
            raise DataError(
                "not an MT-Bench row: expected model_1/model_2 (judgments) or model_a/model_b "
                "(human judgments)",
                path=str(p),
                line=line,
            )
        turned = tuple(None if g is None else (g if forward else 1.0 - g) for g in games)
        votes.setdefault(key, []).append(turned)
    return votes


def read_alpaca_eval(path: str | Path) -> list[RecordedPair]:
    """AlpacaEval annotations as pairs with no label of their own (``label`` set to ``tie``
    as a placeholder; join them with labels before measuring agreement).

    The pair id is ``instruction|generator_1|generator_2``; A is ``output_1``. A missing
    preference (the annotator failed) is unreadable.
    """
    p = Path(path)
    out = []
    for line, row in _rows(p):
        for k in ("instruction", "generator_1", "generator_2"):
            _need(row, k, p, line, "AlpacaEval annotation")
        raw = row.get("preference")
        value: float | None = None
        if raw is not None:
            if not _is_number(raw):
                raise DataError(f"preference is not a number: {raw!r}", path=str(p), line=line)
            pref = 1.5 if float(raw) == 0 else float(raw)
            if not 1 <= pref <= 2:
                raise DataError(
                    f"preference must be in [1, 2] or 0, got {raw}", path=str(p), line=line
                )
            value = 2.0 - pref  # P(output_1 better)
        pair_id = f"{row['instruction']}|{row['generator_1']}|{row['generator_2']}"
        out.append(
            RecordedPair(
                id=pair_id,
                label="tie",
                verdicts=[value],
                group=str(row["instruction"]),
                fields={"generator_2": str(row["generator_2"])},
            )
        )
    return out


def read_grades_pairs(path: str | Path) -> dict[str, tuple[float | None, float | None]]:
    """Reward scores per preference row from a truegrade results file: ``{id: (chosen,
    rejected)}`` from rows ``ID::chosen`` and ``ID::rejected`` (a side graded with an error, or
    missing, is None)."""
    p = Path(path)
    sides: dict[str, dict[str, float | None]] = {}
    for line, row in _rows(p):
        rid = str(_need(row, "id", p, line, "results"))
        base, sep, side = rid.rpartition("::")
        if not sep or side not in ("chosen", "rejected"):
            raise DataError(
                f"id {rid!r} is not a side of a pair (ID::chosen or ID::rejected)",
                path=str(p),
                line=line,
            )
        score = row.get("score")
        value: float | None = None
        if row.get("error") is not None:
            pass
        elif isinstance(score, (int, float)) and _is_number(score):
            value = float(score)
        else:
            raise DataError(f"score is not a number: {score!r}", path=str(p), line=line)
        sides.setdefault(base, {})[side] = value
    return {k: (v.get("chosen"), v.get("rejected")) for k, v in sides.items()}


def detect_format(path: str | Path) -> VerdictFormat:
    """Which reader a file needs, from its first row's columns."""
    p = Path(path)
    for line, row in _rows(p):
        if "pair_id" in row and "judgments" in row:
            return "judgebench"
        if ("model_1" in row and "g1_winner" in row) or ("model_a" in row and "winner" in row):
            return "mt-bench"
        if "generator_1" in row and "preference" in row:
            return "alpaca-eval"
        if "id" in row and "score" in row:
            return "grades"
        keys = ", ".join(sorted(map(str, row))[:10])
        raise DataError(
            f"unknown verdicts shape (columns {keys}); expected one of "
            + ", ".join(VERDICT_FORMATS),
            path=str(p),
            line=line,
        )
    raise DataError("the verdicts file holds no rows", path=str(p))


def read_recorded(path: str | Path, fmt: VerdictFormat | None = None) -> list[RecordedPair]:
    """Labelled pairs from a file that holds both labels and verdicts (JudgeBench's outputs)."""
    fmt = fmt or detect_format(path)
    if fmt == "judgebench":
        return read_judgebench(path)
    raise DataError(
        f"a {fmt} file holds verdicts without labels: give the labels as the data file",
        path=str(path),
    )
