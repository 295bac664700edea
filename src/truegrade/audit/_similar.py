"""Near copies, templates and leakage between prompts, found by their words.

A character 5-gram Jaccard alone misses what duplicated items mostly are: one changed word costs
about ten grams, so a synonym in a 19-word prompt falls below 0.8, while two items of one template
that differ only by their numbers are pulled apart by every digit. So each prompt is reduced to
its words with numbers masked as ``<num>``, operators as ``<op>`` and names as ``<name>`` (its
*skeleton*), and the values (numbers with operators, names) are kept aside. Two prompts are
compared by the mean of two weighted Jaccards: of their skeletons' words (word order does not
count, so reordered clauses match) and of their skeletons' character 5-grams (so ``find`` and
``finds`` still overlap). What more than 5% of the prompts share, such as an instruction
preamble, weighs little.

What a match means depends on the values (the rule the audit documents):

* **near duplicate**: the skeletons match and so do the numbers and operators (as a multiset; in
  the same order when the skeletons are identical, so ``7 minus 3`` and ``3 minus 7`` differ, as
  do ``53 * 31`` and ``53 + 31``). A synonym, a dropped word, reordered clauses or, in a prompt
  with numbers, another person's name leave the item the same question with the same answer. In
  a prompt without numbers the names must agree too: "the capital of France" and "the capital of
  Spain" are two questions.
* **templated**: the skeletons match and the values differ: the same question with other
  numbers (or operators). Such families are reported with their members; they are not defects,
  and a deduplication that kept one of them would throw away the set's variation.

A name is a capitalised word inside a sentence, or one that starts a sentence and recurs inside
one; a name used only once, at the start of a sentence, counts as a word. A lexical comparison
cannot tell a synonym from an antonym: in a long enough prompt, "largest" for "smallest" is a
near duplicate too; every flag names the words that differ so that a reviewer can reject it.

Candidates come from MinHash LSH over the features of one prompt per skeleton (identical
skeletons are grouped first, so a 1,000-item template costs one entry), with features that most
prompts share left out of the hashes; each candidate pair is then scored exactly.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

__all__ = [
    "DuplicatePair",
    "Leak",
    "TemplateFamily",
    "Text",
    "Weights",
    "describe_edit",
    "find_leaks",
    "find_near_copies",
    "prepare",
    "same_item",
    "similarity",
]

# numbers, words, the symbols that change a question (``53 * 31`` is not ``53 + 31``), and the
# marks that end a sentence (they decide which capitalised words are names)
_TOKEN = re.compile(
    r"\d+(?:[.,]\d+)*|[^\W\d_]+|[-+*/^=<>%\u00d7\u00f7\u221a\u2211\u220f\u222b\u2264\u2265\u2260]|[.!?:;\n]"
)
_BREAK = frozenset(".!?:;\n")
_OPERATORS = frozenset("-+*/^=<>%\u00d7\u00f7\u221a\u2211\u220f\u222b\u2264\u2265\u2260")
_NUM, _OP, _NAME = "<num>", "<op>", "<name>"
_MINUS = "-"
_LSH_THRESHOLD = 0.35  # candidates only: every pair found is scored exactly afterwards
_MAX_CHARS = 20_000  # a prompt is compared by its beginning: a huge one costs no more than this
_COMMON_SHARE = 0.05  # a feature in more than this share of skeletons is left out of the hashes
_COMMON_FLOOR = 50  # ... once it is in more than this many
_PERMUTATIONS = 64
_COMMON_WORDS = 10  # a feature in this many prompts or fewer is never weighed down
_FLOOR_WEIGHT = 0.05  # the weight of a feature every prompt has


@dataclass(frozen=True)
class Text:
    """A prompt as the comparison sees it."""

    skeleton: tuple[str, ...]
    numbers: tuple[str, ...]  # and the operators between them, in order
    names: tuple[str, ...]
    words: frozenset[str] = field(repr=False)
    grams: frozenset[str] = field(repr=False)

    @property
    def template(self) -> str:
        return " ".join(self.skeleton)

    @property
    def has_numbers(self) -> bool:
        """Whether a number pins the question down (an operator alone, such as the slash of
        "plant/manufacturing", does not: then names must agree as in a prompt without numbers)."""
        return any(value[0].isdigit() for value in self.numbers)


def prepare(text: str) -> Text:
    """Mask numbers and names; keep them aside, in order (of the first ``_MAX_CHARS``)."""
    tokens: list[tuple[str, bool]] = []
    inside: set[str] = set()
    initial = True
    for token in _TOKEN.findall(text[:_MAX_CHARS]):
        if token in _BREAK:
            initial = True
            continue
        if not initial and _capitalised(token):
            inside.add(token)
        tokens.append((token, initial))
        initial = False
    skeleton: list[str] = []
    numbers: list[str] = []
    names: list[str] = []
    for k, (token, at_start) in enumerate(tokens):
        if token[0].isdigit():
            skeleton.append(_NUM)
            numbers.append(token.replace(",", ""))
        elif token in _OPERATORS:
            if token == _MINUS and not (_operand(tokens, k - 1) or _operand(tokens, k + 1)):
                continue  # a dash in prose, not a minus
            skeleton.append(_OP)
            numbers.append(token)
        elif _capitalised(token) and (not at_start or token in inside):
            skeleton.append(_NAME)
            names.append(token)
        else:
            skeleton.append(token.lower())
    flat = " ".join(skeleton)
    grams = frozenset(flat[i : i + 5] for i in range(max(1, len(flat) - 4)))
    return Text(tuple(skeleton), tuple(numbers), tuple(names), frozenset(skeleton), grams)


def _operand(tokens: list[tuple[str, bool]], k: int) -> bool:
    """A number or a one-letter variable: what a minus sign stands next to."""
    if not 0 <= k < len(tokens):
        return False
    token = tokens[k][0]
    return token[0].isdigit() or (len(token) == 1 and token.isalpha())


def _capitalised(token: str) -> bool:
    return len(token) > 1 and token[0].isupper() and token[1:].islower()


def same_item(a: Text, b: Text) -> bool:
    """Whether two prompts whose skeletons match ask the same question (see the module doc)."""
    if a.skeleton == b.skeleton:
        return a.numbers == b.numbers and (a.has_numbers or a.names == b.names)
    if sorted(a.numbers) != sorted(b.numbers):
        return False
    return a.has_numbers or sorted(a.names) == sorted(b.names)


def describe_edit(a: Text, b: Text) -> str:
    """What separates two matching prompts, in a few words, for a reviewer."""
    parts = []
    if sorted(a.numbers) != sorted(b.numbers):
        parts.append("other numbers")
    elif a.numbers != b.numbers and a.skeleton == b.skeleton:
        parts.append("numbers in another order")
    if sorted(a.names) != sorted(b.names):
        parts.append("other names")
    only_a, only_b = sorted(a.words - b.words), sorted(b.words - a.words)
    if only_a or only_b:
        parts.append(f"words '{' '.join(only_a[:3]) or '-'}' / '{' '.join(only_b[:3]) or '-'}'")
    elif a.skeleton != b.skeleton:
        parts.append("the same words in another order")
    return ", ".join(parts) or "the same words"


class Weights:
    """Weights of skeleton words and 5-grams: 1, except for what many prompts share (an
    instruction preamble, "how many"), which weighs less the more prompts have it, down to
    ``_FLOOR_WEIGHT`` for what all have. Rare features are not weighted up: on a handful of
    prompts every feature is rare, and one changed word would then outweigh the rest."""

    def __init__(self, texts: Iterable[Text]) -> None:
        counts: Counter[str] = Counter()
        n = 0
        for text in texts:
            counts.update(text.words)
            counts.update(text.grams)
            n += 1
        common = max(_COMMON_WORDS, _COMMON_SHARE * n)
        scale = math.log(n / common) if n > common else 1.0
        self.idf = {
            f: max(_FLOOR_WEIGHT, math.log(n / c) / scale) for f, c in counts.items() if c > common
        }
        self.default = 1.0

    def jaccard(self, a: frozenset[str], b: frozenset[str]) -> float:
        idf, default = self.idf, self.default
        union = sum(idf.get(w, default) for w in a | b)
        return sum(idf.get(w, default) for w in a & b) / union if union else 1.0


def similarity(a: Text, b: Text, weights: Weights) -> float:
    """Mean of the weighted Jaccards of the skeletons' words and of their 5-grams."""
    return (weights.jaccard(a.words, b.words) + weights.jaccard(a.grams, b.grams)) / 2


