"""The three ways a row states its tests, parsed and checked before anything runs.

* HumanEval style: ``{"entry_point": "f", "check": "def check(candidate): ..."}``;
* call cases:
  ``{"entry_point": "f", "cases": [{"args": [...], "kwargs": {...}, "expected": ...}]}``, with
  ``"method_of": "Solution"`` when ``f`` is a method of that class (LeetCode style); or with
  the expected values left to a reference program, ``"expected_from": "<source defining f>"``
  (cases then give only their inputs, HumanEval+ and MBPP+ style), and per spec ``compare``
  (``equal``, ``set``, ``not_none``), ``abs_tol`` / ``rel_tol``, ``typed`` (the cases'
  values in the sandbox's plain-data encoding, so a tuple arrives as a tuple), and with a
  reference, ``time_limit_factor`` / ``min_time_limit_s`` (each case's CPU-time limit as a
  multiple of the reference's own);
* stdin/stdout: ``{"stdio": [{"stdin": "...", "stdout": "..."}]}``, optionally with
  ``language`` (``cpp``, ``c``, ``java``, ``javascript``, ``go``, ``rust``, ``python``),
  ``time_limit_s`` (CPU time), ``memory_mb``, ``output_mb`` and ``stack_mb`` per test,
  ``compare`` (with ``validator_flags`` for ``kattis``: ``"float_tolerance 1e-6"``; a test may
  carry its own, as a problem package's test group does) and a special judge
  ``checker`` (``{"language": "cpp", "source": "...", "files": {"testlib.h": "..."}}``, with
  ``"protocol": "kattis"`` for a Kattis output validator).

Rows of APPS / TACO (``input_output``), CodeContests (``public_tests``, ``private_tests``,
``generated_tests``) and LiveCodeBench (``public_test_cases``, ``private_test_cases``) are read
as they are (``_rows``).

A spec may arrive as a mapping or as a JSON string (datasets often store it so). Cases and stdio
tests may be marked ``"visible": true`` (shown to the model in the prompt); visible inputs feed
the hard-coding tell. The spec comes from the dataset: it is trusted to be what the dataset
author wrote, never taken from a response.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from truegrade.core import TruegradeError
from truegrade.graders.code._conventions import parse_kattis_flags
from truegrade.graders.code._languages import LANGUAGES, language_named
from truegrade.graders.code._rows import from_dataset_row
from truegrade.sandbox import PlainDataError, decode_value

__all__ = [
    "CASE_COMPARES",
    "STDOUT_COMPARES",
    "Case",
    "CheckerProgram",
    "SpecProblem",
    "StdioCase",
    "TestSpec",
    "parse_spec",
]

STDOUT_COMPARES = ("lines", "tokens", "tokens_ci", "exact", "kattis")
"""How a stdin/stdout test's output may be compared (``normalize_stdout`` says how each reads;
``kattis`` is the Kattis default validator with the spec's ``validator_flags``)."""

CASE_COMPARES = ("equal", "set", "not_none", "evalplus")
"""How a call case's answer meets its expected value: ``equal`` (strict equality, floats within
the tolerances), ``set`` (both are collections, compared as sets of their items: order and
repeats ignored), ``not_none`` (only whether there is an answer: a ``bool`` answer is read as
itself, any other as ``answer is not None``; for functions that return a ``re.Match`` or None)."""


class SpecProblem(TruegradeError, ValueError):
    """The row's test spec is unusable; the message says what is wrong."""


@dataclass(frozen=True)
class Case:
    """One call case: ``entry_point(*args, **kwargs) == expected`` (``expected`` is None until
    the harness computes it, when the spec names a reference program)."""

    args: list[Any]
    kwargs: dict[str, Any]
    expected: Any
    visible: bool = False
    also: tuple[Any, ...] = ()
    """Other answers the dataset accepts (APPS: the item of a one-item expected list)."""
    tolerance: float | None = None
    """``compare: evalplus``: the absolute tolerance EvalPlus applies to this case, known once
    the expected answers are (``truegrade.graders.code._evalplus``)."""


@dataclass(frozen=True)
class StdioCase:
    """One whole-program test: ``stdin`` in, ``stdout`` expected."""

    stdin: str
    stdout: str
    visible: bool = False
    validator_flags: str | None = None
    """This test's own validator flags (a problem package's test group may set them), in place
    of the spec's; None: the spec's."""


@dataclass(frozen=True)
class CheckerProgram:
    """A special judge: a program run as ``checker input output answer`` (testlib's order:
    the test's input, the program's output, the expected answer, as files); its exit status is
    the verdict (0 accepted, 1 or 2 wrong answer, anything else a failure of the checker)."""

    language: str
    source: str
    files: dict[str, str] = field(default_factory=dict)
    protocol: str = "testlib"
    """``testlib`` (above), or ``kattis``: run as ``validator input answer feedback_dir flags``
    with the program's output on stdin, exit status 42 accepted, 43 wrong answer."""


