"""Precision and recall of the audit's similarity checks, by kind of edit, printed as a table.

    python -m tests.audit.measure_similar                 # planted prompts (lexical)
    python -m tests.audit.measure_similar --semantic      # and the paraphrase pass
    python -m tests.audit.measure_similar --data DIR      # and edits planted into real prompts

The planted prompts are ``planted_similar``'s word problems. The real prompts are the 805
AlpacaEval instructions, the 100 MATH problems and the 164 HumanEval prompts of the reference
data (``DIR``, by default ``tests/data/reference``): nobody wrote them for this
check, so the pairs found among them are what the audit reports on a real set, and the edits
planted into them (a synonym, two sentences swapped, another name, other numbers) show what it
catches in prompts of every length and shape. ``test_similar`` asserts floors on the same
measurements.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.audit import planted_similar as planted
from tests.reference import REFERENCE, read_jsonl
from truegrade.audit import AuditReport, DuplicatePair, TemplateFamily, audit_items
from truegrade.audit._similar import find_leaks, find_near_copies
from truegrade.core import load_grader

THRESHOLD = 0.75
PREAMBLE = "Solve the following problem carefully and give your final answer in a box at the end. "
DATA = REFERENCE


def closure(pairs: Iterable[DuplicatePair], ids: Iterable[str]) -> set[frozenset[str]]:
    """Every pair of items linked through reported pairs (n copies are reported as n - 1)."""
    parent = {i: i for i in ids}

    def root(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for p in pairs:
        parent[root(p.a)] = root(p.b)
    groups: dict[str, list[str]] = {}
    for i in parent:
        groups.setdefault(root(i), []).append(i)
    return {frozenset(c) for g in groups.values() for c in itertools.combinations(g, 2)}


def family_pairs(families: list[TemplateFamily], exclude: set[frozenset[str]]) -> set[frozenset]:
    """Pairs of items in one templated family, leaving out those that are near duplicates."""
    return {
        frozenset(c)
        for f in families
        for c in itertools.combinations(f.members, 2)
        if frozenset(c) not in exclude
    }


def rates(found: set, truth: set) -> tuple[float, float]:
    """Precision and recall of ``found`` against ``truth``."""
    precision = len(found & truth) / len(found) if found else 1.0
    return precision, len(found & truth) / len(truth) if truth else 1.0


def measure(items: list[planted.Planted], prefix: str = "", threshold: float = THRESHOLD) -> dict:
    """Near duplicates and templated families among planted prompts, against the truth."""
    texts = {p.id: prefix + p.prompt for p in items}
    kind = {p.id: p.kind for p in items}
    pairs, families = find_near_copies(texts, threshold)
    dup = closure(pairs, texts)
    dup_truth, template_truth = planted.duplicate_truth(items), planted.template_truth(items)
    out: dict[str, Any] = {"duplicate": rates(dup, dup_truth)}
    for k in planted.DUPLICATE_KINDS:
        want = {t for t in dup_truth if {kind[i] for i in t} == {"base", k}}
        out[k] = rates(dup & want, want)[1]
    out["templated"] = rates(family_pairs(families, dup), template_truth)
    out["numbers as duplicates"] = sum(
        1 for t in dup if "numbers" in {kind[i] for i in t} and t not in dup_truth
    )
    out["negatives flagged"] = len(
        {t for t in dup if "other_question" in {kind[i] for i in t}}
        | {t for t in dup if len({i.split("-")[0] for i in t}) > 1}
    )
    return out


def measure_leakage(items: list[planted.Planted], threshold: float = THRESHOLD) -> dict:
    """``contaminated`` and ``template_in_training`` with the base prompts as the training set."""
    training = {f"train-{p.id}": p.prompt for p in items if p.kind == "base"}
    evals = {p.id: p.prompt for p in items if p.kind != "base"}
    kind = {p.id: p.kind for p in items}
    leaks = {leak.item: leak for leak in find_leaks(evals, training, threshold)}
    copies = {i for i, leak in leaks.items() if leak.match == "duplicate"}
    templates = {i for i, leak in leaks.items() if leak.match == "template"}
    want_copies = {i for i in evals if kind[i] in planted.DUPLICATE_KINDS}
    out: dict[str, Any] = {
        "contaminated": rates(copies, want_copies),
        "template_in_training": rates(templates, {i for i in evals if kind[i] == "numbers"}),
        "other question flagged": sum(1 for i in leaks if kind[i] == "other_question"),
        "nearest is its own base": all(
            leaks[i].nearest == "train-" + i.split("-")[0] + "-base" for i in copies & want_copies
        ),
        "leaks": leaks,
    }
    for k in planted.DUPLICATE_KINDS:
        out[k] = rates(copies, {i for i in want_copies if kind[i] == k})[1]
    return out


def semantic_report(items: list[planted.Planted]) -> AuditReport:
    """The duplicates check with the paraphrase pass (needs the model)."""
    rows = [{"id": p.id, "prompt": p.prompt, "reference": "1"} for p in items]
    return audit_items(load_grader("math"), rows, checks=["duplicates"], semantic=True)


def measure_semantic(items: list[planted.Planted], report: AuditReport) -> dict:
    """The paraphrase pairs of ``report`` (on ``items``, with paraphrases) against the truth."""
    kind = {p.id: p.kind for p in items}
    base_of = {p.id: p.base for p in items}
    found = {frozenset((p.a, p.b)) for p in report.duplicate_pairs if p.method == "semantic"}
    # the truth: a paraphrase is the same item as its base and the base's duplicates
    truth = {
        frozenset((p.id, q.id))
        for p in items
        for q in items
        if p.kind == "paraphrase"
        and q.kind in ("base", *planted.DUPLICATE_KINDS)
        and p.base == q.base
    }
    correct = found & truth
    paraphrases = {p.id for p in items if p.kind == "paraphrase"}
    caught = {i for pair in correct for i in pair if i in paraphrases}
    wrong = found - truth
    hard = {pair for pair in wrong if "other_question" in {kind[i] for i in pair}}
    return {
        "found": found,
        "pair precision": len(correct) / len(found) if found else 1.0,
        "pair precision without the other questions": len(correct) / max(1, len(found - hard)),
        "item recall": len(caught) / len(paraphrases),
        "caught": caught,
        "other questions flagged": {
            i for pair in hard for i in pair if kind[i] == "other_question"
        },
        "pairs across topics": sum(1 for pair in wrong if len({base_of[i] for i in pair}) > 1),
    }


# --- edits planted into real prompts -------------------------------------------------------

# one word for another that leaves the request as it was; the first found in a prompt is swapped
# (prompts are put in length classes by their own words)
SYNONYMS = {
    "write": "compose",
    "explain": "describe",
    "give": "provide",
    "find": "determine",
    "make": "create",
    "show": "display",
    "help": "assist",
    "use": "employ",
    "best": "finest",
    "good": "great",
    "big": "large",
    "small": "little",
    "important": "significant",
    "different": "distinct",
    "simple": "easy",
    "suggest": "recommend",
    "compute": "calculate",
    "calculate": "compute",
    "start": "begin",
    "choose": "select",
    "buy": "purchase",
    "need": "require",
    "want": "wish",
    "example": "instance",
    "story": "tale",
    "famous": "renowned",
    "many": "numerous",
    "often": "frequently",
    "evaluate": "compute",
    "simplify": "reduce",
    "number": "integer",
    "value": "amount",
    "list": "enumerate",
    "tell": "inform",
    "some": "several",
    "what": "which",
}
_WORD = re.compile(r"[A-Za-z]+")
_SENTENCES = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
_INTEGER = re.compile(r"(?<![\d.])\d+(?!\.?\d)")
# people's first names: another person in the same problem (a topic or a place is not renamed)
FIRST_NAMES = frozenset(
    [
        "Alice",
        "Amy",
        "Ann",
        "Anna",
        "Ben",
        "Betty",
        "Bill",
        "Bob",
        "Carl",
        "Charlie",
        "Chris",
        "Dan",
        "David",
        "Emily",
        "Emma",
        "Eric",
        "Frank",
        "George",
        "Henry",
        "Jack",
        "Jake",
        "James",
        "Jane",
        "Jen",
        "Jenny",
        "Jim",
        "Joe",
        "John",
        "Josh",
        "Juan",
        "Kate",
        "Kevin",
        "Kim",
        "Laura",
        "Lily",
        "Linda",
        "Lisa",
        "Maria",
        "Mark",
        "Mary",
        "Max",
        "Mike",
        "Nancy",
        "Nick",
        "Paul",
        "Pete",
        "Peter",
        "Rachel",
        "Sam",
        "Sandy",
        "Sarah",
        "Steve",
        "Susan",
        "Tim",
        "Tom",
        "Tony",
    ]
)


@dataclass(frozen=True)
class Variant:
    """A real prompt after one edit, and what the edit should be reported as."""

    id: str
    source: str
    kind: str  # syn, reorder, name, numbers
    prompt: str
    expect: str  # "duplicate" or "templated"


def _synonym(text: str) -> str | None:
    """The first word with a synonym swapped; a capitalised word only if it opens the prompt
    (``List`` in ``from typing import List`` is a name in code, not a word)."""
    for match in _WORD.finditer(text):
        word = match.group()
        other = SYNONYMS.get(word.lower())
        if other is not None and (word.islower() or not text[: match.start()].strip()):
            other = other.capitalize() if word[0].isupper() else other
            return text[: match.start()] + other + text[match.end() :]
    return None


def _reorder(text: str) -> str | None:
    """The first two sentences swapped (both must end as sentences do)."""
    parts = _SENTENCES.split(text.strip())
    if len(parts) < 2 or parts[1][-1] not in ".?!":
        return None
    return " ".join([parts[1], parts[0], *parts[2:]])


def _rename(text: str) -> str | None:
    names = [w for w in _WORD.findall(text) if w in FIRST_NAMES]
    if not names:
        return None
    return re.sub(rf"\b{names[0]}\b", "Zelda", text)


def _renumber(text: str) -> str | None:
    if not _INTEGER.search(text):
        return None
    return _INTEGER.sub(lambda m: str(int(m.group()) + 3), text)


def real_prompts(data: Path) -> dict[str, dict[str, str]]:
    """The AlpacaEval instructions, the MATH problems and the HumanEval prompts, by id."""
    with gzip.open(data / "judge" / "alpaca_eval" / "instructions.json.gz", "rt") as handle:
        alpaca = json.load(handle)
    math = [row["question"] for row in read_jsonl(data / "math" / "qwen25_math_cot_100.jsonl.gz")]
    with gzip.open(data / "code" / "HumanEval.jsonl.gz", "rt") as handle:
        humaneval = [json.loads(line) for line in handle]
    return {
        "alpaca": {f"alpaca{k}": text for k, text in enumerate(alpaca)},
        "math": {f"math{k}": text for k, text in enumerate(math)},
        "humaneval": {row["task_id"]: row["prompt"] for row in humaneval},
    }


def variants(prompts: dict[str, str], seed: int = 7) -> list[Variant]:
    """One edit of each kind that applies, for a sample of the prompts."""
    rng = random.Random(seed)
    out = []
    for key, text in prompts.items():
        if rng.random() >= 0.5:  # half of them, so most prompts have no copy
            continue
        has_numbers = bool(re.search(r"\d", text))
        for kind, edit in (
            ("syn", _synonym),
            ("reorder", _reorder),
            ("name", _rename),
            ("numbers", _renumber),
        ):
            edited = edit(text)
            if edited is None or edited == text:
                continue
            # another name is another question unless numbers pin the question down (the rule)
            templated = kind == "numbers" or (kind == "name" and not has_numbers)
            out.append(
                Variant(
                    f"{key}~{kind}", key, kind, edited, "templated" if templated else "duplicate"
                )
            )
    return out


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def measure_real(prompts: dict[str, str], threshold: float = THRESHOLD) -> dict:
    """What the audit finds among real prompts, and among them with planted edits."""
    original_pairs, original_families = find_near_copies(prompts, threshold)
    planted_variants = variants(prompts)
    texts = dict(prompts) | {v.id: v.prompt for v in planted_variants}
    pairs, families = find_near_copies(texts, threshold)
    dup = closure(pairs, texts)
    in_family = {frozenset(c) for f in families for c in itertools.combinations(f.members, 2)}
    source = {v.id: v.source for v in planted_variants} | {k: k for k in prompts}
    expect = {v.id: v.expect for v in planted_variants}
    # the truth: an edit is a copy of its source, and so are two copying edits of one source
    dup_truth = {
        frozenset((a, b))
        for a, b in itertools.combinations(texts, 2)
        if source[a] == source[b]
        and expect.get(a, "duplicate") == "duplicate"
        and expect.get(b, "duplicate") == "duplicate"
    }
    planted_dup = {p for p in dup if any(i in expect for i in p)}
    out: dict[str, Any] = {
        "prompts": len(prompts),
        "pairs among the originals": original_pairs,
        "families among the originals": original_families,
        "variants": len(planted_variants),
        "duplicate precision": rates(planted_dup, dup_truth)[0],
        "false pairs": sorted(tuple(sorted(p)) for p in planted_dup - dup_truth),
    }
    # leakage: the edits as the training set, the real prompts as the eval set
    training = {v.id: v.prompt for v in planted_variants}
    leaks = {leak.item: leak for leak in find_leaks(prompts, training, threshold)}
    copied = {v.source for v in planted_variants if v.expect == "duplicate"}
    contaminated = {i for i, leak in leaks.items() if leak.match == "duplicate"}
    out["contaminated"] = rates(contaminated, copied)
    # a template match is right when the training prompt is an edit of the item or of another
    # member of the item's own templated family (AlpacaEval's recipe requests are one template)
    family = {m: k for k, f in enumerate(original_families) for m in f.members}
    templates = {i for i, leak in leaks.items() if leak.match == "template"}
    right = {
        i
        for i in templates
        if source[leaks[i].nearest] == i
        or family.get(source[leaks[i].nearest], -1) == family.get(i)
    }
    want = {v.source for v in planted_variants if v.expect == "templated"} - contaminated
    out["template_in_training"] = (
        len(right) / len(templates) if templates else 1.0,
        len(want & templates) / len(want) if want else 1.0,
    )
    out["nearest is an edit of the item"] = all(
        source[leaks[i].nearest] == i for i in contaminated & copied
    )
    for kind in ("syn", "reorder", "name", "numbers"):
        mine = [v for v in planted_variants if v.kind == kind]
        if not mine:
            continue
        for expected in ("duplicate", "templated"):
            group = [v for v in mine if v.expect == expected]
            if not group:
                continue
            hit = [
                v
                for v in group
                if (frozenset((v.id, v.source)) in dup) == (expected == "duplicate")
                and (expected == "duplicate" or frozenset((v.id, v.source)) in in_family)
            ]
            out[f"{kind} -> {expected}"] = (len(hit), len(group))
            if kind == "syn":
                for label, low, high in (("< 8 words", 0, 8), ("8-19", 8, 20), ("20+", 20, 10**9)):
                    sized = [v for v in group if low <= _words(prompts[v.source]) < high]
                    sized_hit = [v for v in hit if low <= _words(prompts[v.source]) < high]
                    out[f"syn, {label}"] = (len(sized_hit), len(sized))
    return out


def _pct(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.2f} / {pair[1]:.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--semantic", action="store_true", help="also run the paraphrase pass")
    parser.add_argument("--data", type=Path, default=None, help="the reference data directory")
    args = parser.parse_args(argv)
    rows = [("what", "precision / recall")]
    lexical = measure(planted.build())
    rows.append(("near duplicates (pairs)", _pct(lexical["duplicate"])))
    for k in planted.DUPLICATE_KINDS:
        rows.append((f"  recall, {k}", f"{lexical[k]:.2f}"))
    rows.append(("templated (pairs in one family)", _pct(lexical["templated"])))
    rows.append(("  other numbers reported as duplicates", str(lexical["numbers as duplicates"])))
    rows.append(("  negatives reported as duplicates", str(lexical["negatives flagged"])))
    preamble = measure(planted.build(seed=5), prefix=PREAMBLE)
    rows.append(("near duplicates, shared preamble", _pct(preamble["duplicate"])))
    rows.append(("templated, shared preamble", _pct(preamble["templated"])))
    leakage = measure_leakage(planted.build())
    rows.append(("contaminated", _pct(leakage["contaminated"])))
    for k in planted.DUPLICATE_KINDS:
        rows.append((f"  recall, {k}", f"{leakage[k]:.2f}"))
    rows.append(("template_in_training", _pct(leakage["template_in_training"])))
    if args.semantic:
        items = planted.build(paraphrases=True)
        semantic = measure_semantic(items, semantic_report(items))
        rows.append(
            (
                "paraphrase (pair precision / item recall)",
                f"{semantic['pair precision']:.2f} / {semantic['item recall']:.2f}",
            )
        )
        rows.append(
            (
                "  pair precision without same-setup questions",
                f"{semantic['pair precision without the other questions']:.2f}",
            )
        )
        rows.append(
            ("  same-setup questions flagged", str(len(semantic["other questions flagged"])))
        )
    data = args.data or DATA
    if args.data is not None or data.is_dir():
        for name, prompts in real_prompts(data).items():
            real = measure_real(prompts)
            families = real["families among the originals"]
            rows.append(
                (
                    f"{name}: {real['prompts']} real prompts",
                    f"{len(real['pairs among the originals'])} near-duplicate pairs, "
                    f"{len(families)} families ({sum(len(f.members) for f in families)} items)",
                )
            )
            rows.append(
                (
                    f"  planted edits: {real['variants']}",
                    f"precision {real['duplicate precision']:.2f}",
                )
            )
            rows.append(("  contaminated (the edits as training set)", _pct(real["contaminated"])))
            rows.append(("  template_in_training", _pct(real["template_in_training"])))
            for key, value in real.items():
                if ("->" in key or key.startswith("syn,")) and value[1]:
                    rows.append(
                        (f"  {key}", f"{value[0]} of {value[1]} ({value[0] / value[1]:.2f})")
                    )
            for a, b in real["false pairs"][:5]:
                rows.append(("  false pair", f"{a} / {b}"))
            for family in families:
                rows.append(("  family", f"{len(family.members)}: {family.template[:70]}"))
    width = max(len(r[0]) for r in rows)
    for what, value in rows:
        print(f"{what:<{width}}  {value}")


if __name__ == "__main__":
    main()
