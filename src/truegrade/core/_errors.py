"""The exception tree of truegrade.

Every error a user can cause says what went wrong and what to do about it::

    TruegradeError
     +-- SpecError        a grader spec cannot be turned into a grader (unknown name, bad option,
     |                    a reward function whose signature fits neither TRL nor verl)
     +-- DataError        a user's file or its rows cannot be read (missing, a directory, not
     |    |               UTF-8, malformed JSON/YAML, empty, a missing field); carries the
     |    |               file and line
     |    +-- PackageProblem  (truegrade.graders.code) a directory is no problem package
     +-- EngineError      the worker pool cannot run at all (workers fail to start)
     +-- OutputError      an output file is in the way or cannot be resumed
     +-- JudgeRequestError  (truegrade.judge) a judge request failed for good, after retries
     +-- SandboxError     (truegrade.sandbox) the sandbox cannot start or stopped working
     |    +-- SandboxUnavailable   no isolation mode can run here
     +-- PlainDataError   (truegrade.sandbox) a value is not plain builtin data
     +-- SpecProblem      (truegrade.graders.code) a row's test spec is unusable
     +-- UnknownAttack    (truegrade.attacks) an attack name that is not registered

Each also derives from the builtin error it was before it joined the tree (``ValueError``,
``RuntimeError``, ``KeyError``: see each class), so ``except ValueError`` still catches a
``DataError``. ``TruegradeError`` itself is defined in ``truegrade._errors``, which imports
nothing, so the sandbox can derive from it without loading the core. A test walks every
package's ``__all__`` and fails on an exported exception outside the tree.

Errors while grading one item are never raised: they become a ``Grade`` with ``error`` set, so the
rest of a batch goes on.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

from truegrade._errors import TruegradeError

__all__ = [
    "DataError",
    "EngineError",
    "OutputError",
    "SpecError",
    "TruegradeError",
    "describe_validation_error",
]


class SpecError(TruegradeError, ValueError):
    """A grader spec is invalid: the message names the spec and the offending part."""


class DataError(TruegradeError, ValueError):
    """A data row cannot be used; ``path`` and ``line`` locate it when known."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        elif line is not None:
            where = f"row {line}: "
        super().__init__(f"{where}{message}")
        self.reason = message


class EngineError(TruegradeError, RuntimeError):
    """The execution engine could not start or keep its workers."""


class OutputError(TruegradeError, RuntimeError):
    """An output file exists where it should not, or cannot be resumed."""


class _Invalid(Protocol):
    """What pydantic's ``ValidationError`` and FastAPI's ``RequestValidationError`` share."""

    def errors(self) -> Sequence[Mapping[str, Any]]: ...


def describe_validation_error(
    exc: _Invalid, *, whole: str, limit: int | None = None, skip: Collection[str] = ()
) -> str:
    """Pydantic's errors as one line a user can act on: ``field.path: message; ...``.

    ``whole`` names the object when an error is about all of it (an empty location), ``skip``
    drops location parts the user never wrote (such as FastAPI's ``body``), ``limit`` keeps the
    first few.
    """
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc'] if p not in skip) or whole}: {e['msg']}"
        for e in exc.errors()[:limit]
    )
