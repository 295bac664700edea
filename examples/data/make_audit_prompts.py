"""Generate ``audit_eval.jsonl`` and ``audit_train.jsonl``: word problems with planted near
duplicates, a templated family, a paraphrase and items leaked into the training set.

The eval set holds: a problem and three edited copies of it (a synonym, its clauses swapped,
another name), the same problem with other numbers (one template), a paraphrase of another
problem, and distinct problems. The training set holds an edited copy of two eval items, an
instance of the eval set's template with other numbers, and unrelated problems. Deterministic:
rerunning gives the same files.
"""

from __future__ import annotations

import json
from pathlib import Path

EVAL = [
    (
        "pencils",
        "Ravi buys 12 pencils at the school shop, and each pencil costs 15 cents. "
        "How many cents does Ravi pay in total?",
        180,
    ),
    (
        "pencils-synonym",
        "Ravi purchases 12 pencils at the school shop, and each pencil costs 15 "
        "cents. How many cents does Ravi pay in total?",
        180,
    ),
    (
        "pencils-reordered",
        "Each pencil costs 15 cents, and Ravi buys 12 pencils at the school "
        "shop. How many cents does Ravi pay in total?",
        180,
    ),
    (
        "pencils-renamed",
        "Sofia buys 12 pencils at the school shop, and each pencil costs 15 "
        "cents. How many cents does Sofia pay in total?",
        180,
    ),
    (
        "pencils-20x9",
        "Ravi buys 20 pencils at the school shop, and each pencil costs 9 cents. "
        "How many cents does Ravi pay in total?",
        180,
    ),
    (
        "pencils-7x30",
        "Ravi buys 7 pencils at the school shop, and each pencil costs 30 cents. "
        "How many cents does Ravi pay in total?",
        210,
    ),
    (
        "jam",
        "Lena fills 8 jars with homemade jam, and every jar holds 250 millilitres. "
        "How many millilitres of jam does Lena make?",
        2000,
    ),
    (
        "jam-paraphrase",
        "Making homemade jam, Lena ends up with 8 jars of 250 millilitres "
        "apiece. What volume of jam is that, in millilitres?",
        2000,
    ),
    (
        "goats",
        "Tomas feeds 6 goats on the farm, and every goat eats 3 kilograms of hay a day. "
        "How much hay does Tomas need each day?",
        18,
    ),
    (
        "goats-other-question",
        "Tomas feeds 6 goats on the farm, and every goat eats 3 kilograms of hay a "
        "day. How many kilograms of hay do 2 goats eat in 5 days?",
        30,
    ),
    (
        "laps",
        "Amara rides 14 laps around the park, and each lap is 400 metres long. "
        "How far does Amara ride around the park?",
        5600,
    ),
    (
        "crates",
        "Kenji stacks 9 crates in the warehouse, and each crate weighs 21 kilograms. "
        "What is the total weight that Kenji stacks?",
        189,
    ),
]
TRAIN = [
    (
        "t-laps",
        "Amara cycles 14 laps around the park, and each lap is 400 metres long. "
        "How far does Amara ride around the park?",
    ),
    (
        "t-crates",
        "Each crate weighs 21 kilograms, and Kenji stacks 9 crates in the warehouse. "
        "What is the total weight that Kenji stacks?",
    ),
    (
        "t-pencils",
        "Ravi buys 40 pencils at the school shop, and each pencil costs 5 cents. "
        "How many cents does Ravi pay in total?",
    ),
    (
        "t-ribbon",
        "Maeve cuts 30 metres of ribbon for the parcels, and every parcel uses 2 "
        "metres. How many parcels can Maeve wrap?",
    ),
    (
        "t-tea",
        "Dario pours 11 cups of tea for the guests, and each cup takes 200 millilitres. "
        "How much tea does Dario pour?",
    ),
]


def main() -> None:
    here = Path(__file__).parent
    rows = [{"id": i, "prompt": p, "reference": str(r)} for i, p, r in EVAL]
    (here / "audit_eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    train = [{"id": i, "prompt": p} for i, p in TRAIN]
    (here / "audit_train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in train))
    print(f"wrote {len(rows)} eval and {len(train)} training prompts to {here}")


if __name__ == "__main__":
    main()
