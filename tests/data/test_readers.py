from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from truegrade.core import DataError
from truegrade.data import count_rows, read_rows, read_samples


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_lines_are_one_based_and_blank_lines_skipped(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"response": "a"}\n\n{"response": "b"}\n')
    assert [(line, s.id) for line, s in read_samples(path)] == [(1, 1), (3, 3)]
    assert count_rows(path) == 3


def test_gzip_and_json_arrays(tmp_path):
    gz = tmp_path / "d.jsonl.gz"
    with gzip.open(gz, "wt") as handle:
        handle.write('{"id": "x", "response": "a"}\n')
    assert [s.id for _, s in read_samples(gz)] == ["x"]
    arr = tmp_path / "d.json"
    arr.write_text(json.dumps([{"response": "a"}, {"response": "b"}]))
    assert len(list(read_samples(arr))) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"response": "a"}\n{"response": \n', r"d\.jsonl:2: malformed JSON"),
        (b'{"response": "a"}\n[1, 2]\n', r"d\.jsonl:2: a row must be a JSON object, got list"),
        (b'{"response": "\xff\xfe"}\n', r"d\.jsonl:1: row is not UTF-8 \(byte 14 of the line\)"),
        (b"[" * 100_000 + b"\n", r"d\.jsonl:1: malformed JSON"),
        (b'{"id": 1, "label": "perhaps", "response": "x"}\n', r"d\.jsonl:1: field 'label'"),
    ],
)
def test_malformed_rows_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "d.jsonl"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message):
        list(read_samples(path))


def test_bad_rows_can_be_collected_instead(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"response": "a"}\nnot json\n\xff\n{"response": "b"}\n')
    bad = []
    good = [s.id for _, s in read_samples(path, on_bad_row=bad.append)]
    assert good == [1, 4]
    assert [(b.line, b.error.split(":")[0]) for b in bad] == [
        (2, "malformed JSON"),
        (3, "row is not UTF-8 (byte 0 of the line)"),
    ]


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="data file not found"):
        list(read_rows(tmp_path / "nope.jsonl"))


def test_verl_parquet_rows_are_read_as_they_are(tmp_path):
    table = pa.Table.from_pylist(
        [
            {
                "data_source": "openai/gsm8k",
                "prompt": [{"role": "user", "content": "What is 6*7?"}],
                "ability": "math",
                "reward_model": {"style": "rule", "ground_truth": "42"},
                "extra_info": {"split": "train", "index": 0},
                "response": "#### 42",
            }
        ]
    )
    path = tmp_path / "train.parquet"
    pq.write_table(table, path)
    [(line, sample)] = list(read_samples(path))
    assert line == 1 and sample.reference == "42"
    assert sample.prompt == [{"role": "user", "content": "What is 6*7?"}]
    assert sample.metadata["data_source"] == "openai/gsm8k"
    assert sample.metadata["extra_info"] == {"split": "train", "index": 0}
    assert sample.metadata["reward_style"] == "rule"
    assert count_rows(path) == 1


def test_openrlhf_rows_when_asked(tmp_path):
    path = write_jsonl(tmp_path / "o.jsonl", [{"input": "q", "label": "42", "output": "42"}])
    [(_, sample)] = list(read_samples(path, preset="openrlhf"))
    assert (sample.prompt, sample.reference, sample.response, sample.label) == (
        "q",
        "42",
        "42",
        None,
    )


def test_field_map_with_dotted_paths(tmp_path):
    path = write_jsonl(tmp_path / "m.jsonl", [{"q": "x", "out": {"text": "y"}, "gold": 1}])
    [(_, s)] = list(
        read_samples(path, field_map={"prompt": "q", "response": "out.text", "reference": "gold"})
    )
    assert (s.prompt, s.response, s.reference) == ("x", "y", 1)
    assert "q" not in s.metadata and "gold" not in s.metadata
    with pytest.raises(DataError, match="has no 'missing'"):
        list(read_samples(path, field_map={"response": "missing"}))


