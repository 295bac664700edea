"""The ``Grader`` contract and the base class the built-in graders share.

Anything with ``grade_batch(samples) -> list[Grade]`` is a grader: the analyses (attack, audit,
validate, serve) only ever call that. ``BaseGrader`` adds what every real grader needs around it:
rows accepted as dicts, samples without a response or reference turned into clear failure grades,
absurdly long responses rejected unread, and a single-sample ``grade`` and async ``agrade_batch``
as sugar. ``run_grader`` is how analyses call a grader they did not write: one broken sample or a
grader that returns the wrong number of grades cannot take the batch down.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

from truegrade.core._errors import DataError
from truegrade.core._grade import Flag, Grade
from truegrade.core._sample import COLUMNS, Sample, to_sample, to_samples

GRADER_FAMILIES = ("math", "code", "text", "instructions", "repo")
"""The families of answers graders judge (``BaseGrader.family``), which the attack library and
the audit are organised by."""

__all__ = [
    "GRADER_FAMILIES",
    "AsyncGrader",
    "BaseGrader",
    "Grader",
    "SampleLike",
    "grade_rows",
    "run_grader",
    "run_grader_async",
]

SampleLike = Sample | Mapping[str, Any]
"""A ``Sample`` or a plain row dict in the documented row format."""

DEFAULT_MAX_RESPONSE_CHARS = 1_000_000


@runtime_checkable
class Grader(Protocol):
    """Anything that grades a batch, in input order.

    Examples:
        >>> class Always:
        ...     def grade_batch(self, samples):
        ...         return [Grade(score=1.0, passed=True) for _ in samples]
        >>> isinstance(Always(), Grader)
        True
    """

    def grade_batch(self, samples: Sequence[SampleLike]) -> list[Grade]:
        """Grade every sample; one ``Grade`` per sample, in the same order."""
        ...


@runtime_checkable
class AsyncGrader(Protocol):
    """A grader whose work is I/O (an LLM judge, a served reward model)."""

    async def agrade_batch(self, samples: Sequence[SampleLike]) -> list[Grade]:
        """Grade every sample without blocking the event loop."""
        ...


class BaseGrader:
    """Shared behaviour of the built-in graders.

    Subclasses implement ``_grade_valid(samples)``, which only sees samples that have a response
    (and a reference when ``requires_reference``) of acceptable length.

    Attributes:
        name: Used as the key of this grader's part in composed subscores.
        spec: A JSON-able spec that ``load_grader`` turns back into an equal grader; set by the
            loader, so a grader can be rebuilt in another process from its record.
        max_response_chars: Longer responses are rejected unread with ``response_too_long``.
    """

    kind: ClassVar[str] = "grader"
    family: str | None = None
    """What answers it judges, one of ``GRADER_FAMILIES`` (``math``: final answers; ``code``:
    programs; ``text``: free text, as judges, rubrics and reward models read it;
    ``instructions``: verifiable constraints; ``repo``: patches to a repository, judged by its
    tests). The analyses read it to pick the attacks and audit
    checks that fit; None leaves them to infer it from the rows' references. A grader registered
    with ``register_grader(..., family=...)`` gets it from its registration."""
    requires_reference: bool = True
    """Samples without a reference get an error grade (graders whose options decide this set it
    per instance)."""

    def __init__(self, *, name: str | None = None, max_response_chars: int | None = None) -> None:
        self.name = name or self.kind
        self.max_response_chars = max_response_chars or DEFAULT_MAX_RESPONSE_CHARS
        self.spec: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    # -- the public face -------------------------------------------------------------------------

    def grade(self, sample: SampleLike) -> Grade:
        """Grade one sample (sugar over ``grade_batch``)."""
        return self.grade_batch([to_sample(sample, default_id=0)])[0]

    def grade_batch(self, samples: Sequence[SampleLike]) -> list[Grade]:
        """Grade a batch; returns one ``Grade`` per sample, in input order."""
        batch, grades, todo = self._prepare(samples)
        if todo:
            _fill(self, grades, todo, self._grade_valid([batch[i] for i in todo]))
        return [g for g in grades if g is not None]

    async def agrade_batch(self, samples: Sequence[SampleLike]) -> list[Grade]:
        """Async variant of ``grade_batch``; it never blocks the event loop."""
        batch, grades, todo = self._prepare(samples)
        if todo:
            _fill(self, grades, todo, await self._agrade_valid([batch[i] for i in todo]))
        return [g for g in grades if g is not None]

    def _prepare(
        self, samples: Sequence[SampleLike]
    ) -> tuple[list[Sample], list[Grade | None], list[int]]:
        batch = to_samples(samples)
        grades: list[Grade | None] = [self._precheck(s) for s in batch]
        return batch, grades, [i for i, g in enumerate(grades) if g is None]

    # -- for subclasses --------------------------------------------------------------------------

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        raise NotImplementedError

    async def _agrade_valid(self, samples: list[Sample]) -> list[Grade]:
        """CPU-bound graders run in a thread so the loop stays free; I/O graders override."""
        return await asyncio.to_thread(self._grade_valid, samples)

    def _precheck(self, sample: Sample) -> Grade | None:
        if sample.response is None:
            return Grade.failure("the sample has no response to grade", Flag.NO_RESPONSE)
        if self.requires_reference and sample.reference is None:
            read_from = ", ".join(repr(c) for c in COLUMNS["reference"])
            others = ", ".join(repr(k) for k in list(sample.metadata)[:12]) or "none"
            return Grade.failure(
                f"the {self.kind!r} grader needs a reference and this sample has none (read from "
                f"the first of {read_from}, or a dataset's preset; its other columns: {others}; "
                "name one with --field reference=COLUMN)",
                Flag.NO_REFERENCE,
            )
        size = len(sample.response_text)
        if size > self.max_response_chars:
            return Grade.reject(
                f"response is {size:,} characters, over this grader's limit of "
                f"{self.max_response_chars:,} (max_response_chars); rejected unread",
                Flag.RESPONSE_TOO_LONG,
            )
        return None


def _fill(grader: object, grades: list[Grade | None], todo: list[int], done: list[Grade]) -> None:
    _check_length(grader, done, len(todo))
    for i, grade in zip(todo, done, strict=True):
        grades[i] = grade


def _check_length(grader: object, grades: Sequence[object], expected: int) -> None:
    if len(grades) != expected:
        raise RuntimeError(
            f"{grader!r}.grade_batch returned {len(grades)} grades for {expected} samples"
        )


def _coerce_grade(value: object) -> Grade:
    if isinstance(value, Grade):
        return value
    if isinstance(value, Mapping):
        return Grade.model_validate(dict(value))
    raise TypeError(f"a grader returned {type(value).__name__}, not a Grade")


def run_grader(grader: Grader, samples: Sequence[SampleLike]) -> list[Grade]:
    """Call any grader defensively: the way analyses and faces call graders they did not write.

    If the batch call raises or returns the wrong number of grades, each sample is graded alone so
    one bad sample cannot spoil the others; a sample whose own call fails gets a ``Grade`` with
    ``error`` set and flag ``grader_exception``.
    """
    batch = to_samples(samples)
    if not batch:
        return []
    try:
        grades = grader.grade_batch(batch)
        _check_length(grader, grades, len(batch))
        return [_coerce_grade(g) for g in grades]
    except Exception:
        if len(batch) == 1:
            return [_grade_alone(grader, batch[0])]
    return [_grade_alone(grader, s) for s in batch]


def grade_rows(
    grader: Grader, rows: Sequence[Any], read: Callable[[Any, int], Sample]
) -> list[Grade]:
    """One grade per row, in order, for the faces that receive rows (TRL's columns, verl's
    samples, a Ray batch): ``read(row, i)`` makes each a sample, a row it cannot read
    (``DataError``) gets an error grade of its own (``bad_row``) instead of stopping the batch,
    and the rest are graded together by ``run_grader``."""
    samples: list[Sample] = []
    unreadable: dict[int, Grade] = {}
    for i, row in enumerate(rows):
        try:
            samples.append(read(row, i))
        except DataError as exc:
            unreadable[i] = Grade.failure(f"row {i}: {exc.reason}", Flag.BAD_ROW)
    graded = iter(run_grader(grader, samples))
    return [unreadable[i] if i in unreadable else next(graded) for i in range(len(rows))]


def _grade_alone(grader: Grader, sample: Sample) -> Grade:
    start = time.perf_counter()
    try:
        grades = grader.grade_batch([sample])
        _check_length(grader, grades, 1)
        return _coerce_grade(grades[0])
    except Exception as exc:
        elapsed = (time.perf_counter() - start) * 1000
        return Grade.failure(
            f"grader raised {type(exc).__name__}: {exc}", Flag.GRADER_EXCEPTION, latency_ms=elapsed
        )


async def run_grader_async(grader: Grader, samples: Sequence[SampleLike]) -> list[Grade]:
    """``run_grader`` for async callers: uses ``agrade_batch`` when the grader has one."""
    # what ``isinstance(grader, AsyncGrader)`` checks, without a protocol check's cost (a few
    # µs, paid per request by the reward server)
    agrade = getattr(grader, "agrade_batch", None)
    if callable(agrade):
        batch = to_samples(samples)
        try:
            grades = await agrade(batch)
            _check_length(grader, grades, len(batch))
            return [_coerce_grade(g) for g in grades]
        except Exception:
            return await asyncio.to_thread(run_grader, grader, samples)
    return await asyncio.to_thread(run_grader, grader, samples)
