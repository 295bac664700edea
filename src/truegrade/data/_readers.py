"""Reading rows from JSONL, JSON and Parquet, including verl's and OpenRLHF's row formats.

Input files come from anywhere, so every row is checked and every problem names the file and the
line (or Parquet row). Text is decoded strictly: a line that is not UTF-8 is reported, not
guessed at. Readers stream; nothing loads a whole file into memory.

Formats:

* ``rows``: the native row format (``id``, ``prompt``, ``response``, ``reference`` (alias
  ``answer``), ``label``, ``group``, ``metadata``); unknown columns go to ``metadata``.
* ``verl``: ``data_source``, ``prompt`` (chat messages), ``reward_model: {style, ground_truth}``,
  ``extra_info``; detected automatically.
* ``healthbench``: HealthBench rows as published: ``prompt`` (chat messages), ``rubrics`` (the
  reference: ``{criterion, points, tags}`` items), ``prompt_id`` (the id), ``example_tags``,
  ``ideal_completions_data`` (its ideal completion becomes ``metadata.ideal``), ``completion``
  (the response, when present); detected automatically.
* ``openrlhf``: ``input`` (prompt), ``label`` (the reference: OpenRLHF's reward label is the gold
  answer, not a human verdict), ``output``/``response``; only when asked for, since ``label`` means
  something else natively.

A ``responses`` column holding a list of texts (several rollouts of one prompt, as GRPO dumps
them) expands into one sample per response, with ids ``ID#k`` and ``group`` set to the row's id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from truegrade.core import DataError, Sample, check_file, decode_utf8, open_file, read_json

__all__ = [
    "FORMATS",
    "BadRow",
    "count_rows",
    "get_field",
    "read_rows",
    "read_samples",
    "row_to_samples",
]

FORMATS = ("auto", "rows", "verl", "healthbench", "openrlhf")


@dataclass(frozen=True)
class BadRow:
    """A row that could not be read, kept so it can be recorded instead of lost."""

    path: str
    line: int
    error: str

    def record(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "error": self.error}


def _kind(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    last = suffixes[-1] if suffixes else ""
    if last in {".parquet", ".pq"}:
        return "parquet"
    if last == ".json":
        return "json"
    return "jsonl"


def read_rows(
    path: str | Path,
    *,
    on_bad_row: Callable[[BadRow], None] | None = None,
    what: str = "data file",
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, row)`` for each row of a JSONL, JSON-array or Parquet file.

    Lines are 1-based (Parquet: the row number). Blank JSONL lines are skipped.

    Args:
        path: The file; ``.gz`` is decompressed transparently.
        on_bad_row: Called with each unreadable row instead of raising; the row is skipped.
        what: What the file is, for messages (``training log``, ``verdicts``, ...).

    Raises:
        DataError: the file is missing, or a row is malformed and no ``on_bad_row`` was given.
    """
    p = check_file(path, what)
    kind = _kind(p)
    if kind == "parquet":
        yield from _parquet_rows(p, what)
        return
    if kind == "json":
        yield from _json_array_rows(p, on_bad_row, what)
        return
    yield from _jsonl_rows(p, on_bad_row, what)


def _bad(path: Path, line: int, why: str, on_bad_row: Callable[[BadRow], None] | None) -> None:
    if on_bad_row is None:
        raise DataError(why, path=str(path), line=line)
    on_bad_row(BadRow(str(path), line, why))