class DuplicatePair(BaseModel):
    """Two items that are one question asked twice."""

    a: str
    b: str
    similarity: float
    method: str  # "lexical" or "semantic"
    edit: str


class TemplateFamily(BaseModel):
    """Items that are one template filled with other values."""

    template: str
    members: list[str]


class Leak(BaseModel):
    """An eval item that a training item matches."""

    item: str
    nearest: str
    similarity: float
    method: str  # "lexical" or "semantic"
    match: str  # "duplicate" or "template"
    edit: str


@dataclass
class _Group:
    """Items with one skeleton."""

    text: Text
    members: list[tuple[str, Text]]
    _by_value: dict[bool, dict[tuple[str, ...], tuple[str, Text]]] = field(default_factory=dict)

    def by_value(self, ordered: bool) -> dict[tuple[str, ...], tuple[str, Text]]:
        """The first member with each value key (numbers, or names without numbers)."""
        if ordered not in self._by_value:
            table: dict[tuple[str, ...], tuple[str, Text]] = {}
            for key, text in self.members:
                table.setdefault(_value_key(text, ordered), (key, text))
            self._by_value[ordered] = table
        return self._by_value[ordered]


def _groups(texts: Mapping[str, str]) -> list[_Group]:
    by_skeleton: dict[tuple[str, ...], _Group] = {}
    for key, raw in texts.items():
        text = prepare(raw)
        if not text.skeleton:
            continue
        group = by_skeleton.setdefault(text.skeleton, _Group(text, []))
        group.members.append((key, text))
    return list(by_skeleton.values())


