"""The one results writer: append-only JSONL, one line per graded row, flushed as it is written.

A run can be killed at any moment (SIGKILL, a pre-empted node) and lose nothing: every finished
grade is already on disk, and ``resume=True`` reads the file back, cuts a half-written last line,
and tells the caller which ids are done, so the rerun grades only what is missing and writes each
id once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from truegrade.core import DataError, Grade, OutputError, decode_utf8, open_file

__all__ = ["ResultWriter", "read_results"]


def _dump(record: dict[str, Any]) -> bytes:
    try:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False)
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from hostile input: escape them
        return (json.dumps(record, ensure_ascii=True, allow_nan=False) + "\n").encode("ascii")


def read_results(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` from a results file; a cut-off last line is ignored.

    Raises:
        DataError: the file is missing, or a complete line is not a JSON object with an ``id``.
    """
    p = Path(path)
    with open_file(p, "results file") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return  # the half-written tail of a killed run
            if not raw.strip():
                continue
            text = decode_utf8(raw, "results line", path=p, line=number)
            try:
                record = json.loads(text)
            except ValueError as exc:
                raise DataError(
                    f"results line is not JSON: {' '.join(str(exc).split())}",
                    path=str(p),
                    line=number,
                ) from None
            if not isinstance(record, dict) or "id" not in record:
                raise DataError("not a results record (no 'id')", path=str(p), line=number)
            yield number, record


class ResultWriter:
    """Streams result records to a JSONL file.

    Args:
        path: The results file.
        resume: Continue an existing file: its complete records count as done (``done``) and a
            partial last line is cut off.
        retry_errors: With ``resume``, the records that are errors (a crashed worker, a lost
            node) are taken out of the file and not counted as done, so the rerun grades those
            rows again and the file still holds each id once.
        overwrite: Replace an existing file.

    Raises:
        OutputError: the file exists and neither ``resume`` nor ``overwrite`` was given, or it
            cannot be resumed (it is not a results file).

    Examples:
        >>> with ResultWriter("grades.jsonl", resume=True) as out:  # doctest: +SKIP
        ...     for sample in samples:
        ...         if sample.key not in out.done:
        ...             out.write(sample.id, grader.grade(sample))
    """

    def __init__(
        self,
        path: str | Path,
        *,
        resume: bool = False,
        overwrite: bool = False,
        retry_errors: bool = False,
    ) -> None:
        self.path = Path(path)
        self.done: set[str] = set()
        self.written = 0
        self.retry_errors = retry_errors
        self.retried = 0
        """Error records of the earlier run dropped to be graded again (``retry_errors``)."""
        exists = self.path.exists()
        if self.path.is_dir():
            raise OutputError(f"{self.path}: the results file is a directory, not a file")
        if exists and not (resume or overwrite):
            raise OutputError(
                f"{self.path} already exists; pass --resume to continue it or --overwrite to "
                "replace it"
            )
        if exists and resume:
            self._recover()
            mode = "ab"
        else:
            mode = "wb"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle: IO[bytes] | None = self.path.open(mode)
        except OSError as exc:
            raise OutputError(
                f"{self.path}: cannot write the results file: {exc.strerror}"
            ) from None

    def _recover(self) -> None:
        good_end = 0
        errors: list[tuple[int, int]] = []
        try:
            handle = open_file(self.path, "results file")
        except DataError as exc:
            raise OutputError(str(exc)) from None
        with handle:
            offset = 0
            for number, raw in enumerate(handle, start=1):
                end = offset + len(raw)
                stripped = raw.strip()
                if not stripped:
                    offset = end
                    good_end = end if raw.endswith(b"\n") else good_end
                    continue
                try:
                    record = json.loads(stripped.decode("utf-8"))
                    complete = raw.endswith(b"\n") and isinstance(record, dict) and "id" in record
                except (ValueError, UnicodeDecodeError):
                    complete = False
                if not complete:
                    rest = handle.read()
                    if rest.strip():
                        raise OutputError(
                            f"{self.path}:{number} is not a results record; refusing to resume "
                            "into a file truegrade did not write"
                        )
                    break
                if self.retry_errors and record.get("error"):
                    errors.append((offset, end))
                else:
                    self.done.add(str(record["id"]))
                good_end = end
                offset = end
        if good_end != self.path.stat().st_size:
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
        if errors:
            self._drop(errors)

    def _drop(self, spans: list[tuple[int, int]]) -> None:
        """Rewrite the file without the byte ``spans`` (the error records), atomically: a kill
        midway leaves the old file or the new one, never half of each."""
        data = self.path.read_bytes()
        kept, start = [], 0
        for begin, end in spans:
            kept.append(data[start:begin])
            start = end
        kept.append(data[start:])
        fresh = self.path.with_name(self.path.name + ".retry")
        with fresh.open("wb") as handle:
            handle.write(b"".join(kept))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(fresh, self.path)
        self.retried = len(spans)

    def write(self, sample_id: str | int, grade: Grade) -> None:
        """Append one record and flush it to the OS (it survives the process being killed)."""
        self.write_record(grade.record(sample_id))

    def write_record(self, record: dict[str, Any]) -> None:
        """Append an already-built record (it must have an ``id``)."""
        if self._handle is None:
            raise OutputError(f"{self.path} is closed")
        self._handle.write(_dump(record))
        self._handle.flush()
        self.done.add(str(record["id"]))
        self.written += 1

    def close(self) -> None:
        """Flush to stable storage and close."""
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
