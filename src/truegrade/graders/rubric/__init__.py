"""``rubric``: expert-written criteria (HealthBench's format), judged one by one by an LLM judge
or a programmatic check, scored as HealthBench scores them.

The format (``parse_rubric``, ``load_rubric``) and the grader live here; the tools that check the
checks (lint, meta-evaluation against expert labels, aggregate scores) are in
``truegrade.rubric``.
"""

from truegrade.graders.rubric._format import Rubric, RubricItem, load_rubric, parse_rubric
from truegrade.graders.rubric._grader import (
    CriterionVerdict,
    RubricFlag,
    RubricGrader,
    RubricOptions,
)

__all__ = [
    "CriterionVerdict",
    "Rubric",
    "RubricFlag",
    "RubricGrader",
    "RubricItem",
    "RubricOptions",
    "load_rubric",
    "parse_rubric",
]
