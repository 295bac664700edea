"""``KernelGrader``: a grader whose per-sample work is a picklable kernel.

Splitting a grader into a *kernel* (pure, picklable: payload -> verdict dict) and the grader around
it lets one piece of code run either in the caller's process (``execution: inline``, for work that
is linear-time by construction) or in the engine's killable workers (``execution: process``, for
anything that parses hostile text, runs user patterns or user code). The grader never decides how
deadlines are enforced: the engine does, by killing processes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from truegrade.core import BaseGrader, Flag, Grade, Grader, Sample, SpecError
from truegrade.exec import Engine, Failure, Outcome, default_engine

__all__ = [
    "GraderOptions",
    "Kernel",
    "KernelGrader",
    "error_verdict",
    "grade_from_outcome",
    "grade_from_verdict",
    "set_timeout",
    "validate_options",
    "verdict",
    "walk",
]

Kernel = Callable[[Any], dict[str, Any]]
"""Payload -> verdict dict (the fields of a ``Grade`` except ``latency_ms``)."""

_FAILURE_FLAGS = {
    Failure.TIMEOUT: Flag.TIMEOUT,
    Failure.STARVED: Flag.STARVED,
    Failure.CRASHED: Flag.CRASHED,
    Failure.MEMORY: Flag.MEMORY,
    Failure.EXCEPTION: Flag.GRADER_EXCEPTION,
    Failure.CANCELLED: "cancelled",
}

G = TypeVar("G", bound="KernelGrader")


class GraderOptions(BaseModel):
    """Options every kernel grader takes.

    Attributes:
        name: Name of this grader's part in composed subscores.
        max_response_chars: Longer responses are rejected unread.
        timeout_s: Hard per-item deadline when run in worker processes.
        execution: ``process`` (killable workers) or ``inline`` (the caller's process; only for
            work that cannot hang). Each grader picks a safe default.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    max_response_chars: int | None = Field(default=None, gt=0)
    timeout_s: float | None = Field(default=None, gt=0)
    execution: Literal["process", "inline"] | None = None


M = TypeVar("M", bound=BaseModel)


def validate_options(model: type[M], options: dict[str, Any]) -> M:
    """A spec's options as ``model``, or a ``SpecError`` naming every bad or unknown option."""
    try:
        return model.model_validate(options)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "options"
            if err["type"] == "extra_forbidden":
                known = ", ".join(sorted(model.model_fields))
                problems.append(f"unknown option {where!r} (options: {known})")
            else:
                problems.append(f"option {where!r}: {err['msg']}")
        raise SpecError("; ".join(problems)) from None


def verdict(
    passed: bool,
    explanation: str,
    *flags: str,
    score: float | None = None,
    subscores: dict[str, float] | None = None,
) -> dict[str, Any]:
    """A kernel's verdict: the fields of a ``Grade`` (score 1/0 from ``passed`` unless given)."""
    return {
        "score": (1.0 if passed else 0.0) if score is None else score,
        "passed": passed,
        "flags": list(flags),
        "explanation": explanation,
        "subscores": subscores or {},
    }


def error_verdict(message: str, *flags: str) -> dict[str, Any]:
    """A kernel's verdict when it could not grade (a broken reference, a misbehaving function)."""
    return {"score": 0.0, "passed": None, "error": message, "flags": list(flags)}


def grade_from_verdict(value: Any, elapsed_s: float) -> Grade:
    """Turn what a kernel returned into a ``Grade``; a malformed verdict is an error grade."""
    latency = elapsed_s * 1000
    if not isinstance(value, dict):
        return Grade.failure(
            f"the grader's kernel returned {type(value).__name__}, not a verdict",
            Flag.GRADER_EXCEPTION,
            latency_ms=latency,
        )
    try:
        return Grade.model_validate({**value, "latency_ms": latency})
    except ValidationError as exc:
        return Grade.failure(
            f"the grader's kernel returned an invalid verdict: {exc.errors()[0]['msg']}",
            Flag.INVALID_SCORE,
            latency_ms=latency,
        )


def grade_from_outcome(outcome: Outcome) -> Grade:
    """Turn an engine outcome into a ``Grade`` (failures become error grades with a flag)."""
    if outcome.ok:
        return grade_from_verdict(outcome.value, outcome.elapsed_s)
    flag = _FAILURE_FLAGS.get(outcome.failure or "", Flag.CRASHED)
    return Grade.failure(outcome.message, flag, latency_ms=outcome.elapsed_s * 1000)