@dataclass(frozen=True)
class TestSpec:
    """A parsed spec; exactly one of ``check``, ``cases``, ``stdio`` is set."""

    kind: str
    entry_point: str | None = None
    check: str | None = None
    helpers: str | None = None
    cases: list[Case] = field(default_factory=list)
    stdio: list[StdioCase] = field(default_factory=list)
    language: str | None = None
    time_limit_s: float | None = None
    memory_mb: int | None = None
    compare: str | None = None
    checker: CheckerProgram | None = None
    validator_flags: str = ""
    """Stdio only: the Kattis default validator's flags (``compare: kattis``), or the flags a
    Kattis output validator is given."""
    output_mb: int | None = None
    """Stdio only: the cap of a test's output (None: the grader's)."""
    stack_mb: int | None = None
    """Stdio only: the main thread's stack (None: the grader's; 0: unlimited, the spec's
    ``"unlimited"``, as problemtools and BAPCtools run programs and as Kattis bounds the stack,
    by the memory limit only)."""
    method_of: str | None = None
    """Call cases only: the entry point is a method of this class (LeetCode style), called on a
    new instance for every call."""
    expected_from: tuple[str, ...] = ()
    """Call cases only: reference programs defining the entry point. The first one's answers
    are the expected values; any other's are accepted too (a dataset that accepts two readings
    of its problem). They run in the sandbox, as the response does."""
    abs_tol: float | None = None
    rel_tol: float | None = None
    """Call cases only: the row's float tolerances (None: the grader's)."""
    groups: tuple[int, ...] = ()
    """Call cases only: where each group of cases after the first starts (``compare:
    evalplus``: EvalPlus runs a row's base inputs and its plus inputs apart)."""
    time_limit_factor: float | None = None
    min_time_limit_s: float | None = None
    """Call cases with a reference only: each case's CPU-time limit is ``time_limit_factor``
    times the CPU time the reference took for it, at least ``min_time_limit_s`` (EvalPlus's
    efficiency rule; None: the grader's ``call_timeout_s``)."""
    typed: bool = False
    """Call cases only: the cases' values were written in the plain-data encoding (``{"t": [...]}``
    a tuple...), so they have exact types and are compared with them (a list is not a tuple)."""

    @property
    def test_names(self) -> list[str]:
        if self.kind == "check":
            return ["check"]
        if self.kind == "cases":
            return [f"case_{i}" for i in range(len(self.cases))]
        return [f"stdio_{i}" for i in range(len(self.stdio))]


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise SpecProblem(f"{what} must be a string, got {type(value).__name__}")
    return value


def _entry_point(spec: dict[str, Any]) -> str:
    name = _str(spec.get("entry_point"), "'entry_point'")
    if not name.isidentifier():
        raise SpecProblem(f"'entry_point' {name!r} is not a Python identifier")
    return name


def _case(raw: Any, index: int, computed: bool, typed: bool = False) -> Case:
    if not isinstance(raw, dict):
        raise SpecProblem(f"case {index} must be a mapping with 'args' and 'expected'")
    unknown = set(raw) - {"args", "kwargs", "expected", "visible", "also"}
    if unknown:
        raise SpecProblem(f"case {index} has unknown keys {sorted(unknown)}")
    if computed and "expected" in raw:
        raise SpecProblem(
            f"case {index} states an 'expected' value, and 'expected_from' computes them all"
        )
    if not computed and "expected" not in raw:
        raise SpecProblem(
            f"case {index} has no 'expected' value (nor does the spec name a "
            "reference program in 'expected_from')"
        )
    args = raw.get("args", [])
    kwargs = raw.get("kwargs", {})
    if not isinstance(args, list):
        raise SpecProblem(f"case {index}: 'args' must be a list")
    if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
        raise SpecProblem(f"case {index}: 'kwargs' must be a mapping of names to values")
    also = raw.get("also", [])
    if not isinstance(also, list):
        raise SpecProblem(f"case {index}: 'also' must be a list of accepted answers")
    visible = bool(raw.get("visible", False))
    expected = raw.get("expected")
    if typed:
        args, kwargs, expected, also = _decoded(index, args, kwargs, expected, also)
    return Case(list(args), dict(kwargs), expected, visible, tuple(also))


