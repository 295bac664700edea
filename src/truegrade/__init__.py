"""truegrade: graders that a capable optimizer cannot talk its way around, and the measurements
that say how far a grader can be trusted before anyone trains on it.

The public API is re-exported here. Attributes load on first access, so importing ``truegrade``
(as every worker process does) costs almost nothing until something is used.

Examples:
    >>> from truegrade import load_grader
    >>> grader = load_grader("exact", normalize=["strip", "lower"])
    >>> grader.grade({"id": 1, "response": " Paris ", "reference": "paris"}).passed
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_exports

if TYPE_CHECKING:
    from truegrade._version import __version__
    from truegrade.core import (
        AllOf,
        AsyncGrader,
        BaseGrader,
        DataError,
        EngineError,
        Flag,
        Gate,
        Grade,
        Grader,
        OutputError,
        Sample,
        SpecError,
        TruegradeError,
        WeightedSum,
        grader_names,
        load_grader,
        register_grader,
        run_grader,
    )
    from truegrade.data import ResultWriter, read_samples
    from truegrade.exec import Engine, EngineConfig, configure_default_engine

__all__ = [
    "AllOf",
    "AsyncGrader",
    "BaseGrader",
    "DataError",
    "Engine",
    "EngineConfig",
    "EngineError",
    "Flag",
    "Gate",
    "Grade",
    "Grader",
    "OutputError",
    "ResultWriter",
    "Sample",
    "SpecError",
    "TruegradeError",
    "WeightedSum",
    "__version__",
    "configure_default_engine",
    "grader_names",
    "load_grader",
    "read_samples",
    "register_grader",
    "run_grader",
]

_HOME = {
    "__version__": "truegrade._version",  # read from the installed metadata: ~30 ms
    "Engine": "truegrade.exec",
    "EngineConfig": "truegrade.exec",
    "configure_default_engine": "truegrade.exec",
    "ResultWriter": "truegrade.data",
    "read_samples": "truegrade.data",
}


__getattr__, __dir__ = lazy_exports(
    globals(), {name: _HOME.get(name, "truegrade.core") for name in __all__}
)
