"""The one way truegrade opens a file a user named: data, specs, rubrics, configs, logs, results.

Files come from anywhere, so every problem with one becomes a ``DataError`` whose one-line message
names the file, what it was meant to be, and what is wrong with it::

    grader.yaml:1: grader spec is not UTF-8 (byte 0)
    runs/: data file is a directory, not a file
    board.csv: leaderboard is empty
    spec.yaml:3: grader spec is not YAML: mapping values are not allowed here (column 9)
    results.jsonl:4: results record has no field 'score'

Text is decoded strictly (a byte that is not UTF-8 is reported, never guessed at) and only regular
files are opened, so a FIFO or a device cannot make a command wait forever. Callers that stream
a file line by line open it with ``open_file`` and decode each line with ``decode_utf8``, so one bad
line can be reported (or skipped) with its number. Nothing here raises anything but ``DataError``
for a problem with the file itself.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import yaml

from truegrade.core._errors import DataError

__all__ = [
    "check_file",
    "decode_utf8",
    "open_file",
    "parse_json",
    "read_bytes",
    "read_config",
    "read_json",
    "read_text",
    "read_yaml",
    "require_fields",
]


def check_file(path: str | Path, what: str) -> Path:
    """``path`` as a ``Path`` when it names a regular file, else a ``DataError`` saying why not."""
    p = Path(path)
    try:
        if not p.exists():
            raise DataError(f"{what} not found", path=str(p))
        if p.is_dir():
            raise DataError(f"{what} is a directory, not a file", path=str(p))
        if not p.is_file():
            raise DataError(f"{what} is not a regular file", path=str(p))
    except OSError as exc:  # a name too long, a loop of links, ...
        raise DataError(f"{what} cannot be opened: {exc.strerror or exc}", path=str(p)) from None
    return p


_GZIP_ERRORS = (OSError, EOFError, zlib.error)
"""What a corrupt or truncated gzip stream raises part-way through (``BadGzipFile`` is an
``OSError``; a bad deflate block is a bare ``zlib.error``)."""


class _Gunzip(gzip.GzipFile):
    """A ``.gz`` file whose every read reports a corrupt stream as a ``DataError`` naming the
    file, however the caller reads it (whole, by line, by iteration)."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(path, "rb")
        self._path = path
        self._what = what

    def _broken(self, exc: BaseException) -> DataError:
        why = " ".join(str(exc).split()) or type(exc).__name__
        return DataError(f"{self._what} is not a readable gzip file: {why}", path=str(self._path))

    def read(self, size: int | None = -1) -> bytes:
        try:
            return super().read(size)
        except _GZIP_ERRORS as exc:
            raise self._broken(exc) from None

    def read1(self, size: int = -1) -> bytes:
        try:
            return super().read1(size)
        except _GZIP_ERRORS as exc:
            raise self._broken(exc) from None

    def peek(self, n: int) -> bytes:
        try:
            return super().peek(n)
        except _GZIP_ERRORS as exc:
            raise self._broken(exc) from None

    def readline(self, size: int | None = -1) -> bytes:
        try:
            return super().readline(size)
        except _GZIP_ERRORS as exc:
            raise self._broken(exc) from None


def open_file(path: str | Path, what: str, *, gz: bool = False) -> IO[bytes]:
    """Open a user's file for reading bytes (decompressing a ``.gz`` one when ``gz``: a corrupt
    stream is then a ``DataError`` from whichever read meets it).

    Raises:
        DataError: the file is missing, a directory, not a regular file, or not readable.
    """
    p = check_file(path, what)
    try:
        if gz and p.suffix == ".gz":
            return _Gunzip(p, what)  # type: ignore[return-value]
        return p.open("rb")
    except OSError as exc:
        raise DataError(f"{what} cannot be opened: {exc.strerror or exc}", path=str(p)) from None


def read_bytes(path: str | Path, what: str, *, gz: bool = False) -> bytes:
    """All the bytes of a user's file (decompressed when ``gz`` and it ends in ``.gz``)."""
    with open_file(path, what, gz=gz) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise DataError(f"{what} cannot be read: {exc}", path=str(path)) from None


def decode_utf8(raw: bytes, what: str, *, path: str | Path, line: int | None = None) -> str:
    """``raw`` as strict UTF-8, or a ``DataError`` naming the first bad byte (and its line, when
    ``raw`` is a whole file rather than one line of it)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if line is None:
            at_line = raw.count(b"\n", 0, exc.start) + 1
            where = f"byte {exc.start}"
        else:
            at_line = line
            where = f"byte {exc.start} of the line"
        raise DataError(f"{what} is not UTF-8 ({where})", path=str(path), line=at_line) from None


def read_text(path: str | Path, what: str, *, empty_ok: bool = False, gz: bool = False) -> str:
    """The text of a user's file, strictly UTF-8; an empty (or all-blank) file is an error unless
    ``empty_ok``."""
    text = decode_utf8(read_bytes(path, what, gz=gz), what, path=path)
    if not empty_ok and not text.strip():
        raise DataError(f"{what} is empty", path=str(path))
    return text


def parse_json(text: str, what: str, *, path: str | Path) -> Any:
    """``text`` (already read from ``path``) as JSON, or a ``DataError`` naming the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{what} is not JSON: {exc.msg} (column {exc.colno})", path=str(path), line=exc.lineno
        ) from None
    except RecursionError:
        raise DataError(f"{what} is not JSON: nested too deeply", path=str(path)) from None


_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it: the pure-Python scanner takes minutes
over a 20 MB scalar, libyaml under a second. Both build only plain data."""


def _yaml(text: str, what: str, path: str | Path) -> Any:
    try:
        return yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - CSafeLoader or SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        problem = " ".join(str(exc.problem or exc.context or "malformed").split())
        line = None if mark is None else mark.line + 1
        column = "" if mark is None else f" (column {mark.column + 1})"
        raise DataError(
            f"{what} is not YAML: {problem}{column}", path=str(path), line=line
        ) from None
    except yaml.YAMLError as exc:  # e.g. a control character the YAML reader refuses
        problem = " ".join(str(exc).split())
        raise DataError(f"{what} is not YAML: {problem}", path=str(path)) from None
    except RecursionError:
        raise DataError(f"{what} is not YAML: nested too deeply", path=str(path)) from None


def read_json(path: str | Path, what: str, *, gz: bool = False) -> Any:
    """The JSON document in a user's file (which must not be empty)."""
    return parse_json(read_text(path, what, gz=gz), what, path=path)


def read_yaml(path: str | Path, what: str) -> Any:
    """The YAML document in a user's file; a file with no document (empty, only comments) is an
    error, since every YAML file truegrade reads has to say something."""
    data = _yaml(read_text(path, what), what, path)
    if data is None:
        raise DataError(f"{what} is empty", path=str(path))
    return data


def read_config(path: str | Path, what: str) -> Any:
    """A YAML or JSON file (JSON by the ``.json`` suffix: YAML would accept most of it with other
    meanings)."""
    if Path(path).suffix.lower() == ".json":
        return read_json(path, what)
    return read_yaml(path, what)


def require_fields(
    row: Mapping[str, Any],
    fields: Iterable[str],
    what: str,
    *,
    path: str | Path | None = None,
    line: int | None = None,
) -> None:
    """A ``DataError`` naming the first of ``fields`` missing from ``row`` (file and line kept)."""
    for name in fields:
        if name not in row:
            raise DataError(
                f"{what} has no field {name!r}", path=None if path is None else str(path), line=line
            )
