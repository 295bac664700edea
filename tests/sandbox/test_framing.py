"""The wire between the harness and the sandbox: replies in JSON, requests in marshal."""

from __future__ import annotations

import json
import math
import os
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truegrade.sandbox import _codec as _zygote
from truegrade.sandbox._codec import (
    _compact_encoder,
    _read_request,
    encode_value,
    request_frame,
)
from truegrade.sandbox._zygote import _LOADED, RECORD

from .test_codec import plain


def _dumps(value):
    return json.dumps(value, separators=(",", ":"))


@given(plain)
def test_the_prebuilt_encoder_writes_what_json_dumps_writes(value):
    encoded = encode_value(value)
    assert _zygote._encode(encoded) == _dumps(encoded)


def test_the_prebuilt_encoder_keeps_special_floats_and_escapes():
    record = {"status": "ok", "value": [math.inf, -math.inf, 'é\n"', {"d": []}, 2**60]}
    assert _zygote._encode(record) == _dumps(record)
    assert math.isnan(json.loads(_zygote._encode([math.nan]))[0])


def _is_the_public_encoder(encode):
    return getattr(encode, "__func__", None) is json.JSONEncoder.encode


def test_the_c_encoder_is_used_where_it_agrees():
    assert not _is_the_public_encoder(_compact_encoder())


def test_without_a_c_encoder_the_public_one_is_used(monkeypatch):
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = _compact_encoder()
    assert _is_the_public_encoder(encode)
    assert encode({"a": [1, 2.5]}) == '{"a":[1,2.5]}'


def test_a_c_encoder_of_another_shape_is_not_trusted(monkeypatch):
    def other_signature(*args):
        raise TypeError("takes 10 arguments")

    def wrong_text(*args):
        return lambda value, level: ["{}"]

    for make in (other_signature, wrong_text):
        monkeypatch.setattr(json.encoder, "c_make_encoder", make)
        assert _is_the_public_encoder(_compact_encoder())


def _through_a_pipe(data: bytes):
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)))
    writer.start()  # a request larger than the pipe's buffer arrives in several reads
    try:
        return _read_request(read_end)
    finally:
        writer.join()
        os.close(read_end)


@pytest.mark.parametrize(
    ("header", "blob"),
    [
        ({"op": "session"}, b""),
        ({"calls": [[encode_value([1, (2, 3), {"k": {4}}]), encode_value({})]]}, b""),
        ({"op": "load", "source": "def f(x):\n    return x  # é\n" * 5000, "entry": "f"}, b""),
        ({"op": "run", "timeout_s": 2.5}, b"stdin\x00bytes" * 10000),
    ],
)
def test_a_request_arrives_as_it_was_sent(header, blob):
    assert _through_a_pipe(request_frame(header, blob)) == (header, blob)


def test_a_truncated_request_is_the_end_of_the_stream():
    data = request_frame({"op": "ping"})
    with pytest.raises(EOFError):
        _through_a_pipe(data[:-1])


@pytest.mark.parametrize(("record", "text"), [(_LOADED, b'{"status":"loaded"}')])
def test_the_replies_encoded_once_are_the_ones_the_harness_expects(record, text):
    (length,) = RECORD.unpack(record[: RECORD.size])
    assert record[RECORD.size :] == text  # compared byte for byte
    assert length == len(text)


@st.composite
def _headers(draw):
    return {"op": draw(st.text(max_size=8)), "value": encode_value(draw(plain))}


@given(_headers())
def test_any_request_header_of_plain_data_arrives_intact(header):
    assert _through_a_pipe(request_frame(header)) == (header, b"")
