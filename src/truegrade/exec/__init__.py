"""Killable worker processes: how truegrade runs work that may hang, crash or eat memory.

The engine knows nothing about graders: it runs picklable tasks on payloads under hard deadlines.
It imports only the standard library, so a worker boots fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_modules

if TYPE_CHECKING:
    from truegrade.exec._engine import (
        Engine,
        EngineConfig,
        Failure,
        Outcome,
        Task,
        configure_default_engine,
        default_engine,
        default_worker_count,
    )

__all__ = [
    "Engine",
    "EngineConfig",
    "Failure",
    "Outcome",
    "Task",
    "configure_default_engine",
    "default_engine",
    "default_worker_count",
]

_HOMES = {
    "truegrade.exec._engine": (
        "Engine",
        "EngineConfig",
        "Failure",
        "Outcome",
        "Task",
        "configure_default_engine",
        "default_engine",
        "default_worker_count",
    ),
}
"""Where each name lives: its module is imported when the name is first read, so importing
the package (as every worker process does, for the one kernel it runs) costs nothing."""

__getattr__, __dir__ = lazy_modules(globals(), _HOMES)
