"""The item audit: is a failure a real failure, or is the question (or its key) wrong?

Every check flags items with a reason a reviewer can act on:

* ``reference_fails`` / ``reference_unparseable``: the item's own reference, written as a
  response, fails its grader (or the grader cannot read the reference);
* ``rejects_equivalent``: a correct answer in another form (fraction/decimal, ``x = ...``, a
  reordered set, the canonical solution reformatted or renamed) is rejected;
* ``flaky``: the same response graded several times gets different verdicts;
* ``suspect_key``: most responses to an item agree on one answer, it is not the key, and the
  grader fails all of them (the key is more likely wrong than they are);
* ``low_discrimination``: across models, doing well on this item goes with doing badly on the rest
  (item-rest correlation near zero or negative);
* ``near_duplicate``: prompts that are one question asked twice: a synonym, reordered clauses, a
  changed name in a word problem (see ``_similar`` for the rule); prompts of one template with
  other numbers are reported as ``templates`` (families, not item flags: not a defect);
* ``paraphrase``: the same question in other words, by sentence embeddings (only when the
  semantic pass is asked for);
* ``answer_leak``: the reference appears in the prompt;
* ``accepts_any_output``, ``expects_no_output``, ``echo_passes``, ``expected_not_produced``,
  ``all_tests_visible``: stdin/stdout tests that a program printing junk, nothing or its own
  input passes, tests whose expected output the reference program does not produce, tests all
  shown to the model (see ``_stdio``);
* ``checker_fragile``: a special judge that crashed, was killed or stalled on the output of some
  probe program or response (see ``_stdio``);
* ``trivially_satisfied``: an instruction-following item whose constraints a one-word response
  or the prompt pasted back meets (see ``_instructions``);
* ``task_*``: a repository task whose claim does not hold when run: ``task_base_fails_f2p``,
  ``task_flaky``, ``task_gold_fails``... (see ``_repo`` and ``truegrade.graders.repo``);
* ``contaminated`` / ``template_in_training``: given a training set (``against``), an item that
  is a near copy of a training prompt, or an instance of a template the training set holds.

The audit calls the grader only through ``run_grader``, in batches, so it works for any grader.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from truegrade.attacks import infer_kind, is_rewarded, reference_response
from truegrade.audit import _instructions, _repo, _stdio
from truegrade.audit._equivalents import equivalent_responses
from truegrade.audit._similar import (
    DuplicatePair,
    Leak,
    TemplateFamily,
    Weights,
    find_leaks,
    find_near_copies,
    prepare,
    same_item,
    similarity,
)
from truegrade.core import Grade, Grader, Sample, SampleLike, run_grader, to_samples
from truegrade.graders.code import StdioTask, stdio_task

__all__ = ["CHECKS", "AuditFlag", "AuditItem", "AuditReport", "audit_items"]

#: The checks ``audit_items`` knows (its ``checks`` picks among them; all by default).
CHECKS = (
    "reference",
    "equivalents",
    "flaky",
    "suspect_key",
    "discrimination",
    "duplicates",
    "leak",
    "tests",
)


class AuditFlag(BaseModel):
    """One finding about an item."""

    name: str
    reason: str


class AuditItem(BaseModel):
    """An item and everything found about it."""

    id: str
    flags: list[AuditFlag] = Field(default_factory=list)


class SemanticPass(BaseModel):
    """How the paraphrase pass ran."""

    model: str
    threshold: float
    pairs: int


class AuditReport(BaseModel):
    """What ``truegrade audit`` found. Only flagged items are listed in ``items``."""

    schema_version: int = 2
    grader: dict[str, Any] | str
    kind: str
    items_total: int
    items_flagged: int
    by_flag: dict[str, int]
    checks: dict[str, str] = Field(description="Each check: 'ran', or why it was skipped.")
    items: list[AuditItem]
    duplicate_pairs: list[DuplicatePair] = Field(
        default_factory=list, description="Near-duplicate and paraphrase pairs, with scores."
    )
    templates: list[TemplateFamily] = Field(
        default_factory=list, description="Families of items that are one template."
    )
    leaks: list[Leak] = Field(
        default_factory=list, description="Items a training prompt matches (with `against`)."
    )
    semantic: SemanticPass | None = None

    def markdown(self) -> str:
        """A table of the flagged items, for a README or a pull request."""
        lines = [
            f"{self.items_flagged} of {self.items_total} items flagged "
            + (", ".join(f"{k}: {v}" for k, v in sorted(self.by_flag.items())) or ""),
        ]
        if self.semantic is not None:
            lines.append(
                f"(paraphrases by {self.semantic.model}, cosine >= {self.semantic.threshold:g}: "
                f"{_count(self.semantic.pairs, 'pair')})"
            )
        lines += ["", "| item | flag | reason |", "|---|---|---|"]
        for item in self.items:
            for flag in item.flags:
                reason = flag.reason.replace("|", "\\|").replace("\n", " ")
                lines.append(f"| {item.id} | {flag.name} | {reason} |")
        if self.templates:
            lines += ["", "| templated family | items | template |", "|---|---|---|"]
            for family in self.templates:
                template = family.template.replace("|", "\\|")
                lines.append(f"| {_members(family.members)} | {len(family.members)} | {template} |")
        return "\n".join(lines) + "\n"


def _members(ids: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def audit_items(
    grader: Grader,
    samples: Sequence[SampleLike],
    *,
    kind: str | None = None,
    checks: Sequence[str] = CHECKS,
    reruns: int = 3,
    threshold: float = 0.5,
    duplicate_threshold: float = 0.75,
    semantic: bool | str = False,
    semantic_threshold: float = 0.85,
    against: Sequence[SampleLike] | None = None,
    majority: float = 0.5,
    min_responses: int = 3,
    discrimination_floor: float = 0.1,
    batch_size: int = 512,
    progress: Callable[[int, int], None] | None = None,
) -> AuditReport:
    """Audit the items behind ``samples`` (rows sharing ``group`` are responses to one item).

    Args:
        grader: Any grader.
        samples: Rows: prompt and reference, optionally responses, labels and ``metadata.model``.
        kind: ``math``, ``code``, ``text`` or ``instructions`` (inferred when None).
        checks: Which checks to run (see ``CHECKS``).
        reruns: Gradings of each response for the flakiness check (at least 2 to check).
        threshold: A score above it counts as a pass when a grade has no verdict.
        duplicate_threshold: Lexical similarity (see ``_similar``) from which prompts match:
            as near duplicates when their numbers agree, as one template when they differ.
        semantic: Also look for paraphrases with a sentence-embedding model: True for the
            default model (the ``semantic`` extra), or a local model directory.
        semantic_threshold: Cosine similarity from which two prompts are paraphrases.
        against: A training set: report the items one of its prompts matches (leakage).
        majority: Share of responses that must agree for ``suspect_key``.
        min_responses: Fewest responses to an item for ``suspect_key``.
        discrimination_floor: Item-rest correlations below this are flagged.
    """
    unknown = set(checks) - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown checks {sorted(unknown)}; choose from {', '.join(CHECKS)}")
    embedder = None
    if semantic and ("duplicates" in checks or against is not None):
        from truegrade.audit._semantic import load_embedder

        # before any grading: a missing model stops the audit at once, not after the work
        embedder = load_embedder(None if semantic is True else str(semantic))
    rows = to_samples(samples)
    items: dict[str, Sample] = {}
    responses: dict[str, list[Sample]] = defaultdict(list)
    for row in rows:
        items.setdefault(row.item, row)
        if row.response is not None:
            responses[row.item].append(row)
    the_kind = kind or infer_kind(grader, list(items.values()))
    flags: dict[str, list[AuditFlag]] = defaultdict(list)
    ran: dict[str, str] = {}

    queue: list[Sample] = []
    tags: list[tuple[str, str, str]] = []  # (check, item id, detail)

    def add(check: str, item: str, detail: str, sample: Sample) -> None:
        queue.append(sample)
        tags.append((check, item, detail))

    if "reference" in checks or "equivalents" in checks:
        for item_id, item in items.items():
            control = reference_response(item, the_kind)
            if control is None:
                continue
            add(
                "reference",
                item_id,
                "",
                item.model_copy(
                    update={"id": f"{item_id}::reference", "response": control, "label": None}
                ),
            )
            if "equivalents" in checks:
                for name, form in equivalent_responses(item, the_kind):
                    add(
                        "equivalents",
                        item_id,
                        name,
                        item.model_copy(
                            update={
                                "id": f"{item_id}::equivalent::{name}",
                                "response": form,
                                "label": None,
                            }
                        ),
                    )

    def probe(item_id: str, item: Sample, name: str, response: str) -> None:
        update = {"id": f"{item_id}::probe::{name}", "response": response, "label": None}
        add("tests", item_id, name, item.model_copy(update=update))

    stdio: dict[str, StdioTask] = {}
    if "tests" in checks and the_kind == "instructions":
        for item_id, item in items.items():
            for name in _instructions.PROBES:
                probe(item_id, item, name, _instructions.probe_response(item, name))
    if "tests" in checks and the_kind == "code":
        for item_id, item in items.items():
            task = stdio_task(item)
            if task is not None:
                stdio[item_id] = task
                for name in _stdio.PROBES:
                    probe(item_id, item, name, _stdio.probe_response(task, name))
    runs = max(1, reruns if "flaky" in checks else 1)
    for item_id, group in responses.items():
        for row in group:
            for k in range(runs):
                add(
                    "response",
                    item_id,
                    f"{row.key}\x00{k}",
                    row.model_copy(update={"id": f"{row.key}::run::{k}"}),
                )
    grades: list[Grade] = []
    for start in range(0, len(queue), batch_size):
        grades.extend(run_grader(grader, queue[start : start + batch_size]))
        if progress is not None:
            progress(len(grades), len(queue))

    reference_ok: dict[str, bool] = {}
    response_grades: dict[str, list[Grade]] = defaultdict(list)
    probes: dict[str, dict[str, Grade]] = defaultdict(dict)
    for (check, item_id, detail), sample, grade in zip(tags, queue, grades, strict=True):
        if check == "reference":
            reference_ok[item_id] = _reference_flags(grade, threshold, flags[item_id])
            if item_id in stdio and "tests" in checks:
                for name, reason in _stdio.reference_flags(stdio[item_id], grade):
                    flags[item_id].append(AuditFlag(name=name, reason=reason))
        elif check == "tests":
            probes[item_id][detail] = grade
        elif check == "equivalents":
            if reference_ok.get(item_id) and not _passes(grade, threshold):
                why = grade.error or grade.explanation or "rejected"
                flags[item_id].append(
                    AuditFlag(
                        name="rejects_equivalent",
                        reason=f"rejects the reference written as {detail} "
                        f"({_short(sample.response_text)}): {why[:120]}",
                    )
                )
        else:
            response_grades[detail.split("\x00")[0]].append(grade)
    if "reference" in checks or "equivalents" in checks:
        ran["reference"] = "ran" if reference_ok else "skipped: no reference to write as an answer"
        if "equivalents" in checks:
            ran["equivalents"] = "ran" if reference_ok else "skipped: no reference control"
    if "reference" not in checks:
        for item_id in list(flags):
            flags[item_id] = [f for f in flags[item_id] if not f.name.startswith("reference")]

    first = {key: gs[0] for key, gs in response_grades.items()}
    if "flaky" in checks:
        ran["flaky"] = (
            f"ran ({runs} gradings per response)"
            if runs > 1 and response_grades
            else "skipped: needs responses and reruns >= 2"
        )
        if runs > 1:
            _flaky(responses, response_grades, flags)
    if "suspect_key" in checks:
        ran["suspect_key"] = _suspect_keys(
            items, responses, first, the_kind, threshold, majority, min_responses, flags
        )
    if "discrimination" in checks:
        ran["discrimination"] = _discrimination(responses, first, discrimination_floor, flags)
    similar = _Similar()
    if "duplicates" in checks:
        ran["duplicates"] = _duplicates(items, duplicate_threshold, flags, similar)
    if embedder is not None and "duplicates" in checks:
        ran["paraphrases"] = _paraphrases(items, embedder, semantic_threshold, flags, similar)
    elif semantic:
        ran["paraphrases"] = "skipped: needs the duplicates check"
    if against is not None:
        ran["leakage"] = _leakage(
            items, against, duplicate_threshold, embedder, semantic_threshold, flags, similar
        )
    if "leak" in checks:
        ran["leak"] = _leaks(items, the_kind, flags)
    if "tests" in checks and the_kind == "repo":
        for item_id, item in items.items():
            found = _repo.task_flags(grader, item, runs)
            flags[item_id] += [AuditFlag(name=name, reason=reason) for name, reason in found]
        ran["tests"] = (
            f"ran (each task's claim: base, empty and gold patches, {max(2, runs)} rotated runs,"
            " an impossible variant)"
        )
    elif "tests" in checks:
        answered = {
            item_id: [first[row.key] for row in group if row.key in first]
            for item_id, group in responses.items()
        }
        ran["tests"] = _probed(the_kind, items, stdio, probes, answered, threshold, flags)

    flagged = [
        AuditItem(id=item_id, flags=flags[item_id]) for item_id in items if flags.get(item_id)
    ]
    counts = Counter(f.name for item in flagged for f in item.flags)
    return AuditReport(
        grader=getattr(grader, "spec", None) or repr(grader),
        kind=the_kind,
        items_total=len(items),
        items_flagged=len(flagged),
        by_flag=dict(sorted(counts.items())),
        checks=ran,
        items=flagged,
        duplicate_pairs=similar.pairs,
        templates=similar.templates,
        leaks=similar.leaks,
        semantic=None
        if embedder is None
        else SemanticPass(
            model=embedder.name,
            threshold=semantic_threshold,
            pairs=sum(p.method == "semantic" for p in similar.pairs),
        ),
    )


def _probed(
    kind: str,
    items: dict[str, Sample],
    stdio: dict[str, StdioTask],
    probes: dict[str, dict[str, Grade]],
    answered: dict[str, list[Grade]],
    threshold: float,
    flags: dict[str, list[AuditFlag]],
) -> str:
    """Flags from the probe responses' grades (and, for a special judge that fails on some
    output, the item's responses'); what the check did."""
    if kind == "instructions":
        for item_id in items:
            found = _instructions.probe_flags(probes[item_id], threshold)
            flags[item_id] += [AuditFlag(name=name, reason=reason) for name, reason in found]
        return f"ran (a one-word response and the prompt echoed, on each of {len(items)} items)"
    if kind != "code":
        return "skipped: probes the tests of code and instruction-following items"
    for item_id, task in stdio.items():
        found = (
            _stdio.static_flags(task)
            + _stdio.probe_flags(task, probes[item_id])
            + _stdio.checker_flags(task, probes[item_id], answered.get(item_id, []))
        )
        flags[item_id] += [AuditFlag(name=name, reason=reason) for name, reason in found]
    if not stdio:
        return "skipped: no stdin/stdout items"
    return f"ran (3 probe programs on each of {len(stdio)} stdin/stdout items)"


def _passes(grade: Grade, threshold: float) -> bool:
    return is_rewarded(grade, threshold)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _reference_flags(grade: Grade, threshold: float, out: list[AuditFlag]) -> bool:
    """Flag a reference the grader cannot read or does not accept; True when it passes."""
    if grade.error is not None:
        if {"bad_reference", "parse_error"} & set(grade.flags) or "reference" in grade.error:
            out.append(AuditFlag(name="reference_unparseable", reason=grade.error[:200]))
        else:
            out.append(
                AuditFlag(
                    name="reference_fails",
                    reason=f"grading the reference failed: {grade.error[:160]}",
                )
            )
        return False
    if not _passes(grade, threshold):
        why = grade.explanation or ", ".join(grade.flags) or f"score {grade.score:g}"
        out.append(
            AuditFlag(
                name="reference_fails",
                reason=f"the reference, given as the answer, fails: {why[:160]}",
            )
        )
        return False
    return True


def _verdict(grade: Grade) -> tuple[Any, ...]:
    return (grade.error is None, grade.passed, round(grade.score, 6))


def _flaky(
    responses: dict[str, list[Sample]],
    grades: dict[str, list[Grade]],
    flags: dict[str, list[AuditFlag]],
) -> None:
    for item_id, group in responses.items():
        for row in group:
            runs = grades.get(row.key, [])
            seen = [_verdict(g) for g in runs]
            if len(set(seen)) > 1:
                scores = ", ".join(
                    f"{g.score:g}" + ("" if g.error is None else " (error)") for g in runs
                )
                flags[item_id].append(
                    AuditFlag(
                        name="flaky",
                        reason=f"response {row.key} got different grades in {len(runs)} runs: "
                        f"{scores}",
                    )
                )
                break


def _answer_of(sample: Sample) -> str | None:
    from truegrade.graders import final_answers
    from truegrade.graders.math import normalize_answer

    statements = final_answers(sample.response_text).statements
    if not statements:
        return None
    return re.sub(r"\s+", "", normalize_answer(statements[-1]).core) or None


def _suspect_keys(
    items: dict[str, Sample],
    responses: dict[str, list[Sample]],
    first: dict[str, Grade],
    kind: str,
    threshold: float,
    majority: float,
    min_responses: int,
    flags: dict[str, list[AuditFlag]],
) -> str:
    if kind != "math":
        return f"skipped: compares final answers, not available for {kind} items"
    checked = 0
    for item_id, group in responses.items():
        if len(group) < min_responses:
            continue
        checked += 1
        answers = {row.key: _answer_of(row) for row in group}
        counts = Counter(a for a in answers.values() if a)
        if not counts:
            continue
        modal, count = counts.most_common(1)[0]
        if count / len(group) <= majority or count < min_responses:
            continue
        backing = [row for row in group if answers[row.key] == modal]
        if any(_passes(first[row.key], threshold) for row in backing if row.key in first):
            continue
        key = items[item_id].reference
        flags[item_id].append(
            AuditFlag(
                name="suspect_key",
                reason=f"{count} of {len(group)} responses answer {modal!r}, the key is {key!r}, "
                f"and the grader fails all {count}",
            )
        )
    if not checked:
        return f"skipped: no item has {min_responses}+ responses (rows sharing 'group')"
    return "ran"


def _discrimination(
    responses: dict[str, list[Sample]],
    first: dict[str, Grade],
    floor: float,
    flags: dict[str, list[AuditFlag]],
) -> str:
    table: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for item_id, group in responses.items():
        for row in group:
            model = row.metadata.get("model")
            if model is not None and row.key in first and first[row.key].error is None:
                table[str(model)][item_id].append(first[row.key].score)
    models = sorted(table)
    if len(models) < 3:
        return "skipped: needs responses from 3+ models (metadata.model)"
    item_ids = sorted({i for m in models for i in table[m]})
    means = {m: {i: sum(v) / len(v) for i, v in table[m].items()} for m in models}
    for item_id in item_ids:
        xs, ys = [], []
        for m in models:
            if item_id not in means[m]:
                continue
            rest = [v for i, v in means[m].items() if i != item_id]
            if not rest:
                continue
            xs.append(means[m][item_id])
            ys.append(sum(rest) / len(rest))
        r = _pearson(xs, ys)
        if r is not None and r < floor:
            flags[item_id].append(
                AuditFlag(
                    name="low_discrimination",
                    reason=f"item-rest correlation {r:+.2f} across {len(xs)} models: models that "
                    "do well elsewhere do not do better here",
                )
            )
    return "ran"


def _pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / math.sqrt(sxx * syy)


def _word_triples(text: str) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i : i + 3]) for i in range(max(1, len(words) - 2))}


_SHARED_TEXT = 0.5
"""Lexical similarity from which a semantic match is left to the lexical pass's judgement."""


