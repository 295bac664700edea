"""A planted dataset for the audit: every defect is put there on purpose, so each flag's
precision and recall can be measured. Also a grader whose verdicts are coin flips on some items."""

from __future__ import annotations

import random
import re

CONTEXTS = [
    "a baker packs muffins into boxes for the morning market",
    "a cyclist records distances ridden over several weekends",
    "a gardener plants tulip bulbs along the northern fence",
    "a librarian shelves returned novels after the holiday",
    "a ferry carries passengers between two small islands",
    "a chemist dilutes a stock solution for the laboratory class",
    "a farmer divides a field into equal rectangular plots",
    "a pilot logs flight hours across a busy training month",
    "a carpenter cuts planks from long boards of cedar",
    "a teacher hands out pencils to pupils in three classrooms",
    "a beekeeper harvests honey from hives on the hillside",
    "a courier delivers parcels along a coastal route",
    "a potter fires bowls in a kiln over the weekend",
    "an astronomer counts meteors during a clear night",
    "a tailor sews buttons onto winter coats",
    "a mechanic rotates tyres on a fleet of vans",
    "a chef portions soup into containers for the freezer",
    "a referee tracks minutes of added time in a tournament",
    "a sailor coils rope on the deck of a schooner",
    "a miner weighs ore samples from a new seam",
]
MODELS = ["strong", "good", "fair", "weak"]


def _prompt(i: int, a: int, b: int, suffix: str = "") -> str:
    return f"In this problem {CONTEXTS[i]}. What is {a} plus {b}?{suffix}"


def build() -> tuple[list[dict], dict[str, set[str]]]:
    """Rows (with responses from four models) and the planted truth: flag -> item ids."""
    rng = random.Random(7)
    rows: list[dict] = []
    truth: dict[str, set[str]] = {
        k: set()
        for k in ("suspect_key", "reference", "near_duplicate", "answer_leak", "low_discrimination")
    }
    for i in range(len(CONTEXTS)):
        a, b = rng.randint(100, 900), rng.randint(100, 900)
        item = f"item{i}"
        key = str(a + b)
        prompt = _prompt(i, a, b)
        if i in (0, 1, 2):  # wrong key: every model answers the true sum
            key = str(a + b + 1)
            truth["suspect_key"].add(item)
        if i in (3, 4):  # a key the grader cannot read (so every answer disagrees with it too)
            key = "\\frac{" + str(a) + "}{"
            truth["reference"].add(item)
            truth["suspect_key"].add(item)
        if i in (5, 6):  # the answer is in the prompt
            prompt = prompt + f" (Hint: it is {a + b}.)"
            truth["answer_leak"].add(item)
        for m, model in enumerate(MODELS):
            # strong models get items right, weak ones wrong; items 8 and 9 invert that
            correct = m < 2 if i not in (8, 9) else m >= 2
            if i in (0, 1, 2, 3, 4):
                correct = True
            answer = a + b if correct else a + b + 10 + m
            rows.append(
                {
                    "id": f"{item}-{model}",
                    "group": item,
                    "prompt": prompt,
                    "reference": key,
                    "response": f"The sum is \\boxed{{{answer}}}.",
                    "metadata": {"model": model},
                }
            )
        if i in (8, 9):
            truth["low_discrimination"].add(item)
    # near duplicates: item 10's prompt copied with one word changed, as a new item
    original = next(r for r in rows if r["group"] == "item10")
    copy = dict(
        original,
        id="item10b-strong",
        group="item10b",
        prompt=original["prompt"].replace("What is", "What's"),
    )
    rows.append(copy)
    truth["near_duplicate"] |= {"item10", "item10b"}
    return rows, truth


_GRADED: dict[str, int] = {}


def coin_flips(prompts, completions, **kwargs):
    """Verdicts that change from one grading to the next on prompts marked [flaky] (pass, fail,
    pass... in each process, so the reruns of an item always disagree, however they are split
    between calls and workers); 1.0 otherwise."""
    out = []
    for p in prompts:
        if "[flaky]" in p:
            _GRADED[p] = _GRADED.get(p, -1) + 1
            out.append(float(_GRADED[p] % 2 == 0))
        else:
            out.append(1.0)
    return out


def flaky_rows() -> tuple[list[dict], set[str]]:
    rows = []
    for i in range(12):
        mark = " [flaky]" if i < 4 else ""
        rows.append(
            {
                "id": f"f{i}",
                "prompt": f"Question {i} about {CONTEXTS[i]}{mark}",
                "reference": str(i),
                "response": f"\\boxed{{{i}}}",
            }
        )
    return rows, {f"f{i}" for i in range(4)}


def naive_exact(prompts, completions, reference, **kwargs):
    """Passes only when the last box holds exactly the reference string."""
    out = []
    for c, r in zip(completions, reference, strict=True):
        boxes = re.findall(r"\\boxed\{([^{}]*)\}", c)
        out.append(1.0 if boxes and boxes[-1].strip() == str(r).strip() else 0.0)
    return out


def solution_diff(prompts, completions, reference, canonical_solution, **kwargs):
    """A code grader that diffs the program against the canonical solution, line by line: the
    reference passes, a renamed or reformatted equal program fails."""
    out = []
    for c, solution in zip(completions, canonical_solution, strict=True):
        lines = [x.rstrip() for x in c.strip("`").splitlines() if x.strip()]
        want = [x.rstrip() for x in solution.splitlines() if x.strip()]
        out.append(1.0 if lines[-len(want) :] == want else 0.0)
    return out
