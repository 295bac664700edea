"""The plain-data codec and the framing the harness and the sandbox share.

Every value that crosses the sandbox boundary is plain builtin data, rebuilt on the other side
from JSON with exact types (``type(x) is int``): nothing of an object's behaviour crosses. This
module is also run inside the sandbox (the zygote's code objects are this module's and
``_kernel``'s and ``_zygote``'s, executed in one namespace), so it imports the standard library
only.

What it must never do: build a value of a type the sender chose, or take time superlinear in
what it decodes.
"""

from __future__ import annotations

import base64
import collections
import json
import marshal
import os
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

__all__ = [
    "MAX_COLLISIONS",
    "MAX_DEPTH",
    "PLAIN_TYPES",
    "PlainDataError",
    "crowded",
    "crowded_within",
    "decode_value",
    "encode_value",
    "frame",
    "request_frame",
]

# -- the plain-data codec (shared with the harness) -----------------------------------------------

PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset)
"""The only types a value may have to cross the sandbox boundary, matched exactly (``type(x) is
T``): a subclass of ``int`` with an ``__eq__`` that always says yes is not an ``int``. A call
session's answers are the exception (``encode_value(..., held=True)``): a subclass instance is
sent as the plain value it holds."""

#: The deepest nesting a value may have to cross the sandbox boundary (deeper is a
#: ``PlainDataError``).
MAX_DEPTH = 100
_SMALL_INT = 1 << 63
_TAGS = frozenset({"t", "s", "f", "d", "b", "c", "i"})


if TYPE_CHECKING or __name__ != "__main__":
    # imported by the harness: the codec's error is one of truegrade's (from a module that
    # imports nothing); inside the sandbox, where only this file runs, a ValueError alone
    from truegrade._errors import TruegradeError as _Root
else:

    class _Root(Exception):
        """Inside the sandbox, where only this file runs: no tree to join."""


class PlainDataError(_Root, ValueError):
    """A value is not plain builtin data (or an encoding of it is malformed)."""


def _type_name(value: Any) -> str:
    kind = type(value)
    for base in PLAIN_TYPES:
        if issubclass(kind, base):
            return f"a {kind.__qualname__} (a subclass of {base.__name__})"
    return f"a {kind.__module__}.{kind.__qualname__} object"


def _held(value: Any) -> Any:
    """The plain value an instance of a plain type's subclass holds, read by the base type's own
    C methods (never the object's: its ``__iter__``, ``__eq__`` or ``keys`` play no part), or
    ``_NOT_HELD`` for anything else. ``type()`` decides, not ``isinstance``, which a forged
    ``__class__`` can fool."""
    kind = type(value)
    for base, read in _HOLDERS:
        if issubclass(kind, base):
            return read(value)
    return _NOT_HELD


_NOT_HELD = object()
_HOLDERS: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (int, int.__int__),
    (float, float.__float__),
    (complex, lambda value: complex(complex.real.__get__(value), complex.imag.__get__(value))),
    (str, str.__str__),
    (bytes, lambda value: bytes.__getitem__(value, slice(None))),
    (list, list.copy),
    (tuple, lambda value: tuple.__getitem__(value, slice(None))),
    (dict, lambda value: dict(dict.items(value))),
    (set, set.copy),
    (frozenset, frozenset.copy),
)