class _Similar:
    """What the similarity checks found, for the report."""

    def __init__(self) -> None:
        self.pairs: list[DuplicatePair] = []
        self.templates: list[TemplateFamily] = []
        self.leaks: list[Leak] = []


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _prompts(items: dict[str, Sample]) -> dict[str, str]:
    return {i: s.prompt_text for i, s in items.items() if s.prompt_text.strip()}


def _flag_pairs(
    pairs: Sequence[DuplicatePair], name: str, what: str, flags: dict[str, list[AuditFlag]]
) -> None:
    """One flag per item, naming its matches (the closest first, at most five)."""
    matches: dict[str, list[tuple[float, str, str]]] = defaultdict(list)
    for p in pairs:
        matches[p.a].append((p.similarity, p.b, p.edit))
        matches[p.b].append((p.similarity, p.a, p.edit))
    for item_id, found in matches.items():
        found.sort(key=lambda m: (-m[0], m[1]))
        shown = "; ".join(f"{other} ({score:.2f}, {edit})" for score, other, edit in found[:5])
        more = f"; and {len(found) - 5} more" if len(found) > 5 else ""
        flags[item_id].append(AuditFlag(name=name, reason=f"{what} {shown}{more}"))


def _duplicates(
    items: dict[str, Sample],
    threshold: float,
    flags: dict[str, list[AuditFlag]],
    similar: _Similar,
) -> str:
    prompts = _prompts(items)
    if len(prompts) < 2:
        return "skipped: fewer than two prompts"
    pairs, similar.templates = find_near_copies(prompts, threshold)
    similar.pairs.extend(pairs)
    _flag_pairs(pairs, "near_duplicate", "the same question as", flags)
    in_templates = sum(len(f.members) for f in similar.templates)
    return (
        f"ran (similarity >= {threshold:g}): {_count(len(pairs), 'near-duplicate pair')}, "
        f"{_count(len(similar.templates), 'templated family', 'templated families')} "
        f"({_count(in_templates, 'item')})"
    )