def _decoded(
    index: int, args: list[Any], kwargs: dict[str, Any], expected: Any, also: list[Any]
) -> tuple[list[Any], dict[str, Any], Any, list[Any]]:
    """A typed case's values rebuilt from the plain-data encoding the sandbox itself uses
    (JSON has no tuple, set, bytes or complex; ``{"t": [1, 2]}`` is ``(1, 2)``)."""
    try:
        return (
            decode_value(args),
            {name: decode_value(value) for name, value in kwargs.items()},
            decode_value(expected),
            decode_value(also),
        )
    except (PlainDataError, RecursionError) as exc:
        raise SpecProblem(f"case {index}: a typed value that is not encoded ({exc})") from None


def _stdio_case(raw: Any, index: int) -> StdioCase:
    if not isinstance(raw, dict):
        raise SpecProblem(f"stdio test {index} must be a mapping with 'stdin' and 'stdout'")
    unknown = set(raw) - {"stdin", "stdout", "visible", "validator_flags"}
    if unknown:
        raise SpecProblem(f"stdio test {index} has unknown keys {sorted(unknown)}")
    stdin = _str(raw.get("stdin", ""), f"stdio test {index}: 'stdin'")
    stdout = _str(raw.get("stdout"), f"stdio test {index}: 'stdout'")
    flags = raw.get("validator_flags")
    own = None if flags is None else _validator_flags(flags)
    return StdioCase(stdin, stdout, bool(raw.get("visible", False)), own)


def parse_spec(reference: Any) -> TestSpec:
    """Parse a row's test spec (a mapping or its JSON text): the ``check``, ``cases`` or
    ``stdio`` form, a dataset row's test columns, or APPS's ``{"inputs", "outputs"}`` object.

    Raises:
        SpecProblem: the spec is missing, malformed, or mixes kinds.
    """
    spec = reference
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except ValueError as exc:
            raise SpecProblem(f"the test spec is a string but not JSON ({exc})") from None
    if not isinstance(spec, dict):
        raise SpecProblem(
            "the test spec must be a mapping with 'check', 'cases' or 'stdio' "
            f"(got {type(spec).__name__})"
        )
    if not any(k in spec for k in ("check", "cases", "stdio")):
        if {"inputs", "outputs"} <= spec.keys():
            # APPS's input_output object itself: the ground truth of verl's code datasets
            spec = {"input_output": spec}
        try:
            spec = from_dataset_row(spec) or spec
        except ValueError as exc:
            raise SpecProblem(str(exc)) from None
    kinds = [k for k in ("check", "cases", "stdio") if k in spec]
    if len(kinds) != 1:
        raise SpecProblem(
            "the test spec needs exactly one of 'check' (HumanEval style), 'cases' or 'stdio'"
            + (f"; it has {kinds}" if kinds else "")
        )
    kind = kinds[0]
    helpers = spec.get("helpers")
    if helpers is not None:
        helpers = _str(helpers, "'helpers'")
    if kind == "check":
        return TestSpec(
            "check",
            entry_point=_entry_point(spec),
            check=_str(spec["check"], "'check'"),
            helpers=helpers,
        )
    if kind == "cases":
        raw = spec["cases"]
        if not isinstance(raw, list) or not raw:
            raise SpecProblem("'cases' must be a non-empty list")
        method_of = spec.get("method_of")
        if method_of is not None and not (isinstance(method_of, str) and method_of.isidentifier()):
            raise SpecProblem(f"'method_of' must name a class, got {method_of!r}")
        compare = spec.get("compare")
        if compare is not None and compare not in CASE_COMPARES:
            raise SpecProblem(
                f"'compare' of call cases must be {', '.join(CASE_COMPARES)}, not {compare!r}"
            )
        references = _references(spec.get("expected_from"))
        typed = spec.get("typed", False)
        if type(typed) is not bool:
            raise SpecProblem(f"'typed' must be true or false, got {typed!r}")
        factor = _positive(spec.get("time_limit_factor"), "'time_limit_factor'")
        groups = spec.get("groups", [])
        if not (
            isinstance(groups, list)
            and all(type(g) is int and 0 < g < len(raw) for g in groups)
            and groups == sorted(set(groups))
        ):
            raise SpecProblem(f"'groups' must be rising case indices, got {groups!r}")
        if factor is not None and not references:
            raise SpecProblem("'time_limit_factor' needs 'expected_from' (a reference to time)")
        return TestSpec(
            "cases",
            entry_point=_entry_point(spec),
            cases=[_case(c, i, bool(references), typed) for i, c in enumerate(raw)],
            method_of=method_of,
            compare=compare,
            expected_from=references,
            abs_tol=_tolerance(spec.get("abs_tol"), "'abs_tol'"),
            rel_tol=_tolerance(spec.get("rel_tol"), "'rel_tol'"),
            typed=typed,
            groups=tuple(groups),
            time_limit_factor=factor,
            min_time_limit_s=_positive(spec.get("min_time_limit_s"), "'min_time_limit_s'"),
        )
    raw = spec["stdio"]
    if not isinstance(raw, list) or not raw:
        raise SpecProblem("'stdio' must be a non-empty list")
    unknown = set(spec) - _STDIO_KEYS
    if unknown:
        raise SpecProblem(f"the stdio spec has unknown keys {sorted(unknown)}")
    language = spec.get("language")
    if language is not None:
        language = _str(language, "'language'")
        if language_named(language) is None:
            raise SpecProblem(f"unknown language {language!r}; known: {', '.join(LANGUAGES)}")
    compare = spec.get("compare")
    if compare is not None and compare not in STDOUT_COMPARES:
        raise SpecProblem(f"'compare' must be one of {', '.join(STDOUT_COMPARES)}, not {compare!r}")
    flags = _validator_flags(spec.get("validator_flags"))
    tests = [_stdio_case(c, i) for i, c in enumerate(raw)]
    if compare == "kattis":
        for own in {flags, *(t.validator_flags for t in tests if t.validator_flags is not None)}:
            try:
                parse_kattis_flags(own)
            except ValueError as exc:
                raise SpecProblem(str(exc)) from None
    output_mb = _positive(spec.get("output_mb"), "'output_mb'")
    stack_mb = _stack(spec.get("stack_mb"))
    return TestSpec(
        "stdio",
        stdio=tests,
        language=language,
        time_limit_s=_positive(spec.get("time_limit_s"), "'time_limit_s'"),
        memory_mb=_memory(spec.get("memory_mb")),
        compare=compare,
        checker=_checker(spec.get("checker")),
        validator_flags=flags,
        output_mb=None if output_mb is None else max(1, int(output_mb)),
        stack_mb=stack_mb,
    )