def test_a_responses_list_expands_into_a_group(tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", [{"id": "q1", "responses": ["a", "b"], "answer": 1}])
    samples = [s for _, s in read_samples(path)]
    assert [(s.id, s.group, s.response, s.reference) for s in samples] == [
        ("q1#0", "q1", "a", 1),
        ("q1#1", "q1", "b", 1),
    ]


def test_csv_rows_are_read_with_their_structures_labels_and_empty_cells(tmp_path):
    import csv

    path = tmp_path / "rows.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "prompt", "response", "reference", "label", "group", "kwargs"])
        writer.writerow(["1", "Say 2,\n then stop", "", "2", "1", "", '[{"n": 2}]'])
        writer.writerow(["2", "q", "two", "2", "false", "g", "[{'n': 3}]"])  # pandas' repr
    (line1, first), (line2, second) = list(read_samples(path))
    assert (line1, line2) == (3, 4)  # the quoted line break is inside row 1
    assert first.prompt == "Say 2,\n then stop" and first.response == ""  # graded as empty
    assert first.label == 1.0 and first.group is None and first.reference == "2"
    assert first.metadata["kwargs"] == [{"n": 2}]
    assert second.label is False and second.group == "g"
    assert second.metadata["kwargs"] == [{"n": 3}]
    assert count_rows(path) is None  # a line count would miscount quoted line breaks


def test_tsv_and_a_ragged_csv_row_name_the_line(tmp_path):
    tsv = tmp_path / "rows.tsv"
    tsv.write_text("id\tresponse\treference\n1\ta\tb\n", encoding="utf-8")
    [(_, sample)] = list(read_samples(tsv))
    assert (sample.response, sample.reference) == ("a", "b")
    bad = tmp_path / "bad.csv"
    bad.write_text("id,response\n1,a,extra\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.csv:2: 3 cells for 2 columns"):
        list(read_samples(bad))
    dup = tmp_path / "dup.csv"
    dup.write_text("id,id\n1,2\n", encoding="utf-8")
    with pytest.raises(DataError, match="repeated column names"):
        list(read_samples(dup))


def test_each_row_is_read_by_its_preset_and_each_preset_is_said_once(tmp_path):
    rows = [
        {"question": "q1", "answer": "so 2\n#### 2", "response": "2"},
        {"question": "q2", "answer": "no marks here", "response": "3"},
        {"question": "q3", "answer": "so 4\n#### 4", "response": "4"},
        {"problem": "p", "solution": r"\boxed{1}", "response": "1"},
        {"id": "own", "reference": "5", "response": "5", "question": "q5"},
    ]
    path = write_jsonl(tmp_path / "mixed.jsonl", rows)
    said = []
    samples = [s for _, s in read_samples(path, on_preset=said.append)]
    assert [p.name for p in said] == ["gsm8k", "math"]
    # a row that fits no preset is read as its columns are: 'answer' is the reference, whole,
    # for the grader to read (or refuse); a native row is never reinterpreted
    assert [s.reference for s in samples] == ["2", "no marks here", "4", "1", "5"]
    bad = []
    named = list(read_samples(path, preset="gsm8k", on_bad_row=bad.append))
    assert len(named) == 3 and [b.line for b in bad] == [4, 5]
    assert "gsm8k preset needs 'question', 'answer'" in bad[0].error
    unanswered = write_jsonl(tmp_path / "n.jsonl", [{"question": "q", "answer": "#### 1"}])
    with pytest.raises(DataError, match=r"the row has no 'response'.*'question', 'answer'"):
        list(read_samples(unanswered, require=("response",)))


def test_predictions_sharing_an_instance_are_numbered_and_said_once(tmp_path):
    from truegrade.data import read_samples

    task = {
        "instance_id": "org__repo-1",
        "base_commit": "abc",
        "test_patch": "diff",
        "FAIL_TO_PASS": "[]",
    }
    rows = [
        {**task, "model_patch": "p1"},
        {**task, "model_patch": "p2"},
        {**task, "instance_id": "org__repo-2", "model_patch": "q"},
        {**task, "model_patch": "p3"},
        {**task, "id": "mine", "model_patch": "p4"},  # its own id: kept
    ]
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    notes: list[str] = []
    samples = [s for _, s in read_samples(path, preset="swebench", on_note=notes.append)]
    assert [s.id for s in samples] == [
        "org__repo-1",
        "org__repo-1#2",
        "org__repo-2",
        "org__repo-1#3",
        "mine",
    ]
    assert [s.group for s in samples] == ["org__repo-1"] * 2 + ["org__repo-2"] + ["org__repo-1"] * 2
    assert len(notes) == 1 and "instance_id#2" in notes[0]
    assert [s.response for s in samples] == ["p1", "p2", "q", "p3", "p4"]
