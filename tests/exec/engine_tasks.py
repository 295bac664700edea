"""Module-level tasks the engine tests send to workers (tasks must be importable there)."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from typing import Any


def identity(x: Any) -> Any:
    return x


def square(x: int) -> int:
    return x * x


def sized_answer(x: tuple[str, int]) -> str:
    """An answer of ``x[1]`` characters (the payload ``x[0]`` only adds to what is sent)."""
    return "y" * x[1]


def misbehave(x: Any) -> Any:
    """Behave according to the payload: the hostile cases the engine must contain."""
    if x == "spin":
        while True:
            pass
    if x == "sleep":
        time.sleep(600)
    if x == "exit":
        os._exit(3)
    if x == "segv":
        ctypes.string_at(0)
    if x == "memory":
        return len(bytearray(50 * 1024**3))
    if x == "raise":
        raise ValueError("planted failure")
    if x == "system_exit":
        raise SystemExit(0)
    if x == "keyboard":
        raise KeyboardInterrupt
    if x == "kill_self":
        os.kill(os.getpid(), signal.SIGKILL)
    if x == "fraction":
        return Fraction(1, 3)
    if x == "int_subclass":
        return type("Sneaky", (int,), {"__eq__": lambda self, other: True})(1)
    if isinstance(x, tuple) and x[0] == "grandchild":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(x[1], "w") as handle:
            handle.write(str(child.pid))
        while True:
            time.sleep(1)
    if isinstance(x, tuple) and x[0] == "nap":
        time.sleep(x[1])
        return x[1]
    return x


class Counter:
    """A task with state and a setup hook: each worker sets it up once."""

    def __init__(self, fail_setup: bool = False) -> None:
        self.fail_setup = fail_setup
        self.setups = 0

    def setup(self) -> None:
        if self.fail_setup:
            raise RuntimeError("setup refused")
        self.setups += 1

    def __call__(self, x: int) -> tuple[int, int]:
        return os.getpid(), self.setups


def _burn(seconds: float) -> None:
    """Use ``seconds`` of this process's CPU time, however long the machine takes to give it."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


class CpuTimed:
    """``misbehave``'s cases, plus ``("burn", s)``, as a task timed in CPU time (or, with
    ``clock="wall"``, the same work timed by the wall clock)."""

    def __init__(self, clock: str = "cpu") -> None:
        self.deadline_clock = clock

    def __call__(self, x: Any) -> Any:
        if isinstance(x, tuple) and x[0] == "burn":
            _burn(x[1])
            return x[1]
        return misbehave(x)
