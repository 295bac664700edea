"""Simple, strict matchers: ``exact``, ``regex``, ``numeric``, ``choice`` and ``json``.

Each one fails a response that gives several different answers (``hedged``) instead of picking
the one that happens to match, and none of them tolerates more than it is configured to.
"""

from truegrade.graders.match._choice import ChoiceGrader, ChoiceOptions
from truegrade.graders.match._exact import ExactGrader, ExactOptions
from truegrade.graders.match._json import JsonGrader, JsonOptions, fenced_blocks, fences
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
