"""How a budget counted in CPU time is bounded in wall-clock time, in one light module that the
engine, the sandbox and the code grader share (it imports nothing).

A verdict must not depend on how busy the machine is, so budgets are counted in the CPU time the
work used. CPU time alone never ends a process that gets none (a starved worker, a sleeping
program), so each such budget also has a wall-clock backstop of ``WALL_FACTOR * budget +
WALL_EXTRA_S``: room for work that uses its whole budget on a machine running twice its cores in
other work (it then gets about 2/5 of a core: 2.5x its budget in wall-clock time). Work stopped
by the backstop having used less than its budget was starved or waited; what that means is the
caller's to say (an error, ``idle_limit``), never a verdict on the work.
"""

__all__ = ["WALL_EXTRA_S", "WALL_FACTOR", "wall_backstop_s"]

WALL_FACTOR = 3.0
"""The wall-clock backstop as a multiple of a CPU-time budget."""

WALL_EXTRA_S = 2.0
"""Seconds added to the backstop, for start-up and for short budgets."""


def wall_backstop_s(budget_s: float, factor: float = WALL_FACTOR) -> float:
    """The wall-clock time after which work with ``budget_s`` of CPU time is stopped."""
    return factor * budget_s + WALL_EXTRA_S
