"""The item audit: wrong keys, references that fail their own grader, graders that reject
correct answers in another form, flaky grading, items that do not discriminate, near-duplicate
and templated prompts, paraphrases, answers leaked into the prompt and items leaked from a
training set."""

from truegrade.audit._audit import (
    CHECKS,
    AuditFlag,
    AuditItem,
    AuditReport,
    SemanticPass,
    audit_items,
)
from truegrade.audit._equivalents import equivalent_responses
from truegrade.audit._similar import DuplicatePair, Leak, TemplateFamily

__all__ = [
    "CHECKS",
    "AuditFlag",
    "AuditItem",
    "AuditReport",
    "DuplicatePair",
    "Leak",
    "SemanticPass",
    "TemplateFamily",
    "audit_items",
    "equivalent_responses",
]
