"""The plain-data codec: only exact builtin types cross the sandbox boundary, either way; an answer
of a plain type's subclass crosses as the plain value it holds."""

from __future__ import annotations

import collections
import enum
import json
import math
from fractions import Fraction

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
    value = [2**200, -(2**70), 18 * 10**500_000, math.inf, -math.inf]  # past decimal's limit
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


class Lying(list):
    """A list subclass whose every own method lies about what it holds."""

    def __iter__(self):
        return iter(["forged"])

    def copy(self):
        return ["forged"]

    def __eq__(self, other):
        return True


class LyingDict(dict):
    def keys(self):
        return ["forged"]

    def items(self):
        return [("forged", 1)]

    def __iter__(self):
        return iter(["forged"])


class ForgedClass:
    __class__ = int  # isinstance(x, int) says yes; type(x) does not


Point = collections.namedtuple("Point", "x y")


class Colour(enum.IntEnum):
    RED = 3


def _held_round_trip(value):
    return decode_value(json.loads(json.dumps(encode_value(value, held=True))))


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        (collections.Counter("aab"), {"a": 2, "b": 1}),
        (collections.OrderedDict(a=1), {"a": 1}),
        (collections.defaultdict(list, {"k": [Colour.RED]}), {"k": [3]}),
        ([Point(1, 2)], [(1, 2)]),
        (Colour.RED, 3),
        (AlwaysEqual(1), 1),
        (type("S", (str,), {"__str__": lambda self: "forged"})("x"), "x"),
        (type("F", (float,), {"__float__": lambda self: 9.0})(1.5), 1.5),
        (type("B", (bytes,), {"__getitem__": lambda self, i: b"z"})(b"ab"), b"ab"),
        (type("C", (complex,), {"real": property(lambda self: 9.0)})(1 + 2j), 1 + 2j),
        (type("Fs", (frozenset,), {"__iter__": lambda self: iter([9])})({1}), frozenset({1})),
        (type("St", (set,), {"__iter__": lambda self: iter([9])})({1}), {1}),
        (type("T", (tuple,), {"__getitem__": lambda self, i: 9})((1, 2)), (1, 2)),
        (Lying([1, 2]), [1, 2]),
        (LyingDict({"a": 1}), {"a": 1}),
    ],
    ids=lambda v: type(v).__name__,
)
def test_an_answer_of_a_plain_types_subclass_crosses_as_the_value_it_holds(value, plain):
    back = _held_round_trip(value)
    assert back == plain
    _same_types(back, plain)  # exact builtin types: none of the object's methods came along


@pytest.mark.parametrize(
    "value",
    [ForgedClass(), Fraction(1, 2), (x for x in range(3)), range(3), [EqualToAll()]],
    ids=lambda v: type(v).__name__,
)
def test_held_values_still_refuse_what_is_no_plain_type(value):
    with pytest.raises(PlainDataError, match="not plain builtin data"):
        encode_value(value, held=True)


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
        {"c": [10**400, 0]},  # a part past any float: OverflowError, were it not caught
        {"c": [0, -(10**400)]},
        {"c": [True, 0]},
        {"i": "not hex"},
        {"i": ""},
        {"b": "\u00e9t\u00e9"},  # not ASCII
        {"b": 5},
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
