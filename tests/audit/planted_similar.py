"""Planted near copies, templates and negatives, so the similarity checks' precision and recall
can be measured by kind.

Every base problem comes as: the problem itself; a one-word synonym (``syn``); its two clauses
swapped (``reorder``); another person's name (``name``); all three edits at once (``mixed``); and
other numbers (``numbers``, twice). The first five are one item asked again (duplicates); the
numbers variants are the same template with other values (templated). Two kinds of negatives:
every other base problem (another topic), and the same setup with a different question
(``other_question``), which shares most of its words and still is not the same item. Some base
problems also come in other words (``paraphrase``), for the semantic pass.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# (setup, condition, question, (word, synonym)); {n} is the person, {a} and {b} the numbers
BASES = [
    (
        "{n} buys {a} pencils at the school shop",
        "each pencil costs {b} cents",
        "How many cents does {n} pay in total",
        ("buys", "purchases"),
        "How many pencils does {n} have left after giving away two",
    ),
    (
        "{n} walks {a} kilometres to the lake every morning",
        "the walk back takes {b} minutes longer",
        "How far does {n} walk in a full week",
        ("walks", "hikes"),
        "How long does the walk back take if the lake is farther",
    ),
    (
        "{n} bakes {a} loaves of rye bread on Friday",
        "every loaf needs {b} grams of flour",
        "How much flour does {n} use for the loaves",
        ("bakes", "makes"),
        "How many loaves does {n} sell before noon",
    ),
    (
        "{n} plants {a} rows of tomatoes in the garden",
        "each row holds {b} seedlings",
        "How many seedlings does {n} plant altogether",
        ("plants", "sows"),
        "How many rows are left empty in the garden",
    ),
    (
        "{n} reads {a} pages of a novel each evening",
        "the novel has {b} chapters of equal length",
        "After how many evenings does {n} finish the novel",
        ("reads", "studies"),
        "How many pages long is a single chapter",
    ),
    (
        "{n} saves {a} dollars from every weekly paycheck",
        "the bike costs {b} dollars",
        "How many weeks until {n} can afford the bike",
        ("saves", "keeps"),
        "How much does {n} spend on groceries each week",
    ),
    (
        "{n} fills {a} jars with homemade jam",
        "every jar holds {b} millilitres",
        "How many millilitres of jam does {n} make",
        ("fills", "packs"),
        "How many jars break on the way to the market",
    ),
    (
        "{n} swims {a} lengths of the pool on Monday",
        "one length is {b} metres",
        "What distance does {n} swim on Monday",
        ("swims", "completes"),
        "How many lengths does {n} swim on Tuesday",
    ),
    (
        "{n} stacks {a} crates in the warehouse",
        "each crate weighs {b} kilograms",
        "What is the total weight that {n} stacks",
        ("stacks", "piles"),
        "How tall is the stack of crates in centimetres",
    ),
    (
        "{n} paints {a} fence panels before lunch",
        "a tin of paint covers {b} panels",
        "How many tins does {n} open for the fence",
        ("paints", "coats"),
        "How long does {n} take to paint one panel",
    ),
    (
        "{n} sorts {a} letters at the post office",
        "each bag takes {b} letters",
        "How many bags does {n} fill with letters",
        ("sorts", "arranges"),
        "How many letters are returned to their senders",
    ),
    (
        "{n} collects {a} shells on the beach",
        "she gives {b} shells to each cousin",
        "How many cousins get shells from {n}",
        ("collects", "gathers"),
        "How many shells are broken or chipped",
    ),
    (
        "{n} trains for {a} days before the race",
        "each session lasts {b} minutes",
        "How many minutes does {n} train before the race",
        ("trains", "practises"),
        "How many days of rest does {n} take",
    ),
    (
        "{n} cuts {a} metres of ribbon for the parcels",
        "every parcel uses {b} metres",
        "How many parcels can {n} wrap",
        ("cuts", "trims"),
        "What colour ribbon does {n} prefer for parcels",
    ),
    (
        "{n} feeds {a} goats on the farm",
        "every goat eats {b} kilograms of hay a day",
        "How much hay does {n} need each day",
        ("feeds", "tends"),
        "How many goats are born on the farm in spring",
    ),
    (
        "{n} prints {a} posters for the concert",
        "a pack of paper holds {b} sheets",
        "How many packs does {n} use",
        ("prints", "produces"),
        "How many people come to the concert",
    ),
    (
        "{n} rides {a} laps around the park",
        "each lap is {b} metres long",
        "How far does {n} ride around the park",
        ("rides", "cycles"),
        "How many laps does {n} ride on the weekend",
    ),
    (
        "{n} picks {a} baskets of apples at the orchard",
        "each basket holds {b} apples",
        "How many apples does {n} pick",
        ("picks", "harvests"),
        "How many baskets of pears are in the orchard",
    ),
    (
        "{n} pours {a} cups of tea for the guests",
        "each cup takes {b} millilitres",
        "How much tea does {n} pour",
        ("pours", "serves"),
        "How many guests arrive late for tea",
    ),
    (
        "{n} builds {a} birdhouses in the workshop",
        "each birdhouse needs {b} nails",
        "How many nails does {n} use",
        ("builds", "assembles"),
        "How many birds nest in the birdhouses",
    ),
    (
        "{n} types {a} words per minute at the office",
        "the report is {b} words long",
        "How many minutes does {n} need for the report",
        ("types", "writes"),
        "How many reports does the office file each month",
    ),
    (
        "{n} loads {a} boxes onto the truck",
        "the truck carries {b} boxes per trip",
        "How many trips does {n} make",
        ("loads", "lifts"),
        "How much fuel does the truck burn on each trip",
    ),
    (
        "{n} knits {a} scarves for the winter fair",
        "each scarf takes {b} balls of wool",
        "How many balls of wool does {n} buy",
        ("knits", "weaves"),
        "How many scarves are sold at the winter fair",
    ),
    (
        "{n} waters {a} pots on the balcony",
        "each pot needs {b} litres a week",
        "How much water does {n} use each week",
        ("waters", "sprinkles"),
        "How many pots have flowers on the balcony",
    ),
]
# the same question in other words, for the semantic pass (base index -> prompt)
PARAPHRASES = {
    0: "At the school shop, {n} gets {a} pencils priced at {b} cents apiece. "
    "What is the bill in cents?",
    1: "Every morning {n} covers {a} km on foot to reach the lake, "
    "and returning takes {b} extra minutes. "
    "What distance is walked over seven days?",
    2: "On Friday {n} makes {a} rye loaves, using {b} g of flour for each one. "
    "What amount of flour goes into them?",
    4: "Each evening {n} gets through {a} pages of a book split into {b} equally long chapters. "
    "How many evenings will the book take?",
    5: "Out of each weekly wage {n} puts aside {a} dollars towards a {b} dollar bicycle. "
    "When will there be enough money for it?",
    7: "On Monday {n} does {a} lengths in a pool whose length is {b} metres. "
    "How far is that in total?",
    9: "Before lunch {n} has {a} panels of fence to paint, and one tin is enough for {b} panels. "
    "How many tins are needed?",
    12: "Ahead of the race {n} has {a} days of training with sessions of {b} minutes. "
    "What is the total training time in minutes?",
    14: "On the farm {n} looks after {a} goats, each eating {b} kg of hay daily. "
    "What is the daily hay requirement?",
    17: "At the orchard {n} fills {a} baskets, and every basket takes {b} apples. "
    "What is the number of apples picked?",
    19: "In the workshop {n} puts together {a} birdhouses, using {b} nails for every one. "
    "What is the total count of nails?",
    22: "For the winter fair {n} makes {a} scarves, and one scarf uses {b} balls of wool. "
    "How much wool is bought, in balls?",
}
NAMES = ["Ravi", "Sofia", "Tomas", "Amara", "Lena", "Kenji", "Priya", "Olek", "Maeve", "Dario"]
DUPLICATE_KINDS = ("syn", "reorder", "name", "mixed")


@dataclass(frozen=True)
class Planted:
    """One planted prompt: which base it comes from and how it was edited."""

    id: str
    prompt: str
    base: int
    kind: str  # base, syn, reorder, name, mixed, numbers, other_question
    numbers: tuple[int, int]


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:]


def _render(base: int, kind: str, name: str, a: int, b: int) -> str:
    setup, cond, question, (word, synonym), other = BASES[base]
    setup, cond = setup.format(n=name, a=a), cond.format(a=a, b=b)
    question, other = question.format(n=name), other.format(n=name)
    if kind in ("syn", "mixed"):
        setup = setup.replace(f" {word} ", f" {synonym} ", 1)
    if kind == "other_question":
        question = other
    if kind == "paraphrase":
        return PARAPHRASES[base].format(n=name, a=a, b=b)
    if kind in ("reorder", "mixed"):
        return f"{_sentence(cond)}, and {setup}. {question}?"
    return f"{_sentence(setup)}, and {cond}. {question}?"


def build(seed: int = 3, *, paraphrases: bool = False) -> list[Planted]:
    """The planted prompts, shuffled; with the paraphrases when asked."""
    rng = random.Random(seed)
    out: list[Planted] = []
    for base in range(len(BASES)):
        name, other_name = rng.sample(NAMES, 2)
        a, b = rng.randint(3, 60), rng.randint(2, 40)
        kinds = ["base", "syn", "reorder", "name", "mixed", "other_question"]
        if paraphrases and base in PARAPHRASES:
            kinds.append("paraphrase")
        for kind in kinds:
            who = other_name if kind in ("name", "mixed") else name
            out.append(
                Planted(f"b{base}-{kind}", _render(base, kind, who, a, b), base, kind, (a, b))
            )
        for k in range(2):
            a2, b2 = a + 7 * (k + 1), b + 3 * (k + 1)
            out.append(
                Planted(
                    f"b{base}-numbers{k}",
                    _render(base, "base", name, a2, b2),
                    base,
                    "numbers",
                    (a2, b2),
                )
            )
    rng.shuffle(out)
    return out


def duplicate_truth(items: list[Planted]) -> set[frozenset[str]]:
    """Pairs that are one item asked twice: same base, same numbers, not the other question."""
    dup = [p for p in items if p.kind in ("base", *DUPLICATE_KINDS)]
    return {
        frozenset((p.id, q.id))
        for p in dup
        for q in dup
        if p.id < q.id and p.base == q.base and p.numbers == q.numbers
    }


def template_truth(items: list[Planted]) -> set[frozenset[str]]:
    """Pairs of one template with other numbers (a base-like item and a numbers variant)."""
    like = [p for p in items if p.kind != "other_question"]
    return {
        frozenset((p.id, q.id))
        for p in like
        for q in like
        if p.id < q.id and p.base == q.base and p.numbers != q.numbers
    }
