"""The item audit: wrong keys, references that fail their own grader, graders that reject
correct answers in another form, flaky grading, items that do not discriminate, near-duplicate
and templated prompts, paraphrases, answers leaked into the prompt and items leaked from a
training set; and problem packages, their labelled submissions against their labels."""

from truegrade.audit._audit import (
    CHECKS,
    AuditFlag,
    AuditItem,
    AuditReport,
    SemanticPass,
    audit_items,
)
from truegrade.audit._package import PackageCheck, SubmissionCheck, check_package
from truegrade.audit._similar import DuplicatePair, Leak, TemplateFamily

__all__ = [
    "CHECKS",
    "AuditFlag",
    "AuditItem",
    "AuditReport",
    "DuplicatePair",
    "Leak",
    "PackageCheck",
    "SemanticPass",
    "SubmissionCheck",
    "TemplateFamily",
    "audit_items",
    "check_package",
]