class KernelGrader(BaseGrader):
    """Base of graders whose per-sample work is a kernel; see the module docstring.

    Subclasses set ``Options`` (a ``GraderOptions`` subclass), ``default_execution`` and
    ``default_timeout_s``, and implement ``kernel()`` (return a picklable callable) and, if the
    default does not fit, ``payload(sample)``.
    """

    Options: ClassVar[type[GraderOptions]] = GraderOptions
    default_execution: ClassVar[Literal["process", "inline"]] = "process"
    default_timeout_s: ClassVar[float] = 10.0
    #: Why this grader may not run inline (None: it may). Set where the work can run without
    #: bound on hostile input, since only a worker process can be killed at its deadline.
    inline_refused: ClassVar[str | None] = None

    def __init__(
        self,
        options: GraderOptions | None = None,
        *,
        engine: Engine | None = None,
        base_dir: Path | None = None,
    ) -> None:
        opts = options if options is not None else self.Options()
        if opts.execution == "inline" and self.inline_refused:
            raise SpecError(
                "runs in killable worker processes only (execution: process): "
                f"{self.inline_refused}"
            )
        super().__init__(name=opts.name, max_response_chars=opts.max_response_chars)
        self.options = opts
        self.timeout_s = opts.timeout_s or self.default_timeout_s
        self.execution: Literal["process", "inline"] = opts.execution or self._safe_execution()
        self.engine = engine
        self.base_dir = base_dir

    @classmethod
    def from_options(cls: type[G], options: dict[str, Any], base_dir: Path | None = None) -> G:
        """Build from a spec's options, with a clear error for unknown or invalid ones."""
        return cls(validate_options(cls.Options, options), base_dir=base_dir)

    def _safe_execution(self) -> Literal["process", "inline"]:
        return self.default_execution

    # -- for subclasses --------------------------------------------------------------------------

    def kernel(self) -> Kernel:
        raise NotImplementedError

    def payload(self, sample: Sample) -> Any:
        return (sample.response_text, sample.reference)

    def batch_timeout_s(self, kernel: Kernel, payloads: list[Any]) -> float:
        """The hard per-item deadline of a batch (a grader whose items' work depends on the
        row, as a program's tests, sizes it from the payloads)."""
        return self.timeout_s

    # -- running ---------------------------------------------------------------------------------

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        kernel = self.kernel()
        payloads = [self.payload(s) for s in samples]
        if self.execution == "inline":
            return [_run_inline(kernel, p) for p in payloads]
        engine = self.engine or default_engine()
        outcomes = engine.map(kernel, payloads, timeout_s=self.batch_timeout_s(kernel, payloads))
        return [grade_from_outcome(o) for o in outcomes]

    async def _agrade_valid(self, samples: list[Sample]) -> list[Grade]:
        if self.execution == "inline":
            return self._grade_valid(samples)
        kernel = self.kernel()
        engine = self.engine or default_engine()
        payloads = [self.payload(s) for s in samples]
        outcomes = await engine.amap(
            kernel, payloads, timeout_s=self.batch_timeout_s(kernel, payloads)
        )
        return [grade_from_outcome(o) for o in outcomes]


def _run_inline(kernel: Kernel, payload: Any) -> Grade:
    start = time.perf_counter()
    try:
        value = kernel(payload)
    except Exception as exc:
        elapsed = (time.perf_counter() - start) * 1000
        return Grade.failure(
            f"grader raised {type(exc).__name__}: {exc}", Flag.GRADER_EXCEPTION, latency_ms=elapsed
        )
    return grade_from_verdict(value, time.perf_counter() - start)


def walk(grader: Grader) -> Iterator[Grader]:
    """Every grader in a composition tree, the root first."""
    yield grader
    for attr in ("check", "then"):
        part = getattr(grader, attr, None)
        if part is not None:
            yield from walk(part)
    for part in getattr(grader, "parts", None) or []:
        yield from walk(part[0] if isinstance(part, tuple) else part)


def set_timeout(grader: Grader, timeout_s: float) -> int:
    """Set the per-item deadline of every kernel grader in a tree; returns how many were set."""
    count = 0
    for node in walk(grader):
        if isinstance(node, KernelGrader):
            node.timeout_s = timeout_s
            count += 1
    return count