_STDIO_KEYS = {
    "stdio",
    "language",
    "time_limit_s",
    "memory_mb",
    "output_mb",
    "stack_mb",
    "compare",
    "validator_flags",
    "checker",
    "helpers",
}


def _stack(value: Any) -> int | None:
    """``stack_mb``: megabytes (at least 8), or ``"unlimited"`` (0 here)."""
    if value is None:
        return None
    if value == "unlimited":
        return 0
    mb = _positive(value, "'stack_mb'")
    assert mb is not None
    return max(8, int(mb))


def _validator_flags(value: Any) -> str:
    """``validator_flags``: a string or a list of words, checked against the default
    validator's flags (a custom validator takes any, so only the form is checked here)."""
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return " ".join(str(v) for v in value)
    return _str(value, "'validator_flags'")


def _references(value: Any) -> tuple[str, ...]:
    """``expected_from``: one program's source, or a list of them (the first is the reference,
    the others give answers that are accepted too)."""
    if value is None:
        return ()
    sources = [value] if isinstance(value, str) else value
    if (
        not isinstance(sources, list)
        or not sources
        or not all(isinstance(s, str) and s.strip() for s in sources)
    ):
        raise SpecProblem("'expected_from' must be a program's source, or a list of them")
    return tuple(sources)


def _tolerance(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise SpecProblem(f"{what} must be a number >= 0, got {value!r}")
    return float(value)


def _positive(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise SpecProblem(f"{what} must be a positive number, got {value!r}")
    return float(value)


def _memory(value: Any) -> int | None:
    mb = _positive(value, "'memory_mb'")
    if mb is not None and mb < 16:
        raise SpecProblem(f"'memory_mb' must be at least 16, got {value!r}")
    return None if mb is None else int(mb)


def _checker(raw: Any) -> CheckerProgram | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("source"), str):
        raise SpecProblem("'checker' must be a mapping with 'source' (and 'language')")
    unknown = set(raw) - {"language", "source", "files", "protocol"}
    if unknown:
        raise SpecProblem(f"'checker' has unknown keys {sorted(unknown)}")
    protocol = raw.get("protocol", "testlib")
    if protocol not in ("testlib", "kattis"):
        raise SpecProblem(f"the checker's 'protocol' must be testlib or kattis, not {protocol!r}")
    language = _str(raw.get("language", "cpp"), "the checker's 'language'")
    if language_named(language) is None:
        raise SpecProblem(f"the checker's language {language!r} is unknown")
    files = raw.get("files") or {}
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and "/" not in k and not k.startswith(".")
        for k, v in files.items()
    ):
        raise SpecProblem("the checker's 'files' must map plain file names to their text")
    return CheckerProgram(language, raw["source"], dict(files), protocol)
