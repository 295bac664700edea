from __future__ import annotations

import json

import pytest

from truegrade.core import Grade, OutputError
from truegrade.data import ResultWriter, read_results


def test_records_stream_and_read_back(tmp_path):
    path = tmp_path / "out.jsonl"
    with ResultWriter(path) as out:
        out.write("a", Grade(score=1.0, passed=True))
        # readable by another process before close: each line is flushed
        assert json.loads(path.read_text().splitlines()[0])["id"] == "a"
        out.write(2, Grade.failure("x", "timeout", latency_ms=3.0))
    records = [r for _, r in read_results(path)]
    assert [r["id"] for r in records] == ["a", 2]
    assert records[1]["flags"] == ["timeout"]


def test_existing_output_needs_resume_or_overwrite(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text("")
    with pytest.raises(OutputError, match="--resume"):
        ResultWriter(path)
    ResultWriter(path, overwrite=True).close()


def test_resume_cuts_a_half_written_line_and_reports_done_ids(tmp_path):
    path = tmp_path / "out.jsonl"
    with ResultWriter(path) as out:
        out.write("a", Grade(score=1.0))
        out.write("b", Grade(score=0.0))
    with path.open("ab") as handle:
        handle.write(b'{"id": "c", "score": 1.0, "pass')  # the run was killed mid-write
    with ResultWriter(path, resume=True) as out:
        assert out.done == {"a", "b"}
        out.write("c", Grade(score=1.0))
    assert [r["id"] for _, r in read_results(path)] == ["a", "b", "c"]


def test_refuses_to_resume_into_a_foreign_file(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text('{"id": 1}\nthis is not json\n{"id": 2}\n')
    with pytest.raises(OutputError, match=r"notes\.jsonl:2"):
        ResultWriter(path, resume=True)


def test_hostile_text_in_explanations_is_written_safely(tmp_path):
    path = tmp_path / "out.jsonl"
    with ResultWriter(path) as out:
        out.write("s", Grade(score=0, explanation="lone \ud800 surrogate\x00 and 🙂"))
    [(_, record)] = list(read_results(path))
    assert record["explanation"] == "lone \ud800 surrogate\x00 and 🙂"


def test_nested_output_directories_are_created(tmp_path):
    with ResultWriter(tmp_path / "a" / "b" / "out.jsonl") as out:
        out.write(1, Grade())
    assert (tmp_path / "a" / "b" / "out.jsonl").exists()


def test_resume_takes_error_records_out_to_grade_them_again_unless_kept(tmp_path):
    path = tmp_path / "grades.jsonl"
    with ResultWriter(path) as out:
        out.write("a", Grade(score=1.0, passed=True))
        out.write("b", Grade.failure("the worker died", "crashed"))
        out.write("c", Grade(score=0.0, passed=False))
    path.write_bytes(path.read_bytes() + b'{"id": "d", "sco')  # a killed run's last line
    kept = ResultWriter(path, resume=True)
    kept.close()
    assert kept.done == {"a", "b", "c"} and kept.retried == 0
    again = ResultWriter(path, resume=True, retry_errors=True)
    assert again.done == {"a", "c"} and again.retried == 1
    again.write("b", Grade(score=1.0, passed=True))
    again.close()
    records = [r for _, r in read_results(path)]
    assert [r["id"] for r in records] == ["a", "c", "b"]  # each id once, no error left
    assert not [r for r in records if r["error"]]
