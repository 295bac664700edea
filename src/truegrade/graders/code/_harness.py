"""The trusted harness: runs a response's tests against its program, which runs in the sandbox.

It runs in the engine's killable workers (one sandbox per worker, started once and reused), and
it is the only place where the tests' logic and expected values exist: the program in the sandbox
receives inputs and nothing else, and every answer comes back as plain data rebuilt here.

* HumanEval style: the dataset's ``check(candidate)`` runs here, with ``candidate`` a proxy that
  sends each call's arguments into the sandbox and returns the plain answer. Helpers the check
  needs (HumanEval's ``poly``, ``encode_cyclic``...) come from the prompt or the spec's
  ``helpers``, never from the response. In the check's namespace the entry point's name is the
  proxy as well (some checks call the function by name).
* call cases: each case is one call, compared here with the expected value. When the spec
  names a reference program (``expected_from``) instead of stating expected values, the
  reference is loaded in the same sandbox first and called with every case's inputs; its
  answers come back as plain data like any program's, and are kept per worker (keyed by a hash
  of the program, the entry point and the inputs), so a GRPO group or a second pass over a
  dataset computes them once. A reference that gives no answer for a case makes the row an
  error (``bad_reference``), never a fail of the response.
* stdin/stdout: each test is one run of the whole program.

Calls run in a session (one process for a pass over the tests). When a pass succeeds, the same
calls are replayed in a fresh process in a secret random order and must give exactly the same
answers: a function that counts its calls, or otherwise answers from state, fails. Pass needs
positive evidence for every test: an answer for every call, a check that returns; an exit, a
skip, a missing or malformed answer is a failure.

What it must never do: execute the response in this process (only the dataset's check and
helpers run here), send an expected value into the sandbox, or compare anything that is not
plain data.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import hashlib
import json
import math
import operator
import re
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from truegrade._budgets import WALL_FACTOR, wall_backstop_s
from truegrade.graders.code._calls import UNKNOWN, Budget, Calls, Logged, SandboxBroke
from truegrade.graders.code._compile import ensure_pch
from truegrade.graders.code._conventions import verdict_name
from truegrade.graders.code._evalplus import evalplus_match, evalplus_tolerances
from truegrade.graders.code._languages import LANGUAGES, language_named
from truegrade.graders.code._program import build_program
from truegrade.graders.code._spec import Case, SpecProblem, TestSpec, parse_spec
from truegrade.graders.code._stdio import (
    OUTPUT_BYTES,
    CheckerFailed,
    StdioSettings,
    judged_text,
    run_stdio_program,
    source_of,
    stdio_bound_s,
)
from truegrade.graders.code._tells import find_tells, visible_inputs
from truegrade.sandbox import (
    MAX_DEPTH,
    STREAM_BYTES_MAX,
    CallResult,
    Opaque,
    PlainDataError,
    Program,
    RunResult,
    Sandbox,
    SandboxConfig,
    SandboxError,
    SandboxUnavailable,
    crowded,
    encode_value,
)

__all__ = ["MAX_CPU", "RESPONSE_BYTES", "CodeFlag", "CodeKernel", "values_match"]


class CodeFlag:
    """Flags the ``code`` grader raises (besides the static tells)."""

    UNSANDBOXED = "unsandboxed"
    """The program ran with no isolation (only with an explicit unsafe opt-in)."""
    WRONG_ANSWER = "wrong_answer"
    """A test got an answer, and it was wrong (or the check's assertion failed)."""
    EXCEPTION = "exception"
    """The program raised, and the test did not expect it."""
    EARLY_EXIT = "early_exit"
    """The program ended (``sys.exit``, ``os._exit``...) before answering."""
    TIMEOUT = "timeout"
    """A call ran past its deadline, a run used up its CPU-time limit, or the program's time
    budget ran out before a call."""
    IDLE_LIMIT = "idle_limit"
    """A whole-program run reached its wall-clock backstop with CPU time to spare: it waited
    (slept, blocked) rather than computed."""
    MEMORY = "memory_limit"
    """The program ran out of its memory limit."""
    OUTPUT_LIMIT = "output_limit"
    """The program wrote more than the output cap."""
    SANDBOX_VIOLATION = "sandbox_violation"
    """The program made a forbidden system call or broke a file-size limit, and was killed."""
    PROGRAM_CRASHED = "program_crashed"
    """The program's process died of a signal."""
    NOT_PLAIN_DATA = "not_plain_data"
    """A return value was not plain builtin data (a custom class, a ``Fraction``, a generator); a
    subclass of a plain type is judged by the plain value it holds instead."""
    BAD_RESULT = "bad_result_record"
    """The program's answer arrived malformed or duplicated."""
    ORDER_DEPENDENT = "order_dependent"
    """Replayed in a fresh process in another order, the calls gave different answers."""
    SYNTAX_ERROR = "syntax_error"
    """The program does not compile."""
    COMPILE_ERROR = "compile_error"
    """A stdin/stdout program in a named language does not build (the compiler's message is
    in the explanation)."""
    CHECKER_ERROR = "checker_error"
    """With ``bad_reference``: the row's special judge does not build, or gives no verdict on a
    test's own expected output (an error, not a fail)."""
    BUDGET_EXHAUSTED = "budget_exhausted"
    """A stdin/stdout test not run, or stopped short of its time limit, because the response's
    time budget (``program_timeout_s``) ran out: a fail, named for what happened, never taken
    for a ``time_limit`` the program did not reach."""
    CHECKER_FAILED = "checker_failed"
    """The special judge crashed, was killed, ran past its bounds or exited with no verdict on
    the program's output, while it judges the test's expected output: a fail of that test, never
    an error (a trainer skips errors, so a program must not be able to choose one)."""
    RESPONSE_TOO_LONG = "response_too_long"
    """The response is longer than ``response_bytes``, or its program's f-strings would cost
    Python's parser time quadratic in their size past a bound (``FSTRING_WORK``): every test
    fails unrun and the response is not parsed, so no response makes the grader's own parse
    run long."""
    MISSING_ENTRY = "missing_entry_point"
    """The program defines no function with the entry point's name."""
    EXIT_STATUS = "exit_status"
    """A whole-program run exited with a non-zero status."""
    BAD_REFERENCE = "bad_reference"
    """The row's test spec cannot be used (an error, not a fail)."""
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"
    """No sandbox can run here and running unsandboxed was not allowed (an error)."""
    SANDBOX_ERROR = "sandbox_error"
    """The sandbox failed while grading (an error, never the program's doing)."""


_STATUS_FLAGS = {
    "timeout": CodeFlag.TIMEOUT,
    "cpu_limit": CodeFlag.TIMEOUT,
    "output_limit": CodeFlag.OUTPUT_LIMIT,
    "violation": CodeFlag.SANDBOX_VIOLATION,
    "crashed": CodeFlag.PROGRAM_CRASHED,
    "memory": CodeFlag.MEMORY,
    "exited": CodeFlag.EARLY_EXIT,
    "bad_value": CodeFlag.NOT_PLAIN_DATA,
    "bad_record": CodeFlag.BAD_RESULT,
    "missing_entry": CodeFlag.MISSING_ENTRY,
}
_BASE_ONLY = frozenset({"SystemExit", "KeyboardInterrupt", "GeneratorExit"})
_CONTROL_FLOW = frozenset({"StopIteration", "StopAsyncIteration"})
"""Exceptions that Python's iteration protocols take for "no more items", not for an error:
raised into a check as themselves, they would end ``all(map(candidate, xs))`` or a ``zip`` early
and pass it. The program's are raised as ``CandidateError`` instead, whatever the record claims
about their class (a class the program defines may call itself ``builtins.StopIteration``)."""
_SANDBOXES: dict[tuple[SandboxConfig, str], Sandbox] = {}
_UNAVAILABLE: dict[SandboxConfig, tuple[float, str]] = {}
_RETRY_UNAVAILABLE_S = 60.0


def sandbox_for(config: SandboxConfig, role: str = "program") -> Sandbox:
    """This process's sandbox for ``config``, started (or restarted) as needed. A special
    judge runs in a sandbox of its own (``role="checker"``): the expected outputs it reads
    never enter the sandbox where the program runs.

    When no sandbox can start, the reason is remembered for a minute, so a batch does not try
    every isolation mode again for each of its samples.
    """
    failed = _UNAVAILABLE.get(config)
    if failed is not None and time.monotonic() - failed[0] < _RETRY_UNAVAILABLE_S:
        raise SandboxUnavailable(failed[1])
    box = _SANDBOXES.get((config, role))
    if box is None:
        box = _SANDBOXES[(config, role)] = Sandbox(config)
    try:
        return box.start()
    except SandboxUnavailable as exc:
        _UNAVAILABLE[config] = (time.monotonic(), str(exc))
        raise


def _short(value: Any, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters, in time bounded by ``limit`` and the value's
    depth, whatever its size: an answer may be a megabyte of items, or hold ints too long to
    write out (``repr`` would raise), and only the start is ever shown."""
    text = ""
    for piece in _repr_pieces(value, limit, 0):
        text += piece
        if len(text) > limit:
            return text[: limit - 3] + "..."
    return text


_DIGITS_BITS = 4000
"""Ints longer than this are named by their size: writing one out in decimal costs time
quadratic in its length, and Python refuses past 4,300 digits."""
_BRACKETS: dict[type, tuple[str, str]] = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    set: ("{", "}"),
    frozenset: ("frozenset({", "})"),
}


def _repr_pieces(value: Any, limit: int, depth: int) -> Iterator[str]:
    """``repr(value)`` in pieces, lazily, so the caller can stop after ``limit`` characters."""
    kind = type(value)
    if kind is int and value.bit_length() > _DIGITS_BITS:
        yield f"<an int of {value.bit_length()} bits>"
    elif kind is str or kind is bytes:
        yield repr(value[: limit + 1])  # only the start can show
    elif depth > MAX_DEPTH and kind in (list, tuple, set, frozenset, dict):
        yield "..."
    elif kind is dict:
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ", " if i else ""
            yield from _repr_pieces(key, limit, depth + 1)
            yield ": "
            yield from _repr_pieces(item, limit, depth + 1)
        yield "}"
    elif kind in _BRACKETS:
        if not value and kind in (set, frozenset):
            yield f"{kind.__name__}()"
            return
        start, end = _BRACKETS[kind]
        yield start
        for i, item in enumerate(value):
            yield ", " if i else ""
            yield from _repr_pieces(item, limit, depth + 1)
        yield ",)" if kind is tuple and len(value) == 1 else end
    else:  # None, bool, a short int, float, complex; an Opaque answer
        yield repr(value)


def _message(exc: BaseException, limit: int = 300) -> str:
    """``str(exc)`` cut to ``limit`` characters. A check's exception may carry the program's
    answer (``assert got == want, got``): a megabyte long, or holding an int too long for
    ``str``, which then raises; its arguments are shown as ``_short`` shows values instead."""
    try:
        text = str(exc)
    except Exception:
        text = _short(exc.args[0] if len(exc.args) == 1 else exc.args, limit)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def values_match(
    actual: Any,
    expected: Any,
    abs_tol: float = 0.0,
    rel_tol: float = 0.0,
    *,
    tuples_as_lists: bool = True,
) -> bool:
    """Strict comparison of plain data, where the expected value came from JSON.

    Types must agree (``True`` is not ``1``, ``"1"`` is not ``1``), except that a list in the
    expected value matches a tuple of equal items (JSON has no tuples; ``tuples_as_lists=False``
    when the expected value has its exact types, computed by a reference program) and an ``int``
    matches a ``float`` that is exactly that integer (``_numbers_match``). Floats are equal
    exactly unless tolerances are given; NaN equals NaN.
    """
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    numbers = (int, float)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        return _numbers_match(actual, expected, abs_tol, rel_tol)
    # a tuple is a tuple; a list in JSON may stand for one
    sequences = (list, tuple) if tuples_as_lists and isinstance(expected, list) else type(expected)
    if isinstance(expected, (list, tuple)) and isinstance(actual, sequences):
        return len(actual) == len(expected) and all(
            values_match(a, e, abs_tol, rel_tol, tuples_as_lists=tuples_as_lists)
            for a, e in zip(actual, expected, strict=True)
        )
    if isinstance(expected, dict) and isinstance(actual, dict):
        # keys as strictly as values: ``{1: "a"}`` does not meet ``{True: "a"}``
        mine, theirs = _keyed(actual), _keyed(expected)
        if mine is None or theirs is None or mine.keys() != theirs.keys():
            return False
        return all(
            values_match(
                actual[mine[key]], expected[k], abs_tol, rel_tol, tuples_as_lists=tuples_as_lists
            )
            for key, k in theirs.items()
        )
    if type(expected) in (set, frozenset) and type(actual) is type(expected):
        items = _as_set(actual)  # items as strictly as values: ``{1}`` does not meet ``{True}``
        return items is not None and items == _as_set(expected)
    return type(actual) is type(expected) and bool(actual == expected)


def _numbers_match(actual: float, expected: float, abs_tol: float, rel_tol: float) -> bool:
    """Two numbers, never through a conversion that rounds: ints compare exactly; an int and a
    float are equal when the float is exactly that integer (Python's own ``==``, which never
    rounds: ``2.0**64 == 2**64 + 1`` is false), or, with tolerances, when their exact
    difference is within them; two floats as ``math.isclose`` (NaN equals NaN)."""
    if type(actual) is int and type(expected) is int:
        return actual == expected
    if type(actual) is float and type(expected) is float:
        if math.isnan(actual) or math.isnan(expected):
            return math.isnan(actual) and math.isnan(expected)
        return math.isclose(actual, expected, rel_tol=rel_tol, abs_tol=abs_tol)
    if actual == expected:
        return True
    if not (abs_tol or rel_tol) or not (_finite(actual) and _finite(expected)):
        return False
    a, b = Fraction(actual), Fraction(expected)  # exact, whatever the int's size
    return abs(a - b) <= max(Fraction(rel_tol) * max(abs(a), abs(b)), Fraction(abs_tol))


def _finite(number: float) -> bool:
    """Whether a number is finite, never converting an int to a float (``math.isfinite(10**400)``
    raises ``OverflowError``: every int is finite)."""
    return type(number) is int or math.isfinite(number)


_COLLECTIONS = (list, tuple, set, frozenset)


class _Crowded(Exception):
    """A set of item keys would hold a crowd of one hash (``crowded``): it is not built."""


def _item_key(value: Any) -> Any:
    """A hashable stand-in for a plain value that keeps the distinctions ``values_match`` keeps
    (``True`` is not ``1``, a list is not a tuple, a complex number is not a real one) and the
    equalities it grants (``1 == 1.0``, NaN equals NaN).

    Raises:
        _Crowded: a set or dict inside would be built of a crowd of keys of one hash.
    """
    kind = type(value)
    if kind is bool:
        return ("bool", value)
    if kind is float and value != value:
        return ("nan",)
    if kind is int or kind is float:
        return ("number", value)
    if kind is list or kind is tuple:
        return (kind.__name__, tuple(_item_key(item) for item in value))
    if kind is set or kind is frozenset:
        return ("set", frozenset(_keys(value)))
    if kind is dict:
        return ("dict", frozenset(_keys(value.items())))
    return (kind.__name__, value)


def _keys(items: Any) -> list[Any]:
    """The ``_item_key`` of each of ``items``.

    Raises:
        _Crowded: they hold a crowd of one hash. A program chooses its items, and their keys'
            hashes follow from theirs: a set or dict of them would cost time quadratic in the
            crowd.
    """
    keys = [_item_key(item) for item in items]
    if crowded(keys):
        raise _Crowded
    return keys


def _keyed(items: Any) -> dict[Any, Any] | None:
    """``items`` by their ``_item_key``, or None when the keys hold a crowd of one hash."""
    try:
        return dict(zip(_keys(items), items, strict=True))
    except _Crowded:
        return None


def _as_set(value: Any) -> frozenset[Any] | None:
    """The items of a collection as a set of their keys (``compare: set``), or None for
    anything else, and for a collection crowded with distinct items of one hash (it matches
    nothing)."""
    if type(value) not in _COLLECTIONS:
        return None
    keyed = _keyed(value)
    return None if keyed is None else frozenset(keyed)


@dataclass
class TestOutcome:
    """The verdict on one test (``verdict``: a judge's name for it, for stdin/stdout tests in
    a named language)."""

    name: str
    passed: bool
    flag: str | None = None
    reason: str = ""
    verdict: str = ""
    cpu_s: float | None = None
    """The CPU time the test's run used (stdin/stdout tests in a named language)."""
    of_program: bool = False
    """The reason is about the program as a whole, read before any test's data reached it (it
    does not compile, lacks its entry point, raised while loading, was too long to read, was
    not run): it tells nothing of a hidden test, so every ``feedback`` but ``none`` shows it."""


class _NotPlainArgument(BaseException):
    """The check passed something that is not plain data: the test cannot run here."""


class _CallFailed(BaseException):
    """A call ended without an answer (a BaseException, so a check's ``except Exception`` cannot
    swallow it and pass anyway)."""


class CandidateError(RuntimeError):
    """Raised into a check when the program raised an exception that is not a builtin one."""


_PER_PROMPT = 1024
"""Entries of each per-prompt cache: an eval set of up to 512 problems (MBPP's 500), with each
problem's check and helpers (two entries in ``_compiled``), fits, so a second pass over the set,
or a GRPO group, never compiles again; a set cycled through a smaller cache misses every time."""

_SIMPLE = (ast.Assert, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Pass)
_DECLARATIONS = (ast.Import, ast.ImportFrom)


def _calls_ahead(check: str, entry_point: str) -> tuple[tuple[list[Any], dict[str, Any]], ...]:
    """The calls a check certainly makes first, in order: the candidate called with literal
    arguments in its body's leading simple statements (``assert candidate(1) == 2``), up to
    the first loop, branch, ``with``, ``try``, definition, or use of the candidate that is not
    such a call. A guess that turns out wrong costs only speed (``Calls.send_ahead``)."""
    return _ahead(check, entry_point)[0]


@functools.lru_cache(maxsize=_PER_PROMPT)
def _ahead(
    check: str, entry_point: str
) -> tuple[tuple[tuple[list[Any], dict[str, Any]], ...], tuple[Any, ...]]:
    """``_calls_ahead``, and the answer the check wants of each call where an assert says so
    with a literal (``assert candidate(1) == 2``; ``UNKNOWN`` elsewhere): the request's secret
    order then moves an answer the check expects, so a right program's answers show whether
    they depend on their order without a replay."""
    try:
        tree = ast.parse(check)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return (), ()
    function = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None
    )
    if function is None or not function.args.args:
        return (), ()
    names = {function.args.args[0].arg, entry_point}
    found: list[tuple[list[Any], dict[str, Any]]] = []
    wanted: list[Any] = []
    for statement in function.body:
        if isinstance(statement, _DECLARATIONS):
            continue
        if not isinstance(statement, _SIMPLE):
            break
        part = statement.test if isinstance(statement, ast.Assert) else statement
        calls = _literal_calls(part, names)
        if calls is None:
            break
        found += calls
        said = _said_answer(part) if isinstance(statement, ast.Assert) else UNKNOWN
        wanted += [said] if len(calls) == 1 else [UNKNOWN] * len(calls)
    return tuple(found), tuple(wanted)


def _said_answer(test: ast.AST) -> Any:
    """The literal an assert compares a call with (``candidate(...) == 2``, either side), or
    ``UNKNOWN``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return UNKNOWN
    if not isinstance(test.ops[0], ast.Eq):
        return UNKNOWN
    sides = [test.left, test.comparators[0]]
    literal = [side for side in sides if not isinstance(side, ast.Call)]
    if len(literal) != 1:
        return UNKNOWN
    try:
        return _constant(literal[0])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN


def _literal_calls(node: ast.AST, names: set[str]) -> list[tuple[list[Any], dict[str, Any]]] | None:
    """Calls of ``names`` with literal arguments in ``node``, in evaluation order; None when
    the candidate is used any other way there."""
    found: list[tuple[list[Any], dict[str, Any]]] = []

    def visit(item: ast.AST) -> bool:
        if isinstance(item, ast.Name) and item.id in names:
            return False  # the candidate passed around, or called with what it returned
        if isinstance(item, ast.Call) and isinstance(item.func, ast.Name) and item.func.id in names:
            try:
                args = [_constant(a) for a in item.args]
                kwargs = {k.arg: _constant(k.value) for k in item.keywords}
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return False
            if any(isinstance(a, ast.Starred) for a in item.args) or None in kwargs:
                return False
            found.append((args, kwargs))  # type: ignore[arg-type]
            return True
        return all(visit(child) for child in ast.iter_child_nodes(item))

    return found if visit(node) else None


_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_FOLD_BOUND = 1 << 64
_FOLD_TEXT = 1 << 16  # the longest text folded from two (characters)


def _constant(node: ast.AST) -> Any:
    """A literal argument, or arithmetic on numbers a check writes as literals (``3 * 5 * 7``,
    which Python folds into a constant itself): the value Python gives it. Only numbers of
    bounded size are folded (no power, nothing large), and only in the dataset's check, never
    in anything a response wrote.

    Raises:
        ValueError: anything else (the call is then not sent ahead).
    """
    try:
        return ast.literal_eval(node)  # literals, and what it reads itself (``1 + 2j``)
    except ValueError:
        pass
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):  # ``[1, 0**0]``
        items = [_constant(item) for item in node.elts]
        kind = {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)]
        return kind(items)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _constant(node.left), _constant(node.right)
        if type(left) is str and type(right) is str and isinstance(node.op, ast.Add):
            if len(left) + len(right) > _FOLD_TEXT:
                raise ValueError("a long text")
            return left + right
        numbers = (int, float)
        if not all(type(v) in numbers and abs(v) < _FOLD_BOUND for v in (left, right)):
            raise ValueError("not arithmetic on small numbers")
        if isinstance(node.op, ast.Pow) and not (type(right) is int and 0 <= right <= 64):
            raise ValueError("a power that may be large")
        try:
            return _ARITHMETIC[type(node.op)](left, right)
        except ArithmeticError:
            raise ValueError("arithmetic that raises") from None
    raise ValueError("not a constant")


def _failed_call(name: str, result: CallResult) -> TestOutcome:
    """The outcome of a test whose call did not answer with a value."""
    flag, reason = _failure(result)
    of_program = result.during_load or flag == CodeFlag.MISSING_ENTRY
    return TestOutcome(name, False, flag, reason, of_program=of_program)


def _failure(result: CallResult) -> tuple[str, str]:
    """(flag, reason) for a call that did not answer with a value."""
    if result.status == "raised":
        if result.exception in _BASE_ONLY:
            return CodeFlag.EARLY_EXIT, result.error
        return CodeFlag.EXCEPTION, result.error
    return _STATUS_FLAGS.get(result.status, CodeFlag.BAD_RESULT), result.error


class _Candidate:
    """What the dataset's check calls: each call goes into the sandbox; the plain answer, or
    the program's exception, comes back. An answer that is not plain data comes back as an
    ``Opaque`` holding only its truth (MBPP's regex tasks return a ``re.Match`` that their
    asserts only test for truth); ``opaque`` keeps them, so a check that then fails says why."""

    def __init__(self, calls: Calls) -> None:
        self._calls = calls
        self.opaque: list[Opaque] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            result = self._calls.call(args, kwargs)
        except PlainDataError as exc:
            if not self.opaque or not _holds_opaque((args, kwargs)):
                raise _NotPlainArgument(str(exc)) from None
            # the program's own opaque answer, passed back to it: the program's doing
            self._calls.unsendable = None
            result = CallResult(
                "bad_value", error="the check passed back an answer that is not plain data"
            )
        if result.ok:
            return result.value
        if result.opaque is not None:
            self.opaque.append(result.opaque)
            return result.opaque
        if result.status == "raised" and result.exception not in _BASE_ONLY:
            error = _rebuild_exception(result)
            self._calls.raised.append(error)
            raise error
        self._calls.failures.append(result)
        raise _CallFailed(result.error)


def _holds_opaque(value: Any, depth: int = 0) -> bool:
    """Whether an opaque answer is in ``value`` (arguments a check passes on)."""
    if isinstance(value, Opaque):
        return True
    if depth > MAX_DEPTH:
        return False
    items: Any = ()
    if type(value) in (list, tuple, set, frozenset):
        items = value
    elif type(value) is dict:
        items = [*value.keys(), *value.values()]
    return any(_holds_opaque(item, depth + 1) for item in items)


def _rebuild_exception(result: CallResult) -> Exception:
    """The program's exception as the check can catch it: the builtin class of that name when
    it is one (``ValueError``...), else ``CandidateError``. Only the name and message cross.

    The record says whether the class was the builtin, and the program may have written it: a
    false claim gets it nothing it could not have by raising the builtin itself, save for the
    classes iteration takes for control flow (``_CONTROL_FLOW``), which never cross as such."""
    name = result.exception or ""
    message = result.error.partition(": ")[2] or result.error
    rebuilt = result.builtin_exception and name not in _CONTROL_FLOW
    cls = getattr(builtins, name, None) if rebuilt else None
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except Exception:  # noqa: S110 - an exception class with a special constructor
            pass
    return CandidateError(f"{name}: {message}")


def _check_line(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<check>"]
    if not frames:
        return ""
    frame = frames[-1]
    return f" at check line {frame.lineno}" + (f": {frame.line.strip()}" if frame.line else "")


@functools.lru_cache(maxsize=_PER_PROMPT)
def _code_of(text: str | None) -> str | None:
    """``text`` if it is Python source (a HumanEval prompt), else None.

    Cached, like the other per-prompt work here: in RL many responses share one prompt.
    """
    if not text or not text.strip():
        return None
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return text


@functools.lru_cache(maxsize=_PER_PROMPT)
def _compiled(source: str, filename: str) -> Any:
    """The dataset's check or helpers, compiled once (a code object runs in any namespace)."""
    return compile(source, filename, "exec")


@functools.lru_cache(maxsize=_PER_PROMPT)
def _visible_in_prompt(prompt: str, entry_point: str) -> tuple[Any, ...]:
    return tuple(visible_inputs(prompt, entry_point))


def _run_check(spec: TestSpec, calls: Calls, helpers: str | None) -> TestOutcome:
    """The check, run once on answers the session gave in a secret order for the calls known
    ahead; where that leaves an order to learn (calls made as the check ran), run again on a
    replay's answers, in a fresh session and another secret order."""
    outcome = _check_once(spec, calls, helpers, ahead=True)
    if not outcome.passed:
        return outcome
    for _ in range(calls.rounds()):
        answers, ended = calls.replay()
        again = _check_once(spec, calls.again(answers), helpers, ahead=False)
        if not again.passed:
            return _unproven("check", again, ended)
    return outcome


def _unproven(name: str, again: TestOutcome, ended: CallResult | None) -> TestOutcome:
    """A test that passed and then failed on the answers of a replay in a fresh process and
    another order: the answers depend on state (``order_dependent``), unless the replay itself
    could not finish (its own failure, said as such)."""
    if again.flag in (CodeFlag.WRONG_ANSWER, CodeFlag.NOT_PLAIN_DATA) and ended is None:
        return TestOutcome(
            name,
            False,
            CodeFlag.ORDER_DEPENDENT,
            "answered differently when replayed in a fresh process in another order "
            f"(the answers depend on state): {again.reason}",
        )
    return TestOutcome(name, False, again.flag, f"in the replay in a fresh process: {again.reason}")


def _check_once(spec: TestSpec, calls: Calls, helpers: str | None, *, ahead: bool) -> TestOutcome:
    assert spec.check is not None
    assert spec.entry_point is not None
    namespace: dict[str, Any] = {"__name__": "__truegrade_check__"}
    try:
        if helpers:
            # the dataset's prompt or helpers, never the response
            exec(_compiled(helpers, "<prompt>"), namespace)  # noqa: S102 - trusted input
        exec(_compiled(spec.check, "<check>"), namespace)  # noqa: S102 - the dataset's test
    except Exception as exc:
        raise SpecProblem(f"the check code does not run: {type(exc).__name__}: {exc}") from None
    check = namespace.get("check")
    if not callable(check):
        raise SpecProblem("the check code defines no function named 'check'")
    candidate = _Candidate(calls)
    namespace[spec.entry_point] = candidate
    if ahead:
        known, wanted = _ahead(spec.check, spec.entry_point)
        calls.send_ahead(list(known), expected=list(wanted))
    outcome: TestOutcome
    try:
        check(candidate)
        outcome = TestOutcome("check", True)
    except _NotPlainArgument as exc:
        raise SpecProblem(f"the check passes the candidate an argument that is {exc}") from None
    except _CallFailed:
        outcome = _failed_call("check", calls.failures[-1])
    except AssertionError as exc:
        said = _message(exc)
        detail = f": {said}" if said else ""
        outcome = TestOutcome(
            "check", False, CodeFlag.WRONG_ANSWER, f"assertion failed{_check_line(exc)}{detail}"
        )
    except Exception as exc:
        from_program = any(exc is raised for raised in calls.raised)
        flag = CodeFlag.EXCEPTION if from_program else CodeFlag.WRONG_ANSWER
        outcome = TestOutcome(
            "check", False, flag, f"{type(exc).__name__}: {_message(exc)}{_check_line(exc)}"
        )
    finally:
        calls.stop_ahead()
    # what the check may have swallowed with a bare ``except:`` still counts
    if calls.broken is not None:
        raise SandboxBroke(calls.broken)
    if calls.unsendable is not None:
        raise SpecProblem(f"the check passes the candidate an argument that is {calls.unsendable}")
    if outcome.passed and calls.failures:
        outcome = _failed_call("check", calls.failures[0])
    if outcome.passed and calls.count == 0:
        raise SpecProblem("the check never called the candidate")
    if outcome.flag == CodeFlag.WRONG_ANSWER and candidate.opaque:
        outcome = TestOutcome(
            "check",
            False,
            CodeFlag.NOT_PLAIN_DATA,
            f"{outcome.reason}; the check received {candidate.opaque[0]!r}, not plain data "
            "(only its truth left the sandbox)",
        )
    return outcome


def _run_cases(
    spec: TestSpec,
    calls: Calls,
    abs_tol: float,
    rel_tol: float,
    *,
    stop_at_failure: bool = False,
) -> list[TestOutcome]:
    """Every case, sent in one request in a secret order that moves an expected answer; the
    cases that pass are replayed only where ``replay_odds`` asks for more rounds, or where a
    case had to be called on its own (the request's session ended early).

    ``stop_at_failure`` (``score: all``): the cases after the first that fails are not run, as
    EvalPlus stops (its default) and judges do; the score only counts a program that passes
    every case, so the rest cannot change it, and a program that runs out of time on every
    input costs one time limit, not all of them."""
    abs_tol = abs_tol if spec.abs_tol is None else spec.abs_tol
    rel_tol = rel_tol if spec.rel_tol is None else spec.rel_tol
    outcomes: list[TestOutcome] = []
    cases = spec.cases
    calls.send_ahead(
        [(case.args, case.kwargs) for case in cases],
        tags=list(range(len(cases))),
        expected=[case.expected for case in cases],
    )
    try:
        _call_cases(spec, calls, abs_tol, rel_tol, outcomes, stop_at_failure)
    finally:
        calls.stop_ahead()
    passing = {i for i, o in enumerate(outcomes) if o.passed}
    # in the tests' order (cases judged as they came are logged as they came)
    calls.log = sorted((entry for entry in calls.log if entry.tag in passing), key=_tag)
    for _ in range(calls.rounds()):
        answers, ended = calls.replay()
        again = calls.again(answers)
        for index in sorted(passing):
            judged: list[TestOutcome] = []
            _call_one(spec, cases[index], index, again, abs_tol, rel_tol, judged)
            if not judged[0].passed:
                outcomes[index] = _unproven(outcomes[index].name, judged[0], ended)
                passing.discard(index)
        if len(passing) < len({entry.tag for entry in calls.log}):
            break
    return outcomes


def _call_cases(
    spec: TestSpec,
    calls: Calls,
    abs_tol: float,
    rel_tol: float,
    outcomes: list[TestOutcome],
    stop_at_failure: bool,
) -> None:
    """Judge every case (appended to ``outcomes`` in the spec's order). Stopping at the first
    failure, the cases are judged in the order the session answers them (the request's secret
    order), so no case waits on the cases the tests list before it."""
    count = len(spec.cases)
    order = calls.order if stop_at_failure and len(calls.order) == count else range(count)
    judged: dict[int, TestOutcome] = {}
    stop: TestOutcome | None = None  # what every case left stands for
    for index in order:
        if stop is not None:
            judged[index] = replace(stop, name=f"case_{index}")
            continue
        one: list[TestOutcome] = []
        _call_one(spec, spec.cases[index], index, calls, abs_tol, rel_tol, one)
        judged[index] = one[0]
        if one[0].of_program:
            stop = one[0]  # every other case would fail the same way
        elif stop_at_failure and not one[0].passed:
            stop = TestOutcome("", False, reason=_NOT_RUN, of_program=True)
    outcomes.extend(judged[index] for index in range(count))


def _tag(entry: Logged) -> int:
    return entry.tag


_NOT_RUN = "not run: an earlier case failed (score: all stops at the first failure)"


def _call_one(
    spec: TestSpec,
    case: Case,
    index: int,
    calls: Calls,
    abs_tol: float,
    rel_tol: float,
    outcomes: list[TestOutcome],
) -> None:
    """Call one case and judge its answer (appended to ``outcomes``)."""
    name = f"case_{index}"
    try:
        result = calls.call(case.args, case.kwargs, tag=index)
    except PlainDataError as exc:
        raise SpecProblem(f"case {index} has arguments that are {exc}") from None
    if not result.ok:
        outcomes.append(_failed_call(name, result))
    elif _case_passes(spec, case, result.value, abs_tol, rel_tol):
        outcomes.append(TestOutcome(name, True))
    else:
        reason = _wrong_answer(spec.compare, case.expected, result.value)
        outcomes.append(TestOutcome(name, False, CodeFlag.WRONG_ANSWER, reason))


def _case_passes(spec: TestSpec, case: Case, answer: Any, abs_tol: float, rel_tol: float) -> bool:
    """Whether ``answer`` meets the case's expected value (or another answer it accepts), by the
    spec's ``compare``; ``not_none`` answers arrive already read as booleans (``_not_none_module``).
    Values a reference program computed, or a typed spec states, carry their exact types: a
    list is not a tuple there."""
    typed = bool(spec.expected_from) or spec.typed
    for expected in (case.expected, *case.also):
        if spec.compare == "evalplus":
            if evalplus_match(answer, expected, case.tolerance or 0.0):
                return True
        elif spec.compare == "set":
            items = _as_set(answer)
            if items is not None and items == _as_set(expected):
                return True
        elif values_match(answer, expected, abs_tol, rel_tol, tuples_as_lists=not typed):
            return True
    return False


def _wrong_answer(compare: str | None, expected: Any, answer: Any) -> str:
    if compare == "set":
        return f"expected the items of {_short(expected)} in any order, got {_short(answer)}"
    if compare == "not_none":
        said = {True: "an answer that is not None", False: "None (or False)"}
        return f"expected {said[bool(expected)]}, got {said[bool(answer)]}"
    return f"expected {_short(expected)}, got {_short(answer)}"


def _run_stdio(
    spec: TestSpec, program: Program, deadline: float | None, settings: StdioSettings
) -> list[TestOutcome]:
    """A Python stdin/stdout program, run in the sandbox's own interpreter on each test: the
    test's CPU-time limit and its wall-clock backstop, as for every language
    (``run_stdio_program``); ``deadline`` is the user's budget, when there is one."""
    outcomes = []
    limit = settings.time_limit_s
    for index, test in enumerate(spec.stdio):
        name = f"stdio_{index}"
        wall = settings.wall_s
        if deadline is not None:
            left = deadline - time.monotonic()
            if left < 0.01:
                reason = "not run: the response's time budget (program_timeout_s) ran out"
                outcomes.append(
                    TestOutcome(name, False, CodeFlag.BUDGET_EXHAUSTED, reason, of_program=True)
                )
                continue
            wall = min(wall, left)
        run: RunResult = program.run(
            test.stdin, timeout_s=wall, cpu_s=limit, output_bytes=settings.output_bytes
        )
        if run.status == "sandbox_error":
            raise SandboxBroke(run.error)
        if run.status == "timeout" and run.cpu_s < limit:
            cut = wall < settings.wall_s
            flag = CodeFlag.BUDGET_EXHAUSTED if cut else CodeFlag.IDLE_LIMIT
            why = "the response's time budget ran out" if cut else "the wall-clock backstop"
            reason = f"stopped by {why} after {wall:.2f} s, with {run.cpu_s:.2f} s of CPU used"
            outcomes.append(TestOutcome(name, False, flag, reason))
        elif run.status == "cpu_limit" or run.cpu_s > limit:
            reason = f"used {run.cpu_s:.2f} s of CPU time, over its {limit:g} s limit"
            outcomes.append(TestOutcome(name, False, CodeFlag.TIMEOUT, reason))
        elif run.status != "exited":
            flag = _STATUS_FLAGS.get(run.status, CodeFlag.PROGRAM_CRASHED)
            outcomes.append(TestOutcome(name, False, flag, run.error))
        elif run.exit_code != 0:
            tail = run.stderr.strip().splitlines()[-1:] if run.stderr.strip() else []
            reason = f"exited with status {run.exit_code}" + (f": {tail[0][:200]}" if tail else "")
            memory = bool(tail) and tail[0].startswith("MemoryError")
            flag = CodeFlag.MEMORY if memory else CodeFlag.EXIT_STATUS
            outcomes.append(TestOutcome(name, False, flag, reason))
        else:
            why = judged_text(test, run.stdout, settings)
            if why:
                outcomes.append(TestOutcome(name, False, CodeFlag.WRONG_ANSWER, why))
            else:
                outcomes.append(TestOutcome(name, True))
    return outcomes


_LEETCODE_PRELUDE = (
    "from typing import *\n"
    "from collections import *\n"
    "from heapq import *\n"
    "from bisect import *\n"
    "from itertools import *\n"
    "from functools import *\n"
    "from math import *\n"
    "from builtins import *\n"  # math's star import shadows pow(); builtins come back on top
    "import bisect, collections, functools, heapq, itertools, math, re, string\n"
)


def _leetcode_module(source: str, cls: str, method: str) -> str:
    """A LeetCode-style program as a module the sandbox can call: the names LeetCode's Python
    has without an import (``List``, ``deque``, ``heappush``...) in front, as LeetCode and
    LiveCodeBench's own harness provide them (without them a correct solution annotated
    ``List[int]`` fails on a ``NameError``), and behind it a function of the method's name that
    calls the method on a new instance each time (no state carries over between calls)."""
    shim = f"\n\ndef {method}(*args, **kwargs):\n    return {cls}().{method}(*args, **kwargs)\n"
    future = re.findall(r"^from __future__ import [^\n]*$", source, flags=re.M)
    body = re.sub(r"^from __future__ import [^\n]*$", "", source, flags=re.M)
    return "".join(f"{line}\n" for line in future) + _LEETCODE_PRELUDE + body + shim


_NOT_NONE_VIEW = """

def __truegrade_not_none(inner):
    depth = [0]

    def answer(*args, **kwargs):
        depth[0] += 1
        try:
            value = inner(*args, **kwargs)
        finally:
            depth[0] -= 1
        if depth[0] or value is True or value is False:
            return value
        return value is not None

    return answer


if callable(globals().get({name!r})):
    {name} = __truegrade_not_none({name})
"""


def _not_none_module(source: str, entry_point: str) -> str:
    """The program with its entry point answering only whether its result is None (``compare:
    not_none``): a ``re.Match`` is not plain data and cannot leave the sandbox, but whether
    there is one can. A ``bool`` answer stays itself; a call the program makes to its own entry
    point (recursion) still gets the real result. Appended behind the program, so it reads the
    entry point the program defines; a program without one still fails as missing it."""
    return source + _NOT_NONE_VIEW.replace("{name!r}", repr(entry_point)).replace(
        "{name}", entry_point
    )


def _callable_source(source: str, spec: TestSpec) -> str:
    """A program (the response's or a reference) as the sandbox loads it for ``spec``."""
    if spec.entry_point is None:
        return source
    if spec.method_of is not None:
        source = _leetcode_module(source, spec.method_of, spec.entry_point)
    if spec.compare == "not_none":
        source = _not_none_module(source, spec.entry_point)
    return source


_ANSWERS: OrderedDict[str, _Reference] = OrderedDict()
"""Reference programs' answers, by a hash of program, entry point and inputs (at most
``_PER_PROMPT`` entries, the least recently used dropped first). Only complete answer lists are
kept: a reference that failed, maybe on a loaded machine's deadline, is run again next time."""


def _answers_key(
    source: str, entry_point: str, calls: list[tuple[list[Any], dict[str, Any]]]
) -> str:
    try:
        inputs = [[encode_value(list(args)), encode_value(kwargs)] for args, kwargs in calls]
    except PlainDataError as exc:
        raise SpecProblem(f"a case has arguments that are {exc}") from None
    text = json.dumps([source, entry_point, inputs], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _error(message: str, *flags: str) -> dict[str, Any]:
    return {"score": 0.0, "passed": None, "error": message, "flags": list(flags)}


CALL_BUDGET_S = 30.0
"""The time budget of a response's function tests when the user sets none."""

RESPONSE_BYTES = 256 << 10
"""The longest response the grader reads, in UTF-8 bytes, when the user sets no other: a
response of 64K tokens of about four bytes each, its reasoning included, fits, where programs
are rarely past 20 KB. Past it, the response fails unread (``response_too_long``)."""


def _too_long(response: str, cap: int) -> str:
    """Why ``response`` is past ``cap`` UTF-8 bytes, or "" (linear, and no copy for the usual
    response, whose characters cannot come to more than the cap)."""
    if len(response) * 4 <= cap:
        return ""
    size = len(response) if response.isascii() else len(response.encode("utf-8", "surrogatepass"))
    if size <= cap:
        return ""
    return f"the response is {size:,} bytes, past the {cap:,} the grader reads (response_bytes)"


@dataclass(frozen=True)
class CodeKernel:
    """The per-sample work of the ``code`` grader (picklable; runs in engine workers)."""

    sandbox: SandboxConfig
    call_timeout_s: float
    program_timeout_s: float | None
    fresh_process_per_call: bool = False
    replay_odds: int = 0
    fresh_sandbox: bool = False
    prompt_prefix: str = "auto"
    stdio_compare: str = "lines"
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    language: str | None = None
    memory_mb: int = 1024
    stack_mb: int = 256
    compile_timeout_s: float = 60.0
    compile_memory_mb: int = 2048
    score: str = "fraction"
    row_limits: bool = True
    wall_factor: float = WALL_FACTOR
    stdout_bytes: int = OUTPUT_BYTES
    verdict_names: str = "truegrade"
    response_bytes: int = RESPONSE_BYTES
    feedback: str = "visible"

    @property
    def call_budget_s(self) -> float:
        """The time budget of a response's function tests (``program_timeout_s``, else 30 s)."""
        return self.program_timeout_s or CALL_BUDGET_S

    def stdio_settings(self, spec: TestSpec) -> StdioSettings:
        """The limits and comparison of a stdin/stdout spec's tests: the row's own limits
        (``row_limits``), else the grader's."""
        use_row = self.row_limits
        out_mb = use_row and spec.output_mb
        return StdioSettings(
            time_limit_s=(use_row and spec.time_limit_s) or self.call_timeout_s,
            memory_mb=(use_row and spec.memory_mb) or self.memory_mb,
            stack_mb=spec.stack_mb if use_row and spec.stack_mb is not None else self.stack_mb,
            compile_timeout_s=self.compile_timeout_s,
            compile_memory_mb=self.compile_memory_mb,
            compare=spec.compare or self.stdio_compare,
            abs_tol=self.abs_tol,
            rel_tol=self.rel_tol,
            validator_flags=spec.validator_flags,
            wall_factor=self.wall_factor,
            output_bytes=out_mb << 20 if out_mb else self.stdout_bytes,
            verdict_names=self.verdict_names,
        )

    def bound_s(self, payload: dict[str, Any]) -> float:
        """The longest grading ``payload`` can take (the engine's hard deadline is set above
        it): for calls, the wall-clock backstop of their CPU-time budget, and of each reference
        program's own; for stdin/stdout tests, the budget when the user set one, else the
        tests' limits added up. The engine's deadline is only the backstop of a harness that
        stopped answering: no verdict may come from it, however loaded the machine."""
        try:
            spec = parse_spec(payload["tests"])
        except SpecProblem:
            return 0.0
        if spec.kind != "stdio":
            references = len(spec.expected_from) * wall_backstop_s(REFERENCE_BUDGET_S)
            return wall_backstop_s(self.call_budget_s) + references
        if self.program_timeout_s is not None:
            return self.call_budget_s + self.compile_timeout_s
        settings = self.stdio_settings(spec)
        return stdio_bound_s(len(spec.stdio), settings, spec.checker is not None)

    def setup(self) -> None:
        """Start this worker's sandbox before the first sample (a failure is reported per
        sample, with its reason)."""
        if not self.fresh_sandbox:
            with contextlib.suppress(SandboxError):
                sandbox_for(self.sandbox)
        if self.language == "cpp":
            ensure_pch(self.sandbox)  # made once per machine, before any response's budget

    def __call__(self, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            spec = parse_spec(payload["tests"])
        except SpecProblem as exc:
            return _error(f"bad test spec: {exc}", CodeFlag.BAD_REFERENCE)
        response = payload["response"]
        too_long = _too_long(response, self.response_bytes)
        if too_long:  # before anything reads it: no response makes the grader's parse run long
            return self._refused(spec, too_long)
        language = spec.language or payload.get("language") or self.language
        if spec.kind == "stdio" and language is not None:
            return self._stdio_in(language, response, spec)
        prompt = _code_of(payload.get("prompt"))
        program = build_program(response, prompt, spec.entry_point, self.prompt_prefix)
        if program.too_costly:  # nor may its compile in the sandbox's zygote
            return self._refused(spec, f"the program was not parsed: {program.too_costly}")
        visible = self._visible(spec, prompt)
        tells = find_tells(program.tree, visible)
        source = _callable_source(program.source, spec)
        for attempt in (1, 2):
            try:
                box = self._program_box()
            except SandboxError as exc:
                return _error(str(exc), CodeFlag.SANDBOX_UNAVAILABLE)
            try:
                outcomes = self._run(box, spec, source, spec.helpers or prompt)
            except SpecProblem as exc:
                return _error(f"bad test spec: {exc}", CodeFlag.BAD_REFERENCE)
            except (SandboxBroke, SandboxError) as exc:
                box.close()  # a fresh one for the next try, and for the next sample
                if attempt == 2:
                    return _error(f"the sandbox failed twice: {exc}", CodeFlag.SANDBOX_ERROR)
                continue  # once more, in a fresh sandbox: a sample's verdict is not its fault
            finally:
                ran_in = _isolation(box)  # read before a fresh sandbox is closed, which forgets it
                if self.fresh_sandbox:
                    box.close()
            break
        return self._verdict(spec, outcomes, tells, ran_in)

    def _verdict(
        self,
        spec: TestSpec,
        outcomes: list[TestOutcome],
        tells: list[Any],
        ran_in: tuple[bool, str | None],
    ) -> dict[str, Any]:
        sandboxed, mode = ran_in
        shown = _visible_tests(spec) if self.feedback != "none" else {}
        return _verdict(
            outcomes,
            tells,
            sandboxed,
            mode,
            score=self.score,
            feedback=self.feedback,
            shown=shown,
        )

    def _refused(self, spec: TestSpec, reason: str) -> dict[str, Any]:
        """Every test failed unrun, ``response_too_long``: a fail, never an error (a trainer
        skips errors, so a response must not be able to choose one)."""
        outcomes = [
            TestOutcome(name, False, CodeFlag.RESPONSE_TOO_LONG, reason, of_program=True)
            for name in spec.test_names
        ]
        return self._verdict(spec, outcomes, [], (True, None))

    def _program_box(self) -> Sandbox:
        """This worker's program sandbox; a new one when every response gets its own."""
        if self.fresh_sandbox:
            old = _SANDBOXES.pop((self.sandbox, "program"), None)
            if old is not None:
                old.close()
        return sandbox_for(self.sandbox)

    def _stdio_in(self, name: str, response: str, spec: TestSpec) -> dict[str, Any]:
        """A stdin/stdout program in a named language: build it, run each test, judge each."""
        language = language_named(name)
        if language is None:
            known = ", ".join(LANGUAGES)
            return _error(
                f"bad test spec: unknown language {name!r}; known: {known}", CodeFlag.BAD_REFERENCE
            )
        settings = self.stdio_settings(spec)
        try:
            box = self._program_box()
        except SandboxError as exc:
            return _error(str(exc), CodeFlag.SANDBOX_UNAVAILABLE)
        if language.name == "cpp":  # the first C++ response of a machine waits for it, once,
            ensure_pch(self.sandbox)  # and not out of its own time budget
        deadline = self._stdio_deadline()
        try:
            verdicts = run_stdio_program(
                box,
                lambda: sandbox_for(self.sandbox, "checker"),
                language,
                source_of(response, language),
                spec.stdio,
                settings,
                deadline,
                spec.checker,
                stop_at_failure=self.score == "all",
            )
        except CheckerFailed as exc:  # what the judge said may quote an expected output
            why = str(exc) if self.feedback == "full" else exc.message
            return _error(f"bad test spec: {why}", CodeFlag.BAD_REFERENCE, CodeFlag.CHECKER_ERROR)
        except SandboxError as exc:
            box.close()
            return _error(f"the sandbox failed: {exc}", CodeFlag.SANDBOX_ERROR)
        finally:
            ran_in = _isolation(box)
            if self.fresh_sandbox:
                box.close()
        names = self.verdict_names
        outcomes = [
            TestOutcome(
                v.name,
                v.passed,
                v.flag,
                v.reason,
                verdict_name(v.verdict, names),
                v.cpu_s,
                of_program=v.verdict in _OF_PROGRAM or v.reason.startswith("not run"),
            )
            for v in verdicts
        ]
        return self._verdict(spec, outcomes, [], ran_in)

    def _stdio_deadline(self) -> float | None:
        """The end of a stdin/stdout response's budget: only when the user set one (else each
        test runs to its own limits)."""
        if self.program_timeout_s is None:
            return None
        return time.monotonic() + self.program_timeout_s

    def _visible(self, spec: TestSpec, prompt: str | None) -> list[Any]:
        visible: list[Any] = []
        if spec.kind == "cases":
            for case in spec.cases:
                if case.visible:
                    visible.extend(case.args)
                    if len(case.args) > 1:
                        visible.append(tuple(case.args))
        elif spec.kind == "stdio":
            visible = [t.stdin.strip() for t in spec.stdio if t.visible]
        if prompt and spec.entry_point:
            visible.extend(_visible_in_prompt(prompt, spec.entry_point))
        return visible

    def _run(
        self, box: Sandbox, spec: TestSpec, source: str, helpers: str | None
    ) -> list[TestOutcome]:
        reference: _Reference | None = None
        if spec.expected_from:
            spec, reference = self._with_expected(box, spec)
        program = box.load(source, entry_point=spec.entry_point, session_cpu_s=self.call_budget_s)
        with program:
            if program.error is not None:
                reason = f"does not compile: {program.error}"
                return [
                    TestOutcome(n, False, CodeFlag.SYNTAX_ERROR, reason, of_program=True)
                    for n in spec.test_names
                ]
            if spec.kind == "stdio":
                return _run_stdio(spec, program, self._stdio_deadline(), self.stdio_settings(spec))
            calls = Calls(
                program,
                Budget(self.call_budget_s),
                self.call_timeout_s,
                self.fresh_process_per_call,
                replay_odds=self.replay_odds,
            )
            if reference is not None:
                # an answer as large as the reference's must fit; each case's CPU time where
                # the spec measures it against the reference's (``time_limit_factor``)
                calls.cap = 2 * reference.largest + 4096
                calls.limits = reference.limits(spec, self.call_timeout_s)
            if spec.kind == "check":
                return [_run_check(spec, calls, helpers)]
            return _run_cases(
                spec, calls, self.abs_tol, self.rel_tol, stop_at_failure=self.score == "all"
            )

    def _with_expected(self, box: Sandbox, spec: TestSpec) -> tuple[TestSpec, _Reference]:
        """``spec`` with every case's expected value: the first reference program's answer, and
        the other references' answers as answers the case also accepts."""
        calls = [(case.args, case.kwargs) for case in spec.cases]
        found = [
            self._reference_answers(box, spec, _callable_source(source, spec), calls, which)
            for which, source in enumerate(spec.expected_from)
        ]
        answers = [known.answers for known in found]
        cases = [
            replace(case, expected=answers[0][i], also=(*case.also, *(a[i] for a in answers[1:])))
            for i, case in enumerate(spec.cases)
        ]
        if spec.compare == "evalplus":
            tolerances = evalplus_tolerances(answers[0], spec.abs_tol or 0.0, spec.groups)
            cases = [replace(c, tolerance=t) for c, t in zip(cases, tolerances, strict=True)]
        largest = max(known.largest for known in found)
        return replace(spec, cases=cases), replace(found[0], largest=largest)

    def _reference_answers(
        self,
        box: Sandbox,
        spec: TestSpec,
        source: str,
        calls: list[tuple[list[Any], dict[str, Any]]],
        which: int,
    ) -> _Reference:
        """One reference program's answers to every case (and the CPU time each took), from the
        cache or from the sandbox. The reference is dataset code, trusted to be what the
        dataset's author wrote; it still runs only there, in sessions of its own (nothing of it
        is in any process a response's session comes from), with limits of its own: CPU time,
        generous (``REFERENCE_CALL_S`` a case, ``REFERENCE_BUDGET_S`` in all), so neither a
        loaded machine nor a slow reference turns a dataset's row into an error."""
        assert spec.entry_point is not None
        key = _answers_key(source, spec.entry_point, calls)
        if key in _ANSWERS:
            _ANSWERS.move_to_end(key)
            return _ANSWERS[key]
        name = "the reference program" if which == 0 else f"reference program {which + 1}"
        program = box.load(source, entry_point=spec.entry_point, session_cpu_s=REFERENCE_BUDGET_S)
        with program:
            if program.error is not None:
                raise SpecProblem(f"{name} does not compile: {program.error}")
            results = program.call_many(
                calls,
                timeout_s=REFERENCE_CALL_S,
                budget_s=REFERENCE_BUDGET_S,
                cap=STREAM_BYTES_MAX,
            )
        if results and results[-1].status == "sandbox_error":
            raise SandboxBroke(results[-1].error)
        for index, result in enumerate(results):
            if not result.ok:
                raise SpecProblem(f"{name} gives no answer for case {index}: {result.error}")
            if spec.compare == "set" and _as_set(result.value) is None:
                value = result.value  # a hidden expected value: its type only, unless told all
                said = _short(value) if self.feedback == "full" else f"a {type(value).__name__}"
                raise SpecProblem(
                    f"{name} answers case {index} with {said}, which is not a collection to "
                    "compare as a set"
                )
        if len(results) < len(calls):
            raise SpecProblem(f"{name} stopped before answering case {len(results)}")
        sizes = [len(result.fingerprint) for result in results]
        known = _Reference(
            answers=[result.value for result in results],
            cpu_s=[result.cpu_s for result in results],
            largest=max(sizes, default=0),
            size=sum(sizes),
        )
        _ANSWERS[key] = known
        while len(_ANSWERS) > _PER_PROMPT or (
            len(_ANSWERS) > 1 and sum(k.size for k in _ANSWERS.values()) > _ANSWERS_BYTES
        ):
            _ANSWERS.popitem(last=False)
        return known


_ANSWERS_BYTES = 512 << 20
"""The most reference answers (as sent) kept per worker: HumanEval+'s whole set is about 300 MB
(HumanEval/15 and /130 most of it), so a second pass over it computes nothing again."""
REFERENCE_CALL_S = 60.0
"""The CPU time a dataset's reference program may take for one case."""
REFERENCE_BUDGET_S = 600.0
"""The CPU time a dataset's reference program may take for all of a row's cases."""


@dataclass(frozen=True)
class _Reference:
    """A reference program's answers to a row's cases, the CPU time each took, and the size of
    the largest (as the session sent it)."""

    answers: list[Any]
    cpu_s: list[float]
    largest: int
    size: int = 0
    """The answers' size as the session sent them (what the cache holds them to)."""

    def limits(self, spec: TestSpec, default_s: float) -> dict[int, float]:
        """Each case's CPU-time limit where the spec measures a response against the reference:
        ``time_limit_factor`` times the reference's own CPU time for the case, at least
        ``min_time_limit_s`` (as EvalPlus sets its limits, in CPU time where it uses the wall
        clock, so the verdict does not move with the machine's load); otherwise none of its
        own (the grader's ``call_timeout_s``, ``default_s``, holds)."""
        factor = spec.time_limit_factor
        if not factor:
            return {}
        floor = spec.min_time_limit_s or 0.0
        return {i: max(floor, factor * used) for i, used in enumerate(self.cpu_s)}


MAX_CPU = "most CPU time of a test:"
"""How a stdin/stdout grade's explanation gives the most CPU time one of its tests used (what
a judge reports as a submission's time; ``max_cpu_s`` reads it back)."""


_OF_PROGRAM = frozenset({"compile_error", "not_run"})
"""Per-test verdicts whose reason is about the program as a whole (``TestOutcome.of_program``)."""


def _told(outcome: TestOutcome, feedback: str, shown: dict[str, str]) -> str:
    """What the explanation says of a failing test (``_verdict``'s ``feedback``). A hidden
    test's reason may hold its expected value (a wrong answer's, a special judge's message,
    a check's assertion, which quotes the check's line) or its input (echoed in the program's
    own exception or stderr): only its name and kind of failure are told."""
    given = shown.get(outcome.name)
    if given is None and feedback != "full" and not outcome.of_program:
        kind = outcome.verdict or outcome.flag or "failed"
        return f"{outcome.name}: {kind} (a hidden test: feedback '{feedback}' tells no more)"
    text = f"{outcome.name}: {outcome.reason}"
    return text if given is None or outcome.of_program else f"{text} (input: {given})"


def _visible_tests(spec: TestSpec) -> dict[str, str]:
    """The tests the row marks ``visible``, by name, with the input each shows: the call for a
    call case, stdin for a stdin/stdout test. A check is never visible: its messages quote its
    own source, expected values included."""
    if spec.kind == "cases":
        call = f"{spec.method_of}().{spec.entry_point}" if spec.method_of else spec.entry_point
        return {
            f"case_{i}": f"{call}{_call_text(case.args, case.kwargs)}"
            for i, case in enumerate(spec.cases)
            if case.visible
        }
    if spec.kind == "stdio":
        return {
            f"stdio_{i}": f"stdin {_short(test.stdin, 80)}"
            for i, test in enumerate(spec.stdio)
            if test.visible
        }
    return {}


def _call_text(args: list[Any], kwargs: dict[str, Any], limit: int = 120) -> str:
    """``(1, [2], key='x')``, cut as ``_short`` cuts values."""
    words = [_short(arg, limit) for arg in args]
    words += [f"{key}={_short(value, limit)}" for key, value in kwargs.items()]
    text = ", ".join(words)
    return f"({text if len(text) <= limit else text[: limit - 3] + '...'})"


def _isolation(box: Sandbox) -> tuple[bool, str | None]:
    """Whether ``box`` isolates what it runs, and how (``bwrap``, ``native``, ``none``)."""
    return box.sandboxed, box.mode


def _verdict(
    outcomes: list[TestOutcome],
    tells: list[Any],
    sandboxed: bool,
    mode: str | None,
    *,
    score: str = "fraction",
    feedback: str = "full",
    shown: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The grade's fields. ``feedback`` says how much of the tests the explanation tells:
    ``full``, every failure's detail; ``visible``, the detail of a failing test only when
    ``shown`` names it (with the input it shows), else its name and kind of failure; ``none``,
    the counts alone. Flags and subscores (verdicts, never values) are the same in all."""
    shown = shown or {}
    passed = sum(o.passed for o in outcomes)
    total = len(outcomes)
    flags: list[str] = []
    for flag in [o.flag for o in outcomes if o.flag] + [t.flag for t in tells]:
        if flag not in flags:
            flags.append(flag)
    if not sandboxed:
        flags.append(CodeFlag.UNSANDBOXED)
    parts = [f"{passed}/{total} tests passed"]
    failed = [o for o in outcomes if not o.passed]
    counts: dict[str, float] = {}
    for outcome in outcomes:
        if outcome.verdict:
            counts[outcome.verdict] = counts.get(outcome.verdict, 0.0) + 1.0
    if counts and feedback != "none":
        parts.append(", ".join(f"{o.name} {o.verdict}" for o in outcomes[:20]))
    if failed and feedback != "none":  # the failure that decided, not a test left unrun
        ran = [o for o in failed if not o.reason.startswith("not run")]
        parts.append(_told((ran or failed)[0], feedback, shown))
    if tells and feedback != "none":
        parts.append("tells: " + "; ".join(str(t) for t in tells[:3]))
    used = [o.cpu_s for o in outcomes if o.cpu_s is not None]
    if used:  # what a judge reports as the submission's time (not a subscore: it varies)
        parts.append(f"{MAX_CPU} {max(used):.3f} s")
    if mode is not None or not sandboxed:  # None: nothing ran
        parts.append(f"sandbox: {mode}" if sandboxed else "UNSANDBOXED")
    fraction = passed / total if total else 0.0
    return {
        "score": fraction if score == "fraction" else float(passed == total and total > 0),
        "passed": passed == total and total > 0,
        "subscores": {**{o.name: 1.0 if o.passed else 0.0 for o in outcomes}, **counts},
        "flags": flags,
        "explanation": "; ".join(parts),
    }
