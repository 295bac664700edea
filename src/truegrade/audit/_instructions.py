"""The audit of instruction-following items: constraints that a response ignoring the request
meets.

An IFEval-style item checks only its constraints. When a response with nothing in it ("Yes."),
or the prompt pasted back, passes them under the grader in use, the item rewards that response
as much as a real answer: it measures nothing of the request (``trivially_satisfied``). The
hardened ``instructions`` grader refuses such responses; IFEval's plain checks often do not, so
an item set audited with them shows which items a policy can satisfy for free.
"""

from __future__ import annotations

from collections.abc import Mapping

from truegrade.attacks import is_rewarded
from truegrade.core import Grade, Sample

__all__ = ["PROBES", "probe_flags", "probe_response"]

PROBES = ("degenerate", "echo")


def probe_response(item: Sample, probe: str) -> str:
    """The probe's response to the item."""
    return "Yes." if probe == "degenerate" else item.prompt_text


def probe_flags(grades: Mapping[str, Grade], threshold: float) -> list[tuple[str, str]]:
    """``(flag, reason)`` when a probe's grade is a pass."""
    what = {"degenerate": "the one-word response 'Yes.'", "echo": "the prompt pasted back"}
    passed = [what[n] for n in PROBES if n in grades and is_rewarded(grades[n], threshold)]
    if not passed:
        return []
    return [
        (
            "trivially_satisfied",
            f"{' and '.join(passed)} meet{'s' if len(passed) == 1 else ''} every constraint: "
            "the item rewards a response that ignores the request",
        )
    ]