def _jsonl_rows(
    path: Path, on_bad_row: Callable[[BadRow], None] | None, what: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    with open_file(path, what, gz=True) as handle:
        try:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    text = decode_utf8(raw, "row", path=path, line=number)
                except DataError as exc:
                    _bad(path, number, exc.reason, on_bad_row)
                    continue
                try:
                    row = json.loads(text)
                except json.JSONDecodeError as exc:
                    _bad(
                        path, number, f"malformed JSON: {exc.msg} at column {exc.colno}", on_bad_row
                    )
                    continue
                except RecursionError:
                    _bad(path, number, "malformed JSON: nested too deeply", on_bad_row)
                    continue
                if not isinstance(row, dict):
                    _bad(
                        path,
                        number,
                        f"a row must be a JSON object, got {type(row).__name__}",
                        on_bad_row,
                    )
                    continue
                yield number, row
        except OSError as exc:  # the disk, not the file's contents (open_file reports gzip's)
            raise DataError(f"{what} cannot be read: {exc}", path=str(path)) from None


def _json_array_rows(
    path: Path, on_bad_row: Callable[[BadRow], None] | None, what: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    data = read_json(path, what, gz=True)
    if not isinstance(data, list):
        raise DataError(f"{what} (.json) must hold a list of row objects", path=str(path))
    for number, row in enumerate(data, start=1):
        if not isinstance(row, dict):
            _bad(path, number, f"item {number} is {type(row).__name__}, not an object", on_bad_row)
            continue
        yield number, row


def _parquet_rows(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow is a dependency
        raise DataError(f"reading Parquet needs pyarrow ({exc})", path=str(path)) from None
    with open_file(path, what) as handle:
        try:
            parquet = pq.ParquetFile(handle)
        except Exception as exc:
            why = " ".join(str(exc).split())
            raise DataError(
                f"{what} is not a readable Parquet file: {why}", path=str(path)
            ) from None
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=2048):
                for row in batch.to_pylist():
                    number += 1
                    yield number, row
        except Exception as exc:  # pyarrow raises its own ArrowException family on corrupt pages
            why = " ".join(str(exc).split())
            raise DataError(
                f"{what} cannot be read: {why}", path=str(path), line=number + 1
            ) from None


def count_rows(path: str | Path) -> int | None:
    """A cheap row count for progress bars (line count for JSONL; metadata for Parquet)."""
    p = Path(path)
    try:
        kind = _kind(p)
        if kind == "parquet":
            import pyarrow.parquet as pq

            with open_file(p, "data file") as handle:
                return int(pq.ParquetFile(handle).metadata.num_rows)
        if kind == "json":
            return None
        with open_file(p, "data file", gz=True) as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    except Exception:
        return None


def get_field(row: Mapping[str, Any], path: str) -> Any:
    """The value at ``path`` in a row: a top-level key (which may itself contain dots), else a
    dotted path into nested objects (``metadata.gold``, ``reward_model.ground_truth``); None when
    absent."""
    if path in row:
        return row[path]
    value: Any = row
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _is_verl(row: Mapping[str, Any]) -> bool:
    reward_model = row.get("reward_model")
    return isinstance(reward_model, Mapping) and "ground_truth" in reward_model


def _is_healthbench(row: Mapping[str, Any]) -> bool:
    return isinstance(row.get("rubrics"), list) and "reference" not in row


def _healthbench(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["reference"] = out.pop("rubrics")
    if "prompt_id" in out and "id" not in out:
        out["id"] = out.pop("prompt_id")
    if "completion" in out and "response" not in out:
        out["response"] = out.pop("completion")
    metadata = dict(out.pop("metadata", None) or {})
    ideal = out.pop("ideal_completions_data", None)
    if isinstance(ideal, Mapping):
        if isinstance(ideal.get("ideal_completion"), str):
            metadata["ideal"] = ideal["ideal_completion"]
        metadata["ideal_completions_data"] = dict(ideal)
    if "example_tags" in out:
        metadata["example_tags"] = out.pop("example_tags")
    out["metadata"] = metadata
    return out


def _normalise(
    row: dict[str, Any], fmt: str, field_map: Mapping[str, str] | None
) -> dict[str, Any]:
    out = dict(row)
    if fmt == "healthbench" or (fmt == "auto" and _is_healthbench(row)):
        out = _healthbench(out)
    elif fmt == "verl" or (fmt == "auto" and _is_verl(row)):
        reward_model = out.pop("reward_model", None) or {}
        if not isinstance(reward_model, Mapping):
            raise DataError("verl row: 'reward_model' must be an object with 'ground_truth'")
        out["reference"] = reward_model.get("ground_truth")
        metadata = dict(out.pop("metadata", None) or {})
        for key in ("data_source", "extra_info", "ability"):
            if key in out:
                metadata[key] = out.pop(key)
        if "style" in reward_model:
            metadata["reward_style"] = reward_model["style"]
        out["metadata"] = metadata
    elif fmt == "openrlhf":
        if "input" in out:
            out["prompt"] = out.pop("input")
        if "label" in out:
            out["reference"] = out.pop("label")
        if "output" in out:
            out["response"] = out.pop("output")
    if field_map:
        for target, source in field_map.items():
            value = get_field(row, source)
            if value is None:
                raise DataError(f"field map {target}={source}: the row has no '{source}'")
            if "." not in source and source != target:
                out.pop(source, None)  # moved, not copied into metadata
            out[target] = value
    return out


def row_to_samples(
    row: dict[str, Any],
    *,
    line: int,
    fmt: str = "auto",
    field_map: Mapping[str, str] | None = None,
) -> list[Sample]:
    """Turn one data row into samples (several when it carries a ``responses`` list).

    Raises:
        DataError: a field has the wrong type; the message names it (the caller adds the file).
    """
    if fmt not in FORMATS:
        raise DataError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    data = _normalise(row, fmt, field_map)
    responses = data.pop("responses", None)
    if responses is None:
        return [Sample.from_row(data, default_id=line)]
    if not isinstance(responses, list) or not all(isinstance(r, (str, list)) for r in responses):
        raise DataError("field 'responses' must be a list of responses")
    base = data.get("id", line)
    samples = []
    for k, response in enumerate(responses):
        one = {**data, "response": response, "id": f"{base}#{k}"}
        one.setdefault("group", str(base))
        samples.append(Sample.from_row(one, default_id=line))
    return samples


def read_samples(
    path: str | Path,
    *,
    fmt: str = "auto",
    field_map: Mapping[str, str] | None = None,
    on_bad_row: Callable[[BadRow], None] | None = None,
) -> Iterator[tuple[int, Sample]]:
    """Yield ``(line, sample)`` for every sample in a data file.

    Args:
        path: JSONL (optionally gzipped), JSON array, or Parquet.
        fmt: ``auto`` (native rows; verl and HealthBench detected), ``rows``, ``verl``,
            ``healthbench`` or ``openrlhf``.
        field_map: ``{our_field: their_column}``, dotted paths allowed
            (``{"reference": "reward_model.ground_truth"}``).
        on_bad_row: Receives unreadable rows instead of an exception being raised.

    Raises:
        DataError: naming the file and line of the first bad row (without ``on_bad_row``).

    Examples:
        >>> for line, sample in read_samples("data.jsonl"):  # doctest: +SKIP
        ...     print(line, sample.id)
    """
    for line, row in read_rows(path, on_bad_row=on_bad_row):
        try:
            samples = row_to_samples(row, line=line, fmt=fmt, field_map=field_map)
        except DataError as exc:
            if on_bad_row is None:
                raise DataError(exc.reason, path=str(path), line=line) from None
            on_bad_row(BadRow(str(path), line, exc.reason))
            continue
        for sample in samples:
            yield line, sample
