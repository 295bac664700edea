"""Simple, strict matchers: ``exact``, ``regex``, ``numeric``, ``choice`` and ``json``.

Each one fails a response that gives several different answers (``hedged``) instead of picking
the one that happens to match, and none of them tolerates more than it is configured to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_exports

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

_HOME = {
    "ChoiceGrader": "truegrade.graders.match._choice",
    "ChoiceOptions": "truegrade.graders.match._choice",
    "ExactGrader": "truegrade.graders.match._exact",
    "ExactOptions": "truegrade.graders.match._exact",
    "JsonGrader": "truegrade.graders.match._json",
    "JsonOptions": "truegrade.graders.match._json",
    "fenced_blocks": "truegrade.graders.match._fences",
    "fences": "truegrade.graders.match._fences",
    "NumericGrader": "truegrade.graders.match._numeric",
    "NumericOptions": "truegrade.graders.match._numeric",
    "RegexGrader": "truegrade.graders.match._regex",
    "RegexOptions": "truegrade.graders.match._regex",
}
"""Where each name lives: its module is imported when the name is first read, so importing
the package (as every worker process does, for the one kernel it runs) costs nothing."""

__getattr__, __dir__ = lazy_exports(globals(), _HOME)
