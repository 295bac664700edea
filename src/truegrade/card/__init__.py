"""The grader card: validity, exploitability and item soundness of one grader on one dataset,
with a verdict and what to fix first, as self-contained HTML, Markdown and JSON."""

from truegrade.card._build import Card, build_card
from truegrade.card._render import render_html, render_markdown, write_card
from truegrade.card._verdict import FIXES, STATUS_RULES, Verdict, verdict_of

__all__ = [
    "FIXES",
    "STATUS_RULES",
    "Card",
    "Verdict",
    "build_card",
    "render_html",
    "render_markdown",
    "verdict_of",
    "write_card",
]
