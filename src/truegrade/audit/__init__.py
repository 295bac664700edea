"""The item audit: wrong keys, references that fail their own grader, graders that reject
correct answers in another form, flaky grading, items that do not discriminate, near-duplicate
prompts and answers leaked into the prompt."""

from truegrade.audit._audit import CHECKS, AuditFlag, AuditItem, AuditReport, audit_items
from truegrade.audit._equivalents import equivalent_responses

__all__ = ["CHECKS", "AuditFlag", "AuditItem", "AuditReport", "audit_items", "equivalent_responses"]
