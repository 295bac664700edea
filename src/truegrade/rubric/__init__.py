"""Checking the checks: lint rubrics, meta-evaluate criterion evaluators against experts, and
aggregate rubric scores as HealthBench does.

The rubric format and the ``rubric`` grader are in ``truegrade.graders.rubric``; this package
holds what is done *to* rubrics: ``lint_rubrics`` (keyword-gameable, vague, duplicate and
overlapping criteria, points imbalance, missing negative criteria, criteria never or always
met), ``meta_evaluate`` (macro-F1 and kappa against expert labels, per category and tag, with
the experts' own agreement as the ceiling) and ``aggregate_rubric_scores``.
"""

from truegrade.rubric._aggregate import RubricSummary, aggregate_rubric_scores
from truegrade.rubric._lint import (
    DEFAULT_HARM_TAGS,
    LintFinding,
    LintReport,
    RubricSource,
    lint_rubrics,
)
from truegrade.rubric._meta import Breakdown, MetaReport, MetaRow, meta_evaluate, meta_rows

__all__ = [
    "DEFAULT_HARM_TAGS",
    "Breakdown",
    "LintFinding",
    "LintReport",
    "MetaReport",
    "MetaRow",
    "RubricSource",
    "RubricSummary",
    "aggregate_rubric_scores",
    "lint_rubrics",
    "meta_evaluate",
    "meta_rows",
]