def encode_value(value: Any, depth: int = 0, *, held: bool = False) -> Any:
    """Plain builtin data -> a JSON-able structure; anything else raises ``PlainDataError``.

    JSON keeps ``None``, ``bool``, ``int``, ``float``, ``str`` and ``list``; the rest are one-key
    objects: ``{"t": [...]}`` tuple, ``{"s": [...]}`` set, ``{"f": [...]}`` frozenset,
    ``{"d": [[k, v], ...]}`` dict (keys of any plain type), ``{"b": base64}`` bytes,
    ``{"c": [re, im]}`` complex, ``{"i": hex}`` an int too large for a JSON number reader.

    With ``held`` (what a call session answers), an instance of a subclass of one of these types
    (a ``Counter``, a named tuple, an ``IntEnum``) is sent as the plain value it holds: only that
    data crosses, none of the object's behaviour, so an ``int`` whose ``__eq__`` always says yes
    arrives as the number it stores. The session is the program's own process, so this adds
    nothing a program could not already send; it only stops refusing honest answers.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return value if -_SMALL_INT < value < _SMALL_INT else {"i": format(value, "x")}
    if kind is float:
        return value
    if depth > MAX_DEPTH:
        raise PlainDataError(f"nested more than {MAX_DEPTH} levels")
    if kind is list:
        return [encode_value(item, depth + 1, held=held) for item in value]
    if kind is tuple:
        return {"t": [encode_value(item, depth + 1, held=held) for item in value]}
    if kind is dict:
        return {
            "d": [
                [encode_value(k, depth + 1, held=held), encode_value(v, depth + 1, held=held)]
                for k, v in value.items()
            ]
        }
    if kind is set:
        return {"s": [encode_value(item, depth + 1, held=held) for item in value]}
    if kind is frozenset:
        return {"f": [encode_value(item, depth + 1, held=held) for item in value]}
    if kind is bytes:
        return {"b": base64.b64encode(value).decode("ascii")}
    if kind is complex:
        return {"c": [value.real, value.imag]}
    if held:
        plain = _held(value)
        if plain is not _NOT_HELD:
            return encode_value(plain, depth + 1, held=True)
    raise PlainDataError(f"{_type_name(value)} is not plain builtin data")


MAX_COLLISIONS = 64
"""Distinct values of one set, frozenset or dict, or of one answer taken whole
(``crowded_within``), that may share a hash. Ints (and floats) hash to their value modulo a
fixed prime, so a program can send thousands of distinct ones with one hash; building a set of
them takes time quadratic in their number (40,000 cost the grader 30 s of CPU). Honest answers
come nowhere near: ints with one hash differ by multiples of 2**61 - 1."""


_CROWD = f"more than {MAX_COLLISIONS} distinct items share one hash"


def crowded(items: Any, limit: int = MAX_COLLISIONS) -> bool:
    """Whether more than ``limit`` distinct items share a hash: the check costs a hash per item
    and at most ``limit`` comparisons per item, where building the set would cost the square of
    a crowd. Equal items (a list's repeats) are not a crowd. Unhashable items raise TypeError,
    as ``set()`` would."""
    buckets: dict[int, list[Any]] = {}
    return any(_joins_crowd(buckets, hash(item), item, limit) for item in items)


def _joins_crowd(buckets: dict[int, list[Any]], key: int, item: Any, limit: int) -> bool:
    """Put ``item`` in its hash's bucket, unless an equal item is there; whether the bucket now
    holds more than ``limit``."""
    bucket = buckets.setdefault(key, [])
    if any(type(known) is type(item) and known == item for known in bucket):
        return False
    bucket.append(item)
    return len(bucket) > limit


def crowded_within(value: Any, limit: int = MAX_COLLISIONS) -> bool:
    """Whether more than ``limit`` distinct values of one hash are anywhere in a plain ``value``:
    its items, and the items of every collection it holds, all taken together, since a check
    may put any of them in one set (``set(answer)``, ``set(sum(rows, []))``), and each list
    also as the tuple a check may make of it (``set(map(tuple, rows))``). The codec refuses a
    crowded set or dict before building it; this also finds a crowd in lists and tuples, which
    cost nothing to build but a check's ``set()`` of them time quadratic in the crowd's size.

    Linear: the hashes are counted first (in C, where every item of a collection hashes), and
    only the values of a hash seen more than ``limit`` times are compared, at most ``limit``
    comparisons each. A tuple's hash reads what it holds, so nesting multiplies the hashing by
    at most ``MAX_DEPTH``. Unhashable values (a list holding a list, a dict) are passed over,
    as no set can hold them."""
    counts: collections.Counter[int] = collections.Counter()
    for parts in _parts(value):
        counts.update(_hashes(parts))
    if not counts or max(counts.values()) <= limit:
        return False
    suspects = {digest for digest, seen in counts.items() if seen > limit}
    buckets: dict[int, list[Any]] = {}
    for parts in _parts(value):
        for item in parts:
            digest = _hash_or_none(item)
            if digest in suspects and _joins_crowd(buckets, digest, item, limit):
                return True
    return False


_NESTED = frozenset({list, tuple, set, frozenset, dict})


def _parts(value: Any) -> Any:
    """The values of each collection in ``value`` (a dict's keys and values), a collection at a
    time, and each list once more as a tuple of its items."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            parts: Any = [*item, *item.values()]
        elif kind in _NESTED:
            parts = item
        else:
            continue
        stack += [part for part in parts if type(part) in _NESTED]
        yield parts
        if kind is list:
            yield (tuple(item),)


def _hashes(parts: Any) -> list[int]:
    try:
        return list(map(hash, parts))
    except TypeError:  # some are unhashable: hash the others one by one
        return [digest for digest in map(_hash_or_none, parts) if digest is not None]


def _hash_or_none(item: Any) -> int | None:
    try:
        return hash(item)
    except TypeError:
        return None


def decode_value(data: Any, depth: int = 0) -> Any:
    """The inverse of ``encode_value``, strict: every value it returns is built here, from JSON,
    so it is of an exact builtin type whatever the sender intended."""
    kind = type(data)
    if data is None or kind is bool or kind is int or kind is float or kind is str:
        return data
    if depth > MAX_DEPTH:
        raise PlainDataError(f"nested more than {MAX_DEPTH} levels")
    if kind is list:
        return [decode_value(item, depth + 1) for item in data]
    if kind is not dict or len(data) != 1:
        raise PlainDataError("malformed value encoding")
    ((tag, body),) = data.items()
    if tag not in _TAGS:
        raise PlainDataError(f"unknown value tag {tag!r}")
    try:
        if tag == "i":
            if type(body) is not str:
                raise PlainDataError("malformed big integer")
            # hexadecimal reads in linear time; the answer's size is the output cap's to bound
            return int(body, 16)
        if tag == "b":
            if type(body) is not str:
                raise PlainDataError("malformed bytes")
            return base64.b64decode(body.encode("ascii"), validate=True)
        if type(body) is not list:
            raise PlainDataError(f"malformed {tag!r} value")
        if tag == "c":
            if len(body) != 2 or not all(type(x) in (int, float) for x in body):
                raise PlainDataError("malformed complex")
            # an int past any float (``[10**400, 0]``) raises OverflowError: caught below
            return complex(body[0], body[1])
        items = [decode_value(item, depth + 1) for item in body]
        if tag == "t":
            return tuple(items)
        if tag == "d":
            for pair in items:
                if type(pair) is not list or len(pair) != 2:
                    raise PlainDataError("malformed dict item")
        keys = items if tag != "d" else [pair[0] for pair in items]
        if crowded(keys):
            raise PlainDataError(_CROWD)
        if tag == "s":
            return set(items)
        if tag == "f":
            return frozenset(items)
        return dict((pair[0], pair[1]) for pair in items)
    except (TypeError, ValueError, OverflowError) as exc:  # unhashable items, bad base64 or hex,
        # a complex part past any float: whatever a forged record holds, the caller gets
        # PlainDataError (a fail of the program), never another exception (an error)
        if isinstance(exc, PlainDataError):
            raise
        raise PlainDataError(f"malformed {tag!r} value: {exc}") from None


# -- framing --------------------------------------------------------------------------------------

# Each first touch of a page after a fork costs a copy (about 2 us here), in the child and in the
# zygote alike, and a fresh session is mostly those copies. Python's json module touches about 50
# pages per call; so replies are encoded by one prebuilt C encoder (about 20), requests come in
# marshal (about 10), and the replies every session sends are encoded once, here.

_HEAD = struct.Struct(">II")


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, separators=(",", ":"))``, as one C encoder built once when this
    interpreter's ``json`` has one that gives the same text (else ``JSONEncoder.encode``)."""
    encoder = json.JSONEncoder(separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encoder.encode
    try:
        chunks = make(
            None, encoder.default, json.encoder.encode_basestring_ascii, None, ":", ",",
            False, False, True,
        )  # fmt: skip

        def encode(value: Any) -> str:
            return "".join(chunks(value, 0))

        sample = {"a": [1, -2.5, "\u00e9\n", None, True, float("nan")], "b": {"c": {}}, "d": []}
        if encode(sample) != "".join(encoder.iterencode(sample)):  # the pure-Python encoder
            return encoder.encode
    except Exception:  # another interpreter's internals: use the public path
        return encoder.encode
    return encode


_encode = _compact_encoder()


def frame(header: dict[str, Any], blob: bytes = b"") -> bytes:
    """One message from the sandbox: two big-endian lengths, a JSON header, raw bytes (the
    harness reads what comes out of the sandbox as JSON, and nothing else)."""
    return _framed(_encode(header).encode("utf-8"), blob)


def request_frame(header: dict[str, Any], blob: bytes = b"") -> bytes:
    """One message into the sandbox, from the harness: as ``frame``, the header in ``marshal``
    (the same interpreter reads it; only the trusted harness ever writes one)."""
    return _framed(marshal.dumps(header), blob)


def _framed(head: bytes, blob: bytes) -> bytes:
    return _HEAD.pack(len(head), len(blob)) + head + blob


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_request(fd: int) -> tuple[dict[str, Any], bytes]:
    """A ``request_frame`` from the harness (the only writer of the pipes this reads)."""
    head_len, blob_len = _HEAD.unpack(_read_exact(fd, _HEAD.size))
    header = marshal.loads(_read_exact(fd, head_len))  # noqa: S302 - written by the harness only
    return header, _read_exact(fd, blob_len) if blob_len else b""
