"""Killable worker processes: how truegrade runs work that may hang, crash or eat memory.

The engine knows nothing about graders: it runs picklable tasks on payloads under hard deadlines.
It imports only the standard library, so a worker boots fast.
"""

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