def _features(text: Text) -> set[str]:
    return {"w:" + w for w in text.words} | {"g:" + g for g in text.grams}


class _Index:
    """MinHash LSH over one prompt per skeleton, leaving out features most skeletons share."""

    def __init__(self, groups: list[_Group], common_from: Iterable[_Group]) -> None:
        from datasketch import MinHash, MinHashLSH

        df: Counter[str] = Counter()
        n = 0
        for group in common_from:
            df.update(_features(group.text))
            n += 1
        limit = max(_COMMON_FLOOR, _COMMON_SHARE * n)
        self._common = {f for f, c in df.items() if c > limit}
        # one initialised MinHash copied per text (its permutations are built once), hashing
        # with CRC-32: fast, and the same in every run, so a report is reproducible
        self._blank = MinHash(num_perm=_PERMUTATIONS, seed=1, hashfunc=zlib.crc32)
        self.lsh = MinHashLSH(threshold=_LSH_THRESHOLD, num_perm=_PERMUTATIONS)
        self.hashes = [self.hash(group.text) for group in groups]
        for i, h in enumerate(self.hashes):
            self.lsh.insert(i, h)

    def hash(self, text: Text) -> Any:
        features = _features(text)
        rare = features - self._common or features
        h = self._blank.copy()
        h.update_batch([f.encode() for f in rare])
        return h

    def query(self, h: Any) -> list[int]:
        return list(self.lsh.query(h))


def _star(members: list[tuple[str, Text]]) -> Iterable[tuple[str, Text, str, Text]]:
    """Pair each member with the first, so n copies make n - 1 pairs, not n^2 / 2."""
    (first, ft), *rest = members
    for key, text in rest:
        yield first, ft, key, text


