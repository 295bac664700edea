"""The one reader of users' files: every problem is a DataError whose message names the file, the
line when there is one, and the reason."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from truegrade.core import (
    DataError,
    check_file,
    decode_utf8,
    open_file,
    read_config,
    read_json,
    read_text,
    read_yaml,
    require_fields,
)


def test_what_is_not_a_regular_file_is_named_for_what_it_is(tmp_path: Path):
    with pytest.raises(DataError, match=r"absent\.yaml: spec not found"):
        check_file(tmp_path / "absent.yaml", "spec")
    with pytest.raises(DataError, match="data file is a directory, not a file"):
        check_file(tmp_path, "data file")
    os.mkfifo(tmp_path / "pipe.jsonl")
    # refused before any open: opening a FIFO for reading would wait for a writer forever
    with pytest.raises(DataError, match=r"pipe\.jsonl: data file is not a regular file"):
        open_file(tmp_path / "pipe.jsonl", "data file")


def test_a_byte_that_is_not_utf8_is_reported_with_its_line_and_offset(tmp_path: Path):
    path = tmp_path / "board.csv"
    path.write_bytes(b"model,score\nm0,1\nm\xff1,2\n")
    with pytest.raises(DataError) as caught:
        read_text(path, "leaderboard")
    assert str(caught.value) == f"{path}:3: leaderboard is not UTF-8 (byte 18)"
    with pytest.raises(DataError, match=r":7: row is not UTF-8 \(byte 1 of the line\)"):
        decode_utf8(b"a\xfe", "row", path=path, line=7)


def test_empty_is_an_error_where_content_is_needed(tmp_path: Path):
    path = tmp_path / "simulator.yaml"
    path.write_text("# nothing but a comment\n")
    with pytest.raises(DataError, match="simulator config is empty"):
        read_yaml(path, "simulator config")
    path.write_text("")
    assert read_text(path, "notes", empty_ok=True) == ""
    with pytest.raises(DataError, match="notes is empty"):
        read_text(path, "notes")


def test_syntax_errors_name_the_line(tmp_path: Path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("type: exact\nnormalize: [lower\n")
    with pytest.raises(DataError, match=r"spec\.yaml:\d+: grader spec is not YAML: .*\(column"):
        read_yaml(spec, "grader spec")
    doc = tmp_path / "spec.json"
    doc.write_text('{\n  "type": "exact",\n  oops\n}')
    with pytest.raises(DataError, match=r"spec\.json:3: grader spec is not JSON"):
        read_json(doc, "grader spec")


def test_a_config_is_json_by_its_suffix(tmp_path: Path):
    # YAML would read this JSON's text too, so the suffix decides which parser reports errors
    path = tmp_path / "config.json"
    path.write_text('{"seed": 3}')
    assert read_config(path, "config") == {"seed": 3}
    path.write_text("seed: 3\n")
    with pytest.raises(DataError, match="config is not JSON"):
        read_config(path, "config")


def test_a_corrupt_gzip_stream_is_a_data_error_however_it_is_read(tmp_path: Path):
    good = gzip.compress(b'{"id": 1}\n' * 10_000)
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(good[:40] + bytes(64) + good[104:])  # a broken deflate block mid-stream
    with pytest.raises(DataError, match=r"rows\.jsonl\.gz: data file is not a readable gzip"):
        read_text(path, "data file", gz=True)
    with (
        pytest.raises(DataError, match="is not a readable gzip file"),
        open_file(path, "data file", gz=True) as handle,
    ):
        for _line in handle:  # by iteration, as row readers stream it
            pass
    path.write_bytes(good)
    with open_file(path, "data file", gz=True) as handle:
        assert sum(1 for _ in handle) == 10_000


def test_a_missing_field_names_the_field_and_the_line():
    with pytest.raises(DataError, match=r"grades\.jsonl:4: rubric grade has no field 'score'"):
        require_fields({"id": "q"}, ["id", "score"], "rubric grade", path="grades.jsonl", line=4)
