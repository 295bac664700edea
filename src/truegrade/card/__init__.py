"""The grader card: validity, exploitability and item soundness of one grader on one dataset,
with a verdict and what to fix first, as self-contained HTML, Markdown and JSON."""

from truegrade.card._build import Card, build_card
from truegrade.card._render import write_card
from truegrade.card._verdict import Verdict

__all__ = [
    "Card",
    "Verdict",
    "build_card",
    "write_card",
]
