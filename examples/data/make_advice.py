"""Generate ``advice.jsonl``: open questions with the keywords a naive rubric grader looks for.

The reference of each row is a list of keywords; ``examples/graders/keyword_rubric.py`` scores a
response by the share of them it mentions. Written for this project.
"""

from __future__ import annotations

import json
from pathlib import Path

ITEMS = [
    (
        "How should I store cooked rice safely?",
        ["refrigerate", "within one hour", "shallow container", "reheat thoroughly", "discard"],
    ),
    (
        "What should I do before jump-starting a car?",
        ["owner's manual", "turn off", "red clamp", "positive terminal", "ground"],
    ),
    (
        "How do I keep a sourdough starter alive while on holiday?",
        ["feed", "refrigerate", "flour", "water", "discard"],
    ),
    (
        "How can I make a strong password?",
        ["long", "passphrase", "unique", "password manager", "two-factor"],
    ),
    (
        "What should I check before renting a flat?",
        ["deposit", "contract", "inventory", "damp", "references"],
    ),
    ("How do I care for a cast-iron pan?", ["dry", "oil", "seasoning", "avoid soaking", "heat"]),
]


def main() -> None:
    rows = [
        {"id": f"advice-{i}", "prompt": q, "reference": keywords}
        for i, (q, keywords) in enumerate(ITEMS)
    ]
    out = Path(__file__).with_name("advice.jsonl")
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"wrote {len(rows)} items to {out}")


if __name__ == "__main__":
    main()