def _value_key(text: Text, ordered: bool) -> tuple[str, ...]:
    values = text.numbers if text.has_numbers else (*text.numbers, "names:", *text.names)
    return tuple(values) if ordered else tuple(sorted(values))


def find_near_copies(
    texts: Mapping[str, str], threshold: float
) -> tuple[list[DuplicatePair], list[TemplateFamily]]:
    """Near-duplicate pairs and templated families among ``texts`` (id -> prompt)."""
    groups = _groups(texts)
    weights = Weights(g.text for g in groups)
    parent = list(range(len(groups)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    templated: set[int] = set()
    pairs: list[DuplicatePair] = []
    for gi, group in enumerate(groups):
        buckets: dict[tuple[str, ...], list[tuple[str, Text]]] = defaultdict(list)
        for key, text in group.members:
            buckets[_value_key(text, ordered=True)].append((key, text))
        for bucket in buckets.values():
            for a, at, b, bt in _star(bucket):
                pairs.append(
                    DuplicatePair(
                        a=a, b=b, similarity=1.0, method="lexical", edit=describe_edit(at, bt)
                    )
                )
        if len(buckets) > 1:
            templated.add(gi)
    index = _Index(groups, groups)
    for gi, group in enumerate(groups):
        for gj in index.query(index.hashes[gi]):
            if gj <= gi:
                continue
            other = groups[gj]
            score = similarity(group.text, other.text, weights)
            if score < threshold:
                continue
            mine, theirs = group.by_value(False), other.by_value(False)
            for value, (a, at) in mine.items():
                if value in theirs:
                    b, bt = theirs[value]
                    pairs.append(
                        DuplicatePair(
                            a=a,
                            b=b,
                            similarity=round(score, 3),
                            method="lexical",
                            edit=describe_edit(at, bt),
                        )
                    )
            if set(mine) != set(theirs) or len(mine) > 1:
                templated.update((gi, gj))
                parent[root(gi)] = root(gj)
    families: dict[int, list[int]] = defaultdict(list)
    for gi in templated:
        families[root(gi)].append(gi)
    out = []
    for members in families.values():
        largest = max(members, key=lambda g: len(groups[g].members))
        keys = sorted(k for g in members for k, _ in groups[g].members)
        if len(keys) > 1:
            out.append(TemplateFamily(template=groups[largest].text.template, members=keys))
    out.sort(key=lambda f: (-len(f.members), f.members[0]))
    return pairs, out


def find_leaks(
    items: Mapping[str, str], training: Mapping[str, str], threshold: float
) -> list[Leak]:
    """For each item, the training prompt it is a near copy of (or, failing one, a template
    instance of), when one scores ``threshold`` or more."""
    train_groups = _groups(training)
    item_groups = _groups(items)
    if not train_groups or not item_groups:
        return []
    weights = Weights([g.text for g in train_groups] + [g.text for g in item_groups])
    index = _Index(train_groups, train_groups + item_groups)
    leaks: list[Leak] = []
    for group in item_groups:
        candidates = []
        for gj in index.query(index.hash(group.text)):
            other = train_groups[gj]
            score = similarity(group.text, other.text, weights)
            if score >= threshold:
                candidates.append((score, gj))
        if not candidates:
            continue
        for key, text in group.members:
            best: tuple[int, float, str, Text] | None = None
            for score, gj in candidates:
                train = train_groups[gj]
                ordered = text.skeleton == train.text.skeleton
                match = train.by_value(ordered).get(_value_key(text, ordered))
                rank = 1 if match is not None else 0
                train_key, train_text = match or train.members[0]
                if best is None or (rank, score) > (best[0], best[1]):
                    best = (rank, score, train_key, train_text)
            assert best is not None
            rank, score, train_key, train_text = best
            leaks.append(
                Leak(
                    item=key,
                    nearest=train_key,
                    similarity=round(score, 3),
                    method="lexical",
                    match="duplicate" if rank else "template",
                    edit=describe_edit(text, train_text),
                )
            )
    return leaks
