from __future__ import annotations

import pytest

from truegrade.core import DataError, Sample, message_text, to_samples


def test_aliases_and_unknown_columns_go_where_documented():
    s = Sample.from_row({"id": 3, "answer": "42", "response": "x", "source": "gsm8k"})
    assert s.reference == "42"
    assert s.metadata == {"source": "gsm8k"}


def test_reference_wins_over_alias_and_alias_is_kept_as_data():
    s = Sample.from_row({"id": 1, "reference": "a", "answer": "b", "response": "r"})
    assert s.reference == "a"
    assert s.metadata["answer"] == "b"


def test_default_id_and_group_as_text():
    s = Sample.from_row({"response": "r", "group": 7}, default_id=12)
    assert s.id == 12 and s.key == "12" and s.group == "7"


def test_chat_messages_give_the_last_assistant_text():
    s = Sample(
        id=1,
        prompt=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "2+2?"}],
        response=[
            {"role": "assistant", "content": [{"type": "text", "text": "fo"}, {"text": "ur"}]},
            {"role": "tool", "content": "ignored"},
        ],
    )
    assert s.response_text == "four"
    assert s.prompt_text == "be brief\n\n2+2?"


def test_message_text_handles_odd_content():
    assert message_text(None) == ""
    assert message_text(["a", {"text": "b"}, {"image": 1}]) == "ab"


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"id": 1, "label": "maybe"}, "label"),
        ({"id": 1, "metadata": [1]}, "metadata"),
        ({"id": [1]}, "id"),
    ],
)
def test_bad_fields_are_named(row, field):
    with pytest.raises(DataError, match=f"'{field}'"):
        Sample.from_row(row)


def test_label_words_are_read_strictly():
    assert Sample.from_row({"id": 1, "label": "correct"}).label is True
    assert Sample.from_row({"id": 1, "label": "FAIL"}).label is False
    assert Sample.from_row({"id": 1, "label": 0.5}).label == 0.5


def test_to_samples_numbers_rows_without_ids():
    samples = to_samples([{"response": "a"}, Sample(id="x", response="b")])
    assert [s.id for s in samples] == [0, "x"]
    with pytest.raises(TypeError, match="Sample or a row dict"):
        to_samples(["just a string"])  # type: ignore[list-item]