def _clusters(similar: _Similar) -> dict[str, str]:
    """Each item's representative among the items the lexical pass linked (as near copies or
    as one template)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for pair in similar.pairs:
        parent[root(pair.a)] = root(pair.b)
    for family in similar.templates:
        for member in family.members[1:]:
            parent[root(member)] = root(family.members[0])
    return {x: root(x) for x in list(parent)}


def _paraphrases(
    items: dict[str, Sample],
    embedder: Any,
    threshold: float,
    flags: dict[str, list[AuditFlag]],
    similar: _Similar,
) -> str:
    from truegrade.audit._semantic import close_pairs

    prompts = _prompts(items)
    ids = list(prompts)
    texts = {i: prepare(prompts[i]) for i in ids}
    weights = Weights(texts.values())
    cluster = _clusters(similar)
    candidates: list[tuple[str, str, float]] = []
    shared: dict[frozenset[str], float] = defaultdict(float)
    for i, j, score in close_pairs(embedder.encode([prompts[i] for i in ids]), threshold):
        a, b = ids[i], ids[j]
        ca, cb = cluster.get(a, a), cluster.get(b, b)
        if ca == cb:
            continue  # the lexical pass already matched them, directly or through others
        if not same_item(texts[a], texts[b]):
            continue  # other numbers: another instance of a template, not the same question
        key = frozenset((ca, cb))
        shared[key] = max(shared[key], similarity(texts[a], texts[b], weights))
        candidates.append((a, b, score))
    found = [
        DuplicatePair(a=a, b=b, similarity=round(score, 3), method="semantic", edit="other words")
        for a, b, score in candidates
        # when the two (or copies of them) share most of their words and the lexical pass found
        # no copy, the words they do not share change the question: two questions on a passage
        if shared[frozenset((cluster.get(a, a), cluster.get(b, b)))] < _SHARED_TEXT
    ]
    similar.pairs.extend(found)
    _flag_pairs(found, "paraphrase", "the same question in other words as", flags)
    return (
        f"ran ({embedder.name}, cosine >= {threshold:g}): {_count(len(found), 'paraphrase pair')}"
    )


def _leakage(
    items: dict[str, Sample],
    against: Sequence[SampleLike],
    threshold: float,
    embedder: Any,
    semantic_threshold: float,
    flags: dict[str, list[AuditFlag]],
    similar: _Similar,
) -> str:
    training: dict[str, str] = {}
    for row in to_samples(against):
        if row.prompt_text.strip():
            training.setdefault(row.group or row.key, row.prompt_text)
    prompts = _prompts(items)
    leaks = {leak.item: leak for leak in find_leaks(prompts, training, threshold)}
    if embedder is not None and training:
        from truegrade.audit._semantic import nearest

        open_ids = [i for i in prompts if i not in leaks or leaks[i].match != "duplicate"]
        train_ids = list(training)
        vectors = embedder.encode([prompts[i] for i in open_ids])
        best, scores = nearest(vectors, embedder.encode([training[t] for t in train_ids]))
        for item_id, k, score in zip(open_ids, best, scores, strict=True):
            other = train_ids[k]
            if score >= semantic_threshold and same_item(
                prepare(prompts[item_id]), prepare(training[other])
            ):
                leaks[item_id] = Leak(
                    item=item_id,
                    nearest=other,
                    similarity=round(score, 3),
                    method="semantic",
                    match="duplicate",
                    edit="other words",
                )
    similar.leaks = [leaks[i] for i in prompts if i in leaks]
    for leak in similar.leaks:
        how = f"{leak.similarity:.2f} {leak.method}, {leak.edit}"
        if leak.match == "duplicate":
            flags[leak.item].append(
                AuditFlag(
                    name="contaminated",
                    reason=f"the training set asks the same question: {leak.nearest} ({how})",
                )
            )
        else:
            flags[leak.item].append(
                AuditFlag(
                    name="template_in_training",
                    reason=f"the training set holds this template with other values: "
                    f"{leak.nearest} ({how})",
                )
            )
    copies = sum(leak.match == "duplicate" for leak in similar.leaks)
    return (
        f"ran against {_count(len(training), 'training prompt')}: "
        f"{_count(copies, 'contaminated item')}, "
        f"{_count(len(similar.leaks) - copies, 'item')} from a template the training set holds"
    )


def _leaks(items: dict[str, Sample], kind: str, flags: dict[str, list[AuditFlag]]) -> str:
    from truegrade.graders.math import normalize_answer

    for item_id, item in items.items():
        prompt = item.prompt_text
        ref: Any = item.reference
        if not prompt or ref is None:
            continue
        if kind == "code":
            solution = item.metadata.get("canonical_solution")
            body = [ln.strip() for ln in str(solution or "").splitlines() if len(ln.strip()) > 12]
            if len(body) >= 2 and all(line in prompt for line in body):
                flags[item_id].append(
                    AuditFlag(
                        name="answer_leak",
                        reason="the canonical solution's lines are in the prompt",
                    )
                )
            continue
        text = ref if isinstance(ref, str) else str(ref)
        if kind == "math":
            core = re.sub(r"\s+", "", normalize_answer(text).core)
            trivial = core.isdigit() and len(core) < 3
            spaced = r"\s*".join(re.escape(ch) for ch in core[:80])
            if len(core) >= 2 and not trivial and re.search(rf"(?<![\w.]){spaced}(?![\w])", prompt):
                flags[item_id].append(
                    AuditFlag(
                        name="answer_leak", reason=f"the answer {core!r} appears in the prompt"
                    )
                )
        elif len(text) >= 20:
            ref_grams = _word_triples(text)
            overlap = len(ref_grams & _word_triples(prompt)) / max(1, len(ref_grams))
            if overlap >= 0.5:
                flags[item_id].append(
                    AuditFlag(
                        name="answer_leak",
                        reason=f"{overlap:.0%} of the reference's word triples are in the prompt",
                    )
                )
    return "ran"
