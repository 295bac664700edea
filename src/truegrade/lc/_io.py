"""Reading pairwise verdicts and published leaderboards into the arrays the analyses use.

Two shapes are read as they are:

* a table (CSV, optionally gzipped) with one verdict per row: ``generator_1`` (the baseline),
  ``generator_2`` (or ``model``), ``instruction_idx`` (or ``instruction``), ``preference`` and
  the two outputs' lengths ``output_1_chars`` / ``output_2_chars`` (AlpacaEval's
  ``preferences.csv``);
* AlpacaEval annotation records (JSON array or JSONL, optionally gzipped) with the outputs
  themselves: ``instruction``, ``output_1``, ``output_2``, ``generator_1``, ``generator_2``,
  ``preference``. Lengths, markdown list items and headers are computed from the text.

``preference`` follows AlpacaEval: 1 means the first output (the baseline) is better, 2 the second,
values in between are probabilities, 0 is a draw. This is the only module of ``truegrade.lc``
that touches files.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from truegrade.core import DataError, parse_json, read_text
from truegrade.lc._table import PreferenceTable

__all__ = [
    "JudgeVerdicts",
    "markdown_headers",
    "markdown_list_items",
    "read_judge_verdicts",
    "read_leaderboard",
    "read_preferences",
]

_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE)
_HEADER = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S", re.MULTILINE)


def markdown_list_items(text: str) -> int:
    """Lines that start a markdown list item (``-``, ``*``, ``+`` or ``1.``)."""
    return len(_LIST_ITEM.findall(text))


def markdown_headers(text: str) -> int:
    """Lines that are markdown headers (``#`` to ``######``)."""
    return len(_HEADER.findall(text))


_TEXT_COVARIATES = {"markdown_lists": markdown_list_items, "markdown_headers": markdown_headers}


def _records(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    text = read_text(path, what, gz=True)
    if path.name.removesuffix(".gz").endswith(".csv"):
        # strict: a quote left open would otherwise swallow the rest of the file as one field
        rows = csv.DictReader(io.StringIO(text), strict=True)
        try:
            for line, row in enumerate(rows, start=2):
                yield line, dict(row)
        except csv.Error as exc:
            raise DataError(
                f"{what} is not CSV: {exc}", path=str(path), line=rows.line_num
            ) from None
        return
    if text.lstrip().startswith("["):
        data = parse_json(text, what, path=path)
        if not isinstance(data, list):
            raise DataError(f"{what} must hold a list of records", path=str(path))
        for i, row in enumerate(data, start=1):
            yield i, row
        return
    for i, raw in enumerate(text.splitlines(), start=1):
        if raw.strip():
            try:
                yield i, json.loads(raw)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{what} is not JSON: {exc.msg} (column {exc.colno})", path=str(path), line=i
                ) from None


def _first(row: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        value = row.get(name)
        if value is not None and value != "":
            return value
    return None


def _number(value: Any, what: str, path: Path, line: int) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DataError(f"{what} is not a number: {value!r}", path=str(path), line=line) from None
    if not math.isfinite(number):
        raise DataError(f"{what} is not finite: {value!r}", path=str(path), line=line)
    return number


def read_preferences(path: str | Path, *, baseline: str | None = None) -> PreferenceTable:
    """Read pairwise verdicts against one baseline (see the module docstring for the shapes).

    Rows whose preference is missing (the judge failed) are skipped; rows that repeat another row
    exactly are dropped once and counted in ``duplicates_dropped``.

    Args:
        path: The file.
        baseline: Which generator is the baseline. Needed when the file compares against several;
            rows where it is the second generator are turned around.

    Raises:
        DataError: the file cannot be read, a field is missing or malformed (the message names
            the line), or the baseline is ambiguous or absent.
    """
    p = Path(path)
    raw: list[tuple[int, dict[str, Any]]] = []
    seen: set[Any] = set()
    duplicates = 0
    for line, row in _records(p, "verdicts file"):
        if not isinstance(row, Mapping):
            raise DataError("a row must be an object", path=str(p), line=line)
        try:
            key: Any = tuple(sorted(row.items()))
            hash(key)
        except TypeError:  # nested values (JSON records): compare them as canonical text
            key = json.dumps(row, sort_keys=True, default=str)
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        raw.append((line, dict(row)))
    if not raw:
        raise DataError("the file holds no verdicts", path=str(p))
    line, row = raw[0]
    if "generator_1" not in row or "preference" not in row:
        raise DataError(
            "not pairwise verdicts: expected AlpacaEval's columns (generator_1, generator_2, "
            "preference, and output_1/output_2 or their lengths) or a judge grades file "
            f"(truegrade grade --out); this row has {', '.join(sorted(map(str, row))[:8])}",
            path=str(p),
            line=line,
        )
    firsts = {str(_first(r, "generator_1")) for _, r in raw}
    if baseline is None:
        if len(firsts) != 1:
            shown = ", ".join(sorted(firsts)[:5])
            raise DataError(
                f"the verdicts compare against several baselines ({shown}); pass the baseline",
                path=str(p),
            )
        baseline = firsts.pop()
    with_text = all("output_1" in r and "output_2" in r for _, r in raw)
    columns: dict[str, list[Any]] = {
        k: [] for k in ("model", "instruction", "pref", "model_chars", "base_chars")
    }
    covariates: dict[str, tuple[list[float], list[float]]] = {
        name: ([], []) for name in (_TEXT_COVARIATES if with_text else {})
    }
    for line, row in raw:
        first = str(_first(row, "generator_1"))
        second = str(_first(row, "generator_2"))
        if baseline not in (first, second):
            continue
        flip = first != baseline  # the baseline is the second output: turn the row around
        # 'model' names the run of the second generator when its own name is generic
        # ('example'); a turned-around row's model is the first generator
        model = first if flip else str(_first(row, "model") or second)
        value = _first(row, "preference")
        if value is None:
            continue
        pref = _number(value, "preference", p, line)
        if pref == 0:
            pref = 1.5  # AlpacaEval records a draw as 0
        if not 1 <= pref <= 2:
            raise DataError(
                f"preference must be in [1, 2] (or 0), got {pref}", path=str(p), line=line
            )
        instruction = _first(row, "instruction_idx", "instruction", "index")
        if instruction is None:
            raise DataError("no 'instruction_idx' or 'instruction'", path=str(p), line=line)
        if with_text:
            texts = (str(row["output_1"] or ""), str(row["output_2"] or ""))
            lengths = (float(len(texts[0])), float(len(texts[1])))
        else:
            lengths = (
                _number(_first(row, "output_1_chars"), "output_1_chars", p, line),
                _number(_first(row, "output_2_chars"), "output_2_chars", p, line),
            )
        columns["model"].append(model)
        columns["instruction"].append(str(instruction))
        columns["pref"].append((2.0 - pref) if flip else (pref - 1.0))
        columns["model_chars"].append(lengths[0] if flip else lengths[1])
        columns["base_chars"].append(lengths[1] if flip else lengths[0])
        for name, count in _TEXT_COVARIATES.items():
            if with_text:
                ours, theirs = covariates[name]
                values = (float(count(texts[0])), float(count(texts[1])))
                ours.append(values[0] if flip else values[1])
                theirs.append(values[1] if flip else values[0])
    if not columns["model"]:
        raise DataError(f"no verdicts against baseline {baseline!r}", path=str(p))
    return PreferenceTable(
        models=np.array(columns["model"], dtype=str),
        instructions=np.array(columns["instruction"], dtype=str),
        preference=np.array(columns["pref"], dtype=np.float64),
        model_chars=np.array(columns["model_chars"], dtype=np.float64),
        baseline_chars=np.array(columns["base_chars"], dtype=np.float64),
        baseline=baseline,
        covariates={
            name: (np.array(a, dtype=np.float64), np.array(b, dtype=np.float64))
            for name, (a, b) in covariates.items()
        },
        duplicates_dropped=duplicates,
    )


def read_leaderboard(
    path: str | Path, *, column: str = "length_controlled_winrate"
) -> dict[str, float]:
    """One published number per model from a leaderboard CSV (first column: the model)."""
    p = Path(path)
    out: dict[str, float] = {}
    # strict: an unclosed quote is an error, not a last row that silently holds the rest
    reader = csv.reader(io.StringIO(read_text(p, "leaderboard", gz=True)), strict=True)
    try:
        header = next(reader)
        if column not in header:
            raise DataError(f"no column {column!r} (columns: {', '.join(header)})", path=str(p))
        at = header.index(column)
        for row in reader:
            if len(row) > at and row[at].strip():
                try:
                    out[row[0]] = float(row[at])
                except ValueError:
                    continue
    except csv.Error as exc:
        raise DataError(
            f"leaderboard is not CSV: {exc}", path=str(p), line=reader.line_num
        ) from None
    return out


@dataclass(frozen=True)
class JudgeVerdicts:
    """What a file of verdicts holds, in the shapes ``bias_report`` takes.

    Attributes:
        table: Pairwise verdicts (one row per judge and order for a grades file).
        consistent: Per judged pair, 1 when both orders agreed (grades files only).
        consistency_clusters: The pair of each ``consistent`` value.
        scores / score_lengths / score_clusters: Pointwise raw scores and response lengths.
        skipped: Rows without a verdict (graded with an error).
    """

    table: PreferenceTable | None = None
    consistent: list[float] = field(default_factory=list)
    consistency_clusters: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    score_lengths: list[float] = field(default_factory=list)
    score_clusters: list[str] = field(default_factory=list)
    skipped: int = 0


_ORDERS = {".candidate_first": True, ".candidate_second": False}


def _grades_verdicts(rows: list[tuple[int, dict[str, Any]]]) -> JudgeVerdicts:
    """Verdicts from the ``judge`` grader's results file (``truegrade grade --out``)."""
    cols: dict[str, list[Any]] = {k: [] for k in ("judge", "id", "pref", "ours", "theirs", "first")}
    pointwise: dict[str, list[Any]] = {k: [] for k in ("score", "chars", "id")}
    consistency: dict[str, list[Any]] = {k: [] for k in ("value", "id")}
    skipped = 0
    for _, row in rows:
        subscores = row.get("subscores") or {}
        if row.get("error") is not None or not isinstance(subscores, dict):
            skipped += 1
            continue
        sample = str(row.get("id"))
        if "raw_score" in subscores and "candidate_chars" in subscores:
            pointwise["score"].append(float(subscores["raw_score"]))
            pointwise["chars"].append(float(subscores["candidate_chars"]))
            pointwise["id"].append(sample)
        if "position_consistency" in subscores:
            consistency["value"].append(float(subscores["position_consistency"]))
            consistency["id"].append(sample)
        for key, value in subscores.items():
            for suffix, candidate_first in _ORDERS.items():
                if key.endswith(suffix) and "candidate_chars" in subscores:
                    cols["judge"].append(key.removesuffix(suffix))
                    cols["id"].append(sample)
                    cols["pref"].append(float(value))
                    cols["ours"].append(float(subscores["candidate_chars"]))
                    cols["theirs"].append(float(subscores.get("baseline_chars", 0.0)))
                    cols["first"].append(candidate_first)
    table = None
    if cols["judge"]:
        table = PreferenceTable(
            models=np.array(cols["judge"], dtype=str),
            instructions=np.array(cols["id"], dtype=str),
            preference=np.array(cols["pref"], dtype=np.float64),
            model_chars=np.array(cols["ours"], dtype=np.float64),
            baseline_chars=np.array(cols["theirs"], dtype=np.float64),
            baseline="baseline",
            first_is_model=np.array(cols["first"], dtype=bool),
        )
    return JudgeVerdicts(
        table=table,
        consistent=consistency["value"],
        consistency_clusters=consistency["id"],
        scores=pointwise["score"],
        score_lengths=pointwise["chars"],
        score_clusters=pointwise["id"],
        skipped=skipped,
    )


def read_judge_verdicts(path: str | Path, *, baseline: str | None = None) -> JudgeVerdicts:
    """Verdicts for a bias report: a ``judge`` grades file, or pairwise verdicts in one of the
    shapes ``read_preferences`` reads (the file's rows say which).

    Raises:
        DataError: the file cannot be read or holds neither shape.
    """
    p = Path(path)
    name = p.name.removesuffix(".gz")
    if not name.endswith(".csv"):
        rows = list(_records(p, "verdicts file"))
        if rows and all(isinstance(r, Mapping) and "subscores" in r for _, r in rows):
            verdicts = _grades_verdicts(rows)
            if verdicts.table is None and not verdicts.scores:
                raise DataError(
                    "these grades carry no judge verdicts (candidate_first / candidate_second "
                    "or raw_score subscores, with candidate_chars)",
                    path=str(p),
                )
            return verdicts
    return JudgeVerdicts(table=read_preferences(p, baseline=baseline))
