"""The plain-data codec: only exact builtin types cross the sandbox boundary, either way."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truegrade.sandbox import PlainDataError, decode_value, encode_value

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
    st.complex_numbers(allow_nan=False),
)
hashable = st.recursive(
    scalars, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3), max_leaves=8
)
plain = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(hashable, inner, max_size=3)
        | st.sets(hashable, max_size=3)
        | st.frozensets(hashable, max_size=3)
    ),
    max_leaves=20,
)


def _same_types(a, b):
    assert type(a) is type(b)
    if isinstance(a, (list, tuple)):
        for x, y in zip(a, b, strict=True):
            _same_types(x, y)
    elif isinstance(a, dict):
        for k in a:
            _same_types(a[k], b[k])


@given(plain)
def test_plain_data_survives_the_round_trip_with_its_exact_types(value):
    text = json.dumps(encode_value(value))  # what actually travels
    back = decode_value(json.loads(text))
    assert back == value
    _same_types(back, value)


def test_big_integers_and_special_floats_cross():
    value = [2**200, -(2**70), math.inf, -math.inf]
    assert decode_value(json.loads(json.dumps(encode_value(value)))) == value
    nan = decode_value(json.loads(json.dumps(encode_value(math.nan))))
    assert math.isnan(nan)


class AlwaysEqual(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class EqualToAll:
    def __eq__(self, other):
        return True


@pytest.mark.parametrize(
    "value",
    [
        AlwaysEqual(1),
        type("S", (str,), {})("x"),
        type("L", (list,), {})([1]),
        type("F", (float,), {})(1.0),
        type("T", (tuple,), {})((1,)),
        EqualToAll(),
        [1, EqualToAll()],
        {"k": AlwaysEqual(2)},
        (x for x in range(3)),
        range(3),
        bytearray(b"x"),
    ],
    ids=lambda v: type(v).__name__,
)
def test_subclasses_and_other_objects_are_refused(value):
    with pytest.raises(PlainDataError):
        encode_value(value)


@pytest.mark.parametrize(
    "data",
    [
        {"x": 1},
        {"t": 1},
        {"t": [1], "s": [2]},
        {"i": 12},
        {"b": "not base64!"},
        {"c": [1]},
        {"s": [[1, 2]]},
        {"d": [[[1], 2]]},
        {"d": [[1]]},
        "ok",  # a plain string is fine: this one must decode
    ],
)
def test_malformed_encodings_are_refused(data):
    if data == "ok":
        assert decode_value(data) == "ok"
        return
    with pytest.raises(PlainDataError):
        decode_value(data)


def test_decoding_builds_exact_types_whatever_was_sent():
    # a forged encoding can only ever describe builtin values
    decoded = decode_value({"t": [1, {"s": [True]}, {"d": [["k", {"f": [1.5]}]]}]})
    assert decoded == (1, {True}, {"k": frozenset({1.5})})
    assert type(decoded[0]) is int


def test_nesting_is_bounded():
    deep = []
    cursor = deep
    for _ in range(200):
        cursor.append([])
        cursor = cursor[0]
    with pytest.raises(PlainDataError):
        encode_value(deep)
