"""Simple, strict matchers: ``exact``, ``regex``, ``numeric``, ``choice`` and ``json``.

Each one fails a response that gives several different answers (``hedged``) instead of picking
the one that happens to match, and none of them tolerates more than it is configured to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_modules

if TYPE_CHECKING:
    from truegrade.graders.match._choice import ChoiceGrader, ChoiceOptions
    from truegrade.graders.match._exact import ExactGrader, ExactOptions
    from truegrade.graders.match._fences import fenced_blocks, fences
    from truegrade.graders.match._json import JsonGrader, JsonOptions
    from truegrade.graders.match._numeric import NumericGrader, NumericOptions
    from truegrade.graders.match._regex import RegexGrader, RegexOptions

__all__ = [
    "ChoiceGrader",
    "ChoiceOptions",
    "ExactGrader",
    "ExactOptions",
    "JsonGrader",
    "JsonOptions",
    "NumericGrader",
    "NumericOptions",
    "RegexGrader",
    "RegexOptions",
    "fenced_blocks",
    "fences",
]

_HOMES = {
    "truegrade.graders.match._choice": (
        "ChoiceGrader",
        "ChoiceOptions",
    ),
    "truegrade.graders.match._exact": (
        "ExactGrader",
        "ExactOptions",
    ),
    "truegrade.graders.match._json": (
        "JsonGrader",
        "JsonOptions",
    ),
    "truegrade.graders.match._fences": (
        "fenced_blocks",
        "fences",
    ),
    "truegrade.graders.match._numeric": (
        "NumericGrader",
        "NumericOptions",
    ),
    "truegrade.graders.match._regex": (
        "RegexGrader",
        "RegexOptions",
    ),
}
"""Where each name lives: its module is imported when the name is first read, so importing
the package (as every worker process does, for the one kernel it runs) costs nothing."""

__getattr__, __dir__ = lazy_modules(globals(), _HOMES)
